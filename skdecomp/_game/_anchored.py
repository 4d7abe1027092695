"""Anchored statistics: row and column means of the N x N anchored matrices.

With the N rows of a sample used both as explained points and as background
(B = D), the anchored matrix of a column set C is

    G_C[n, m] = f(x^n_C, x^m_{-C}) - f(x^m).

Its row means are the local PDP effects of C and its column means minus the
local PFI effects (Laberge et al., AISTATS 2024). The AGREED loss, Friedman's
H-statistics and the cost of exclusion need nothing else, so only those
means are kept: O(K N) floats for K groups. The N x N blocks exist only while
they are reduced, a chunk of coalitions at a time within one memory budget
(scikit-learn's ``working_memory`` unless given). Tree ensembles give the sums
exactly from their leaves, without model calls and without any N x N block.
"""

# SPDX-License-Identifier: BSD-3-Clause

import itertools

import numpy as np
import pandas as pd
from sklearn.utils.parallel import Parallel, delayed

from .._config import MAX_MASK_GROUPS, format_bytes, kernel_block_cells, parse_memory
from .._table import Table, column_masks, common_dtypes
from .._tree import anchored_sums_tree, tree_group_matrices
from ._game import run_blocks
from ._kernels import anchored_means, interaction_potentials, pair_interaction_strengths

__all__ = ["AnchoredStatistics", "ImageStatistics", "agreement_score", "column_pair_price"]

# Up to this many columns the price of a column pair is group_penalty; on
# wider tables it falls as 1 / n_columns (see column_pair_price).
PRICE_WIDTH = 20


def column_pair_price(group_penalty, n_columns):
    """The price of one column pair joined, as a share of the output variance.

    ``group_penalty * min(1, PRICE_WIDTH / n_columns)``. The interactions a
    fitted model learns by chance are shared out among each column's
    ``n_columns - 1`` partners, so the gain of merging a pair that does not
    truly interact falls as the table widens, while that of a true pair term
    does not; a price that falls as ``1 / n_columns`` beyond ``PRICE_WIDTH``
    columns keeps the same margin over the chance gains (measured on tables
    of 68 and 136 columns in ``benchmarks/bench_wide_pairs.py``).
    """
    return group_penalty * min(1.0, PRICE_WIDTH / max(int(n_columns), 1))

# Group ids available in one int64 bitmask; id _NEVER marks columns always
# taken from the anchor row (bit 63 is never set in a non-negative mask).
def _less_noise(quadratic, *stats):
    """``quadratic`` of the means, less the same of the gaps between halves.

    Each of ``stats`` is ``(rows, cols)`` or the four arrays of
    :meth:`AnchoredStatistics.union_stats`; ``quadratic`` takes the pairs of
    arrays in turn and returns an array or a tuple of arrays. For any
    statistic that is a square of a linear one, the difference is an unbiased
    estimate of it (see :meth:`AnchoredStatistics._game_means`).
    """
    out = quadratic(*(x for st in stats for x in st[:2]))
    if len(stats[0]) == 2:
        return out
    noise = quadratic(*(x for st in stats for x in st[2:]))
    if isinstance(out, tuple):
        return tuple(a - b for a, b in zip(out, noise))
    return out - noise


def _row_terms(rows, cols):
    return ((rows + cols) ** 2).sum(axis=1)


def _interactions(r_first, c_first, r_second, c_second, r_union, c_union):
    r_int = r_union - r_first - r_second
    c_int = c_union - c_first - c_second
    return (r_int**2).mean(axis=-1).sum(axis=-1) + (c_int**2).mean(axis=-1).sum(axis=-1)


_MAX_IDS = 63
_NEVER = 63

# Hybrid rows evaluated at most for the anchored Shapley values off the tree path.
_MAX_SHAPLEY_HYBRIDS = 1 << 22


class AnchoredStatistics:
    """Row and column means of anchored matrices on a sample of rows.

    Parameters
    ----------
    game : CoalitionGame
        The model response, input form, parallelism and tree back end.
    sample : ndarray or DataFrame of shape (N, n_features)
        The N rows, explained points and background at once.
    max_memory : int, str or None, default=None
        Bytes of anchored values held at once; None uses scikit-learn's
        ``working_memory``.
    anchor_values : ndarray of shape (N, n_outputs) or None, default=None
        f at the sample rows, when already known.
    what : str, default="the sample"
        Name of the sample in error messages.
    split : bool, default=True
        When the values are means over draws, split the draws in two
        independent halves and centre the effects on the sample (see
        :meth:`union_stats`); False gives plain means over all draws.

    Attributes
    ----------
    n_rows : int
        N.
    n_outputs : int
    anchor_values : ndarray of shape (N, n_outputs)
        f at the sample rows.
    model_calls : int
        Rows sent to the model so far.
    """

    def __init__(self, game, sample, *, max_memory=None, anchor_values=None,
                 what="the sample", split=True):
        self.game = game
        # the trees give anchored sums of the marginal game only
        self.tree = game.tree if game.anchored else None
        if isinstance(sample, pd.DataFrame) and game.frame:
            self.table = Table(sample, common_dtypes(game.dtypes, sample))
        else:
            self.table = Table(sample)
        self.sample = sample
        self.n_features = game.n_features
        if anchor_values is None:
            anchor_values = game.predict(sample, what=what)
        self.anchor_values = np.ascontiguousarray(anchor_values, dtype=np.float64)
        self.n_rows, self.n_outputs = self.anchor_values.shape
        self.model_calls = self.n_rows
        # values that are means over draws carry the draws' noise, which
        # squares turn into a bias; two independent halves of the draws
        # remove it (see _game_means)
        self.halves = None
        imputer = game.imputer
        if (split and not game.anchored and getattr(imputer, "n_draws", 0) >= 2
                and hasattr(imputer, "halves")):
            self.halves = [game.with_imputer(h) for h in imputer.halves()]
        if self.tree is not None or not game.anchored:
            # the tree kernel sums over rows and columns as it goes: no N x N
            # block; its masks hold at most MAX_MASK_GROUPS group ids, one of
            # them for the columns never taken from x and one for the base
            self.masks_per_chunk = MAX_MASK_GROUPS - 2
            return
        budget = parse_memory(max_memory)
        block = self.n_rows**2 * self.n_outputs * 8
        self.masks_per_chunk = int(budget // block)
        if self.masks_per_chunk < 1:
            raise ValueError(
                f"One N x N block of anchored values needs {format_bytes(block)} "
                f"(N={self.n_rows} sample rows, {self.n_outputs} output(s)), more "
                f"than max_memory={format_bytes(int(budget))}. Lower max_samples "
                "or raise max_memory (or sklearn's working_memory)."
            )
        self.masks_per_chunk = min(self.masks_per_chunk, _MAX_IDS - 1)

    @property
    def n_stats(self):
        """Arrays per statistic: 2 (means), or 4 with the gaps between halves."""
        return 2 if self.halves is None else 4

    @property
    def variance(self):
        """Variance of the model output over the sample, summed over outputs."""
        return float(self.anchor_values.var(axis=0).sum())

    def _game_means(self, labels, masks):
        """The means from coalition values, for any imputation.

        The row mean of the anchored matrix of a column set C at x^n is
        ``v(C) - v({})`` and its column mean ``v(-C) - f(x^n)`` for the marginal
        game with the sample as background; the same expressions define
        the PDP and PFI effects, and their gap, under any other imputation.
        """
        cmask = column_masks(masks, labels)
        coalitions = np.concatenate([cmask, ~cmask])
        n_masks = cmask.shape[0]
        out = []
        for game in self.halves or [self.game]:
            values = game.values(
                self.table, coalitions, prediction=self.anchor_values,
                labels=np.arange(self.n_features, dtype=np.int64),
            )  # (N, 2 n_masks, n_outputs)
            self.model_calls += self.n_rows * 2 * n_masks * getattr(
                game.imputer, "n_draws", 0
            )
            rows = values[:, :n_masks] - self.game.expected_value[None, None, :]
            cols = values[:, n_masks:] - self.anchor_values[:, None, :]
            out.append((np.transpose(rows, (1, 2, 0)), np.transpose(cols, (1, 2, 0))))
        if self.halves is None:
            return out[0]
        # the mean of all draws, and the gap between the halves scaled to the
        # same noise: for any linear statistic L, L(mean)**2 - L(gap)**2 is
        # the product of its two halves, an unbiased estimate of its square
        na, nb = (game.imputer.n_draws for game in self.halves)
        wa, wb, k = na / (na + nb), nb / (na + nb), np.sqrt(na * nb) / (na + nb)
        (ra, ca), (rb, cb) = out
        stats = (wa * ra + wb * rb, wa * ca + wb * cb, k * (ra - rb), k * (ca - cb))
        # the draws come from the sampler's distribution, not the sample's:
        # the effects are centred on the sample, as they are in the population
        return tuple(x - x.mean(axis=-1, keepdims=True) for x in stats)

    def _means(self, labels, masks):
        """Row and column means for bitmasks over ``labels`` (one chunk)."""
        if not self.game.anchored:
            return self._game_means(labels, masks)
        if self.tree is not None:
            r, c = anchored_sums_tree(
                self.tree, self.table, self.table, labels, masks, n_jobs=self.game.n_jobs
            )
            r = r / self.n_rows - self.anchor_values.mean(axis=0)[None, :, None]
            c = c / self.n_rows - self.anchor_values.T[None, :, :]
            return r, c
        values = self.game.hybrid_predictions(
            self.table, masks, labels=labels, background=self.table,
            row_names=("sample row", "sample row"),
        )
        self.model_calls += values.shape[0] * values.shape[1] * values.shape[2]
        return anchored_means(np.ascontiguousarray(values), self.anchor_values)

    def union_means(self, base, parts):
        """Means of the matrices of ``base ∪ part`` for every part.

        Parameters
        ----------
        base : ndarray of int
            Columns always taken from x (may be empty).
        parts : list of ndarray of int
            Column sets, disjoint from each other and from base.

        Returns
        -------
        rows, cols : ndarray of shape (len(parts), n_outputs, N)
        """
        return self.union_stats(base, parts)[:2]

    def union_stats(self, base, parts):
        """The statistics of ``base ∪ part`` for every part, for squares.

        ``(rows, cols)`` of :meth:`union_means`; when the values are means
        over draws (the conditional game), also ``(row_gaps, col_gaps)``,
        the gaps between two independent halves of the draws, scaled to the
        noise of the means: :meth:`potentials_from`,
        :meth:`interactions_from` and :meth:`row_terms` subtract the squares
        of the gaps from those of the means, which removes the draws' noise
        from the squares (its bias) on average. The conditional effects are
        then centred on the sample, as they are on the data (the mean of
        ``v(S)`` over the data is ``v({})``): the noise of ``v({})``, a mean
        over draws too, would otherwise add to every group's loss.

        Parameters
        ----------
        base : ndarray of int
            Columns always taken from x (may be empty).
        parts : list of ndarray of int
            Column sets, disjoint from each other and from base.

        Returns
        -------
        stats : tuple of 2 or 4 ndarray of shape (len(parts), n_outputs, N)
        """
        chunks = []
        step = self.masks_per_chunk
        for start in range(0, len(parts), step):
            chunk = parts[start : start + step]
            labels = np.full(self.n_features, _NEVER, dtype=np.int64)
            labels[np.asarray(base, dtype=np.int64)] = 0
            for t, part in enumerate(chunk):
                labels[np.asarray(part, dtype=np.int64)] = 1 + t
            base_bit = 1 if len(base) else 0
            masks = np.array(
                [base_bit | (1 << (1 + t)) for t in range(len(chunk))], dtype=np.int64
            )
            if self.tree is not None:
                labels[labels == _NEVER] = len(chunk) + 1
            chunks.append(self._means(labels, masks))
        if not chunks:
            return tuple(np.zeros((0, self.n_outputs, self.n_rows))
                         for _ in range(self.n_stats))
        return tuple(np.concatenate(part) for part in zip(*chunks))

    def matrices(self, masks):
        """The anchored matrices of coalitions of the game's groups.

        ``G[k, n, m] = f(x^n_{G_S}, x^m_{-G_S}) - f(x^m)`` for every bitmask
        S of ``masks``, with the diagonal exactly 0. This holds
        ``len(masks) * N * N`` values; the statistics above never do.

        Parameters
        ----------
        masks : ndarray of int64
            Coalitions of the game's groups as bitmasks.

        Returns
        -------
        G : ndarray of shape (n_masks, N, N, n_outputs)
        """
        values = self.game.hybrid_predictions(
            self.table, masks, background=self.table,
            row_names=("sample row", "sample row"),
        )
        self.model_calls += values.size // self.n_outputs
        G = np.moveaxis(values, 1, 0) - self.anchor_values[None, None, :, :]
        idx = np.arange(self.n_rows)
        G[:, idx, idx, :] = 0.0
        return G

    def _labels(self, groups):
        """Group of every column; ``len(groups)`` for columns of no group."""
        labels = np.full(self.n_features, len(groups), dtype=np.int64)
        for k, g in enumerate(groups):
            labels[np.asarray(g, dtype=np.int64)] = k
        return labels

    def group_matrices(self, groups):
        """The full anchored N x N matrix of every group.

        ``G[k, o, n, m] = f(x^n_{G_k}, x^m_{-G_k})[o] - f(x^m)[o]``, with the
        diagonal exactly 0. Unlike the means above, this holds
        ``K * n_outputs * N**2`` floats, so that the means over any subset of
        rows (both as explained points and as background) are sub-block
        means, as regional explanations need. Tree ensembles give it from
        their leaves, without model calls.

        Parameters
        ----------
        groups : list of array-like of int
            Disjoint column sets.

        Returns
        -------
        G : ndarray of shape (len(groups), n_outputs, N, N)
        """
        K, N, labels = len(groups), self.n_rows, self._labels(groups)
        if self.tree is not None:
            Xm = self.tree.prepare(self.table)
            col_group = self.tree.column_groups(labels)
            return tree_group_matrices(self.tree, Xm, col_group, K)
        else:
            G = np.empty((K, self.n_outputs, N, N))
            masks = np.left_shift(np.int64(1), np.arange(K, dtype=np.int64))
            step = max(1, self.masks_per_chunk)
            for start in range(0, K, step):
                values = self.game.hybrid_predictions(
                    self.table, masks[start : start + step], labels=labels,
                    background=self.table, row_names=("sample row", "sample row"),
                )  # (N, n_masks, N, n_outputs)
                self.model_calls += values.shape[0] * values.shape[1] * values.shape[2]
                G[start : start + step] = np.transpose(values, (1, 3, 0, 2)) - (
                    self.anchor_values.T[None, :, None, :]
                )
        idx = np.arange(N)
        G[:, :, idx, idx] = 0.0
        return G

    def _row_table(self, m):
        sample = self.sample
        row = sample.iloc[[m]] if isinstance(sample, pd.DataFrame) else sample[[m]]
        if isinstance(row, pd.DataFrame) and self.game.frame:
            return Table(row, common_dtypes(self.game.dtypes, row))
        return Table(row)

    def shapley_matrices(self, groups):
        """Anchored Shapley values of every group for every pair of sample rows.

        ``Phi[k, o, n, m]`` is the Shapley value of group k at x^n with the
        single background row x^m (the game ``S -> f(x^n_{G_S},
        x^m_{-G_S})``); its row means are the interventional SHAP values with
        the sample as background. The tree path reads them from the leaves,
        one background row at a time; otherwise all 2**K coalitions are
        evaluated for every pair of rows.

        Parameters
        ----------
        groups : list of array-like of int
            Disjoint column sets covering every column.

        Returns
        -------
        Phi : ndarray of shape (len(groups), n_outputs, N, N)
        """
        from math import factorial

        from .._config import MAX_EXACT_GROUPS

        K, N, labels = len(groups), self.n_rows, self._labels(groups)
        if np.any(labels == K):
            raise ValueError("The groups must cover every column.")
        Phi = np.empty((K, self.n_outputs, N, N))
        if self.tree is not None:
            from .._tree import tree_attributions

            w = np.zeros(K + 1)
            w[1:] = 1.0 / np.arange(1, K + 1)
            for m in range(N):
                phi = tree_attributions(
                    self.tree, self.table, self._row_table(m), labels, K,
                    {"shapley": w}, n_jobs=self.game.n_jobs,
                )["shapley"]  # (N, n_outputs, K)
                Phi[:, :, :, m] = np.transpose(phi, (2, 1, 0))
            return Phi
        n_hybrids = N * N * (1 << min(K, 62))
        if K > MAX_EXACT_GROUPS or n_hybrids > _MAX_SHAPLEY_HYBRIDS:
            raise ValueError(
                f"Anchored Shapley values of {K} groups on {N} rows evaluate the "
                f"model on N**2 * 2**K = {n_hybrids:.3g} hybrid rows off the tree "
                f"path, more than the limit of {_MAX_SHAPLEY_HYBRIDS} (and exact "
                f"enumeration allows at most {MAX_EXACT_GROUPS} groups); use fewer "
                "rows or groups, a tree model (exact from its leaves), or a loss "
                "that needs single groups only."
            )
        masks = np.arange(1 << K, dtype=np.int64)
        values = self.game.hybrid_predictions(
            self.table, masks, labels=labels, background=self.table,
            row_names=("sample row", "sample row"),
        )  # (N, 2**K, N, n_outputs)
        self.model_calls += values.shape[0] * values.shape[1] * values.shape[2]
        sizes = np.array([int(s).bit_count() for s in masks])
        # phi_k = sum over S without k of |S|! (K - |S| - 1)! / K! [v(S + k) - v(S)]
        coef = np.array([factorial(s) * factorial(K - s - 1) / factorial(K)
                         if s < K else 0.0 for s in sizes])
        for k in range(K):
            without = masks[((masks >> k) & 1) == 0]
            gain = values[:, without | (1 << k)] - values[:, without]  # (N, S, N, O)
            Phi[k] = np.einsum("nsmo,s->onm", gain, coef[without])
        return Phi

    def group_means(self, groups):
        """Row and column means of the matrix of every group.

        Parameters
        ----------
        groups : list of array-like of int
            Disjoint column sets.

        Returns
        -------
        rows, cols : ndarray of shape (len(groups), n_outputs, N)
        """
        return self.group_stats(groups)[:2]

    def group_stats(self, groups):
        """:meth:`union_stats` of every group (for squares).

        Parameters
        ----------
        groups : list of array-like of int
            Disjoint column sets.

        Returns
        -------
        stats : tuple of 2 or 4 ndarray of shape (len(groups), n_outputs, N)
        """
        return self.union_stats(
            np.zeros(0, dtype=np.int64), [np.asarray(g, dtype=np.int64) for g in groups]
        )

    def potentials(self, groups):
        """Interaction potential Psi_k of every group, summed over outputs.

        ``Psi_k = mean_n (G_k.mean(1)[n] + G_k.mean(0)[n])**2``, the mean
        squared gap between the group's PDP and PFI effects.

        Parameters
        ----------
        groups : list of array-like of int

        Returns
        -------
        psi : ndarray of shape (len(groups),)
        """
        return self.potentials_from(self.group_stats(groups))

    def loss(self, groups):
        """AGREED loss ``sum_k Psi_k`` of a partition.

        Parameters
        ----------
        groups : list of array-like of int

        Returns
        -------
        loss : float
        """
        return float(self.potentials(groups).sum())

    def agreement_score(self, groups, group_penalty):
        """Agreement of a partition against its coarseness; higher is better.

        ``-L / Var(f) - c * P``, with L the AGREED loss of the groups,
        Var(f) the variance of the model output on the sample, P the number
        of pairs of columns that share a group and c the price of a column
        pair, ``column_pair_price(group_penalty, d)`` for d columns
        (``group_penalty`` up to 20 columns). A merge of groups of a and b
        columns raises the score iff it lowers ``L / Var(f)`` by more than
        ``c * a * b``.

        Parameters
        ----------
        groups : list of array-like of int
        group_penalty : float

        Returns
        -------
        score : float
        """
        var = self.variance
        loss = self.loss(groups)
        share = loss / var if var > 0 else 0.0
        pairs = sum(len(g) * (len(g) - 1) // 2 for g in groups)
        price = column_pair_price(group_penalty, sum(len(g) for g in groups))
        return float(-share - price * pairs)

    def pair_strengths(self, groups, rows=None, cols=None):
        """Interaction strengths of every pair of groups.

        With ``I_jk = G_{j u k} - G_j - G_k``: ``pure`` is the mean square
        of its row means (E[F_jk**2]), ``full`` of its column means (every
        component that holds both groups), and ``joint`` the mean square of
        the row means of ``G_{j u k}`` (E[PD_jk**2]).

        Parameters
        ----------
        groups : list of array-like of int
            Disjoint column sets.
        rows, cols : ndarray of shape (K, n_outputs, N) or None
            Means of the single groups, when already known.

        Returns
        -------
        pairs : ndarray of shape (n_pairs, 2)
            The pairs (j, k), j < k, in lexicographic order (see
            :meth:`pair_stats`).
        pure, full, joint : ndarray of shape (n_pairs,)
            The three strengths of every pair, summed over outputs.
        """
        if rows is not None and cols is not None and self.halves is None:
            singles = (rows, cols)
        else:
            singles = self.group_stats(groups)
        pairs, unions = self.pair_stats(groups)
        pure, full, joint = _less_noise(
            lambda r, c, pr, pc: pair_interaction_strengths(r, c, pr, pc, pairs),
            singles, unions,
        )
        return pairs, pure, full, joint

    def pair_means(self, groups, progress=None):
        """``(pairs, rows, cols)``: the means of :meth:`pair_stats` alone."""
        pairs, stats = self.pair_stats(groups, progress=progress)
        return pairs, stats[0], stats[1]

    def pair_stats(self, groups, progress=None):
        """:meth:`union_stats` of the union of every pair of groups.

        Parameters
        ----------
        groups : list of array-like of int
            Disjoint column sets.
        progress : object or None, default=None
            Its ``update(1)`` is called after the pairs of each group.

        Returns
        -------
        pairs : ndarray of shape (n_pairs, 2)
            The pairs (j, k), j < k, in lexicographic order.
        stats : tuple of 2 or 4 ndarray of shape (n_pairs, n_outputs, N)
        """
        groups = [np.asarray(g, dtype=np.int64) for g in groups]
        K = len(groups)
        pairs = np.array(list(itertools.combinations(range(K), 2)), dtype=np.int64)
        pairs = pairs.reshape(-1, 2)
        stats = tuple(np.empty((pairs.shape[0], self.n_outputs, self.n_rows))
                      for _ in range(self.n_stats))
        for i in range(K - 1):
            sel = np.flatnonzero(pairs[:, 0] == i)
            got = self.union_stats(groups[i], [groups[j] for j in pairs[sel, 1]])
            for out, part in zip(stats, got):
                out[sel] = part
            if progress is not None:
                progress.update(1)
        return pairs, stats

    def pair_scores(self, groups, score="interaction", progress=None):
        """Score of merging every pair of groups, from :meth:`pair_stats`.

        Parameters
        ----------
        groups : list of array-like of int
            Disjoint column sets.
        score : {"interaction", "loss"}, default="interaction"
            "interaction": the interaction strength of the pair (see
            :meth:`interactions_from`); "loss": the AGREED loss decrease of
            merging it, ``Psi_j + Psi_k - Psi_{j u k}``.
        progress : object or None, default=None
            Passed to :meth:`pair_stats`.

        Returns
        -------
        pairs : ndarray of shape (n_pairs, 2)
            The pairs (j, k), j < k, in lexicographic order.
        scores : ndarray of shape (n_pairs,)
            Score of every pair, summed over outputs.
        """
        singles = self.group_stats(groups)
        pairs, unions = self.pair_stats(groups, progress=progress)
        j, k = pairs[:, 0], pairs[:, 1]
        if score == "loss":
            psi = self.potentials_from(singles)
            return pairs, psi[j] + psi[k] - self.potentials_from(unions)
        return pairs, self.interactions_from(
            tuple(s[j] for s in singles), tuple(s[k] for s in singles), unions
        )

    # -- the evaluator of the greedy merge loop ------------------------------
    def union_statistics(self, requests):
        """Compute the means of the matrices of unions of column sets (merge loop).

        Parameters
        ----------
        requests : list of tuple
            ``(problem, base, parts)``, with ``problem`` 0 (there is one
            sample) and ``base`` and ``parts`` as in :meth:`union_means`.

        Returns
        -------
        statistics : list of tuple of ndarray
            ``(rows, cols)`` of :meth:`union_means` for every request.
        """
        return [self.union_stats(base, parts) for _, base, parts in requests]

    @staticmethod
    def potentials_from(means):
        """Interaction potential Psi of every group, from its means.

        Parameters
        ----------
        means : tuple of ndarray
            ``(rows, cols)`` (or the four arrays of :meth:`union_stats`),
            each of shape (n_groups, n_outputs, N).

        Returns
        -------
        psi : ndarray of shape (n_groups,)
            ``sum_o mean_n (rows + cols)**2``, less the same of the gaps.
        """
        return _less_noise(interaction_potentials, means)

    @staticmethod
    def row_terms(means):
        """Every group's share of the loss at every sample row.

        Parameters
        ----------
        means : tuple of ndarray
            As for :meth:`potentials_from`.

        Returns
        -------
        terms : ndarray of shape (n_groups, N)
            ``sum_o (rows + cols)**2`` (less the same of the gaps); their
            mean over the rows is :meth:`potentials_from`.
        """
        return _less_noise(_row_terms, means)

    @staticmethod
    def interactions_from(first, second, union):
        """Interaction strength of pairs of groups, from their means.

        With ``I = G_{j u k} - G_j - G_k``, the strength is the mean square
        of the row means of I plus the mean square of its column means,
        summed over outputs.

        Parameters
        ----------
        first, second, union : tuple of ndarray
            ``(rows, cols)`` of the groups j, of the groups k and of their
            unions, of shape (n_pairs, n_outputs, N) (or (n_outputs, N) for
            one group j shared by all pairs).

        Returns
        -------
        strength : ndarray of shape (n_pairs,)
            Interaction strength of every pair.
        """
        return _less_noise(_interactions, first, second, union)

    def output_variance(self, problem=0):
        """Variance of the model output over the sample (see :attr:`variance`).

        Parameters
        ----------
        problem : int, default=0
            Unused: there is one sample.

        Returns
        -------
        variance : float
            Summed over outputs.
        """
        return self.variance


def agreement_score(game, X, groups, group_penalty, *, size, random_state=None):
    """The agreement score of a partition on a sample of held-out rows.

    ``-L / Var(f) - c * P`` (see
    :meth:`AnchoredStatistics.agreement_score`) on ``size`` rows of X drawn
    without replacement (all of them when X has fewer).

    Parameters
    ----------
    game : CoalitionGame
    X : ndarray or DataFrame of shape (n_samples, n_features)
        Held-out rows, already checked.
    groups : list of array-like of int
    group_penalty : float
    size : int
    random_state : int, RandomState instance or None, default=None
        Draws the rows.

    Returns
    -------
    score : float
    """
    from sklearn.utils import check_random_state

    n = X.shape[0]
    if n < 2:
        raise ValueError(
            f"score compares every row of X with every other and needs at "
            f"least 2 rows, got {n}; give more held-out rows."
        )
    rng = check_random_state(random_state)
    idx = np.arange(n) if size >= n else np.sort(rng.choice(n, size, replace=False))
    sample = X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]
    stats = AnchoredStatistics(game, sample, what="X")
    return stats.agreement_score(groups, group_penalty)


def _image_hybrids(response, images, baselines, pixel_masks, channels, image_idx):
    """Model outputs ``f(x_m, b_rest)`` and ``f(b_m, x_rest)``, in one model call."""
    n = pixel_masks.shape[0]

    def make_data(pairs):
        # row by row into the batch: no temporary of its size (wide photos)
        out = np.empty((2 * n, images.shape[1]), dtype=images.dtype)
        for i, s in enumerate(image_idx):
            cols = np.repeat(pixel_masks[i], channels)
            out[i] = baselines[s]
            np.copyto(out[i], images[s], where=cols)
            out[n + i] = images[s]
            np.copyto(out[n + i], baselines[s], where=cols)
        return out

    def describe(pair, row):
        k = row % n
        pixels = np.flatnonzero(pixel_masks[k])
        shown = ", ".join(str(p) for p in pixels[:8])
        shown += ", ..." if pixels.size > 8 else ""
        if row < n:
            return (
                f"the hybrid of image {image_idx[k]} (pixels [{shown}]) with its "
                "baseline (the other pixels)"
            )
        return (
            f"the hybrid of the baseline of image {image_idx[k]} (pixels [{shown}]) "
            "with the image (the other pixels)"
        )

    # one block of 2 n rows: the model sees the images in this order
    return run_blocks(
        response, make_data, 1, 2 * n, batch_size=2 * n, average=False, describe=describe
    )


class _PixelMasks:
    """Pixel masks of requests, made a chunk at a time: each the union of index arrays."""

    def __init__(self, n_pixels, members):
        self.n_pixels, self.members = n_pixels, members  # None: every pixel

    def __getitem__(self, sl):
        items = self.members[sl]
        out = np.zeros((len(items), self.n_pixels), dtype=bool)
        for i, parts in enumerate(items):
            for p in [slice(None)] if parts is None else parts:
                out[i, p] = True
        return out


class ImageStatistics:
    """Arch and occlusion values of pixel groups of images, against their baselines.

    Per-image AGREED (see :ref:`agreed`) explains an image x against its
    baseline image b on the sample {x, b} (N = 2). The anchored values of a
    set m of pixels are then ``arch = f(x_m, b_rest) - f(b)`` and
    ``occ = f(x) - f(b_m, x_rest)``, and the interaction potential of a
    group is ``Psi = 1/4 sum_o (arch - occ)**2``. This is the evaluator of
    the greedy merge loop for images: the requests of every image are sent
    to the model together, in batches of at most ``rows_per_call`` hybrid
    images, each through :func:`~skdecomp._game.run_blocks`, which checks
    the model's output. f(x) and f(b) are evaluated with the first request
    of each image.

    Parameters
    ----------
    response : ResponseFunction
        The explained outputs, on flattened images.
    images : ndarray of shape (n_images, n_columns)
        The explained images, flattened.
    baselines : ndarray of shape (n_images, n_columns)
        The baseline of every image, flattened.
    image_shape : tuple of int
        (H, W) or (H, W, C).
    max_memory : int, str or None, default=None
        Bytes of hybrid images built at once, at most 64 MiB; None uses
        scikit-learn's ``working_memory``.
    n_jobs : int or None, default=None
        Joblib workers over batches, when a round needs several.

    Attributes
    ----------
    rows_per_call : int
        Largest number of hybrid images per model call.
    image_values, baseline_values : list of ndarray of shape (n_outputs,)
        f(x) and f(b) of every image (None until its first request).
    model_calls : int
        Hybrid images sent to the model so far.
    model_batches : int
        Calls to the model so far.
    """

    def __init__(self, response, images, baselines, image_shape, *, max_memory=None,
                 n_jobs=None):
        self.response = response
        # hybrid images in float32 for image models (see image_dtype)
        dtype = np.float32 if callable(getattr(response.estimator, "batch_rows", None)) \
            else np.float64
        self.images = np.asarray(images, dtype=dtype)
        self.baselines = np.ascontiguousarray(baselines, dtype=dtype)
        self.channels = 1 if len(image_shape) == 2 else int(image_shape[2])
        n_images, d = self.images.shape
        self.n_pixels = d // self.channels
        # at most one block of the working memory (64 MiB by default), or an
        # image model's own batch
        cells = min(kernel_block_cells(), max(1, parse_memory(max_memory) // 8))
        rows = getattr(response.estimator, "batch_rows", None)
        self.rows_per_call = max(2, rows(d) if callable(rows) else cells // d)
        self.n_jobs = n_jobs
        self.image_values = [None] * n_images
        self.baseline_values = [None] * n_images
        self.model_calls = 0
        self.model_batches = 0

    def hybrids(self, image_idx, pixel_masks):
        """Model outputs on hybrids of images and their baselines.

        Parameters
        ----------
        image_idx : array-like of int of shape (n_requests,)
            Image of every request.
        pixel_masks : array-like of bool of shape (n_requests, n_pixels)
            Pixels m of every request.

        Returns
        -------
        inserted, deleted : ndarray of shape (n_requests, n_outputs)
            ``f(x_m, b_rest)`` and ``f(b_m, x_rest)``.
        """
        image_idx = np.asarray(image_idx, dtype=np.int64)
        if not isinstance(pixel_masks, _PixelMasks):
            pixel_masks = np.asarray(pixel_masks, dtype=bool)
        n = image_idx.shape[0]
        per_chunk = max(1, self.rows_per_call // 2)
        chunks = [slice(s, min(s + per_chunk, n)) for s in range(0, n, per_chunk)]
        args = (
            (
                self.response, self.images, self.baselines, pixel_masks[sl],
                self.channels, image_idx[sl],
            )
            for sl in chunks
        )
        if len(chunks) > 1 and self.n_jobs not in (None, 1):
            outs = Parallel(n_jobs=self.n_jobs)(delayed(_image_hybrids)(*a) for a in args)
        else:
            outs = [_image_hybrids(*a) for a in args]
        self.model_calls += 2 * n
        self.model_batches += len(chunks)
        inserted = np.concatenate([o[: len(o) // 2] for o in outs])
        deleted = np.concatenate([o[len(o) // 2 :] for o in outs])
        return inserted, deleted

    # -- the evaluator of the greedy merge loop ------------------------------
    def union_statistics(self, requests):
        """Arch and occlusion values of unions of pixel sets, in one batch.

        Parameters
        ----------
        requests : list of tuple
            ``(image, base, parts)``: the index of an image, and arrays of
            pixel positions; every part is disjoint from ``base``.

        Returns
        -------
        statistics : list of tuple of ndarray
            ``(arch, occ)`` of ``base ∪ part`` for every part of every
            request, each of shape (len(parts), n_outputs).
        """
        idx, masks, spans, anchors = [], [], [], {}
        for s, base, parts in requests:
            if self.image_values[s] is None and s not in anchors:
                anchors[s] = len(idx)
                idx.append(s)
                masks.append(None)
            start = len(idx)
            for part in parts:  # the masks are made a batch at a time
                idx.append(s)
                masks.append((np.asarray(base, dtype=np.int64),
                               np.asarray(part, dtype=np.int64)))
            spans.append((s, start, len(idx)))
        if not idx:
            return [self._empty() for _ in requests]
        inserted, deleted = self.hybrids(idx, _PixelMasks(self.n_pixels, masks))
        for s, r in anchors.items():
            self.image_values[s], self.baseline_values[s] = inserted[r], deleted[r]
        return [
            (inserted[a:b] - self.baseline_values[s], self.image_values[s] - deleted[a:b])
            for s, a, b in spans
        ]

    def _empty(self):
        empty = np.zeros((0, 0))
        return empty, empty.copy()

    @staticmethod
    def potentials_from(values):
        """Interaction potential ``Psi = 1/4 sum_o (arch - occ)**2`` of every group.

        Parameters
        ----------
        values : tuple of ndarray
            ``(arch, occ)``, each of shape (n_groups, n_outputs).

        Returns
        -------
        psi : ndarray of shape (n_groups,)
            Potential of every group.
        """
        arch, occ = values
        return 0.25 * np.sum((arch - occ) ** 2, axis=1)

    @staticmethod
    def interactions_from(first, second, union):
        """Interaction strength of pairs of groups.

        With ``I = G_{j u k} - G_j - G_k`` on the sample {x, b}, the strength
        is ``1/4 sum_o (I_arch**2 + I_occ**2)``, the anchored form of the
        tabular interaction strength for N = 2.

        Parameters
        ----------
        first, second, union : tuple of ndarray
            ``(arch, occ)`` of the groups j, of the groups k and of their
            unions, of shape (n_pairs, n_outputs) (or (n_outputs,) for one
            group j shared by all pairs).

        Returns
        -------
        strength : ndarray of shape (n_pairs,)
            Interaction strength of every pair.
        """
        i_xb = union[0] - first[0] - second[0]
        i_bx = union[1] - first[1] - second[1]
        return 0.25 * np.sum(i_xb**2 + i_bx**2, axis=1)

    def output_variance(self, problem):
        """Variance of the model output on {x, b} for one image.

        Parameters
        ----------
        problem : int
            Index of the image.

        Returns
        -------
        variance : float
            ``sum_o ((f(x) - f(b)) / 2)**2``.
        """
        gap = self.image_values[problem] - self.baseline_values[problem]
        return float(np.sum((gap / 2.0) ** 2))
