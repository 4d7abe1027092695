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

from .._config import MAX_MASK_GROUPS, format_bytes, parse_memory
from .._table import Table, common_dtypes
from ._kernels import anchored_means, interaction_potentials, pair_interaction_strengths

__all__ = ["AnchoredStatistics"]

# Group ids available in one int64 bitmask; id _NEVER marks columns always
# taken from the anchor row (bit 63 is never set in a non-negative mask).
_MAX_IDS = 63
_NEVER = 63


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
                 what="the sample"):
        self.game = game
        self.tree = game.tree
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
        if self.tree is not None:
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
    def variance(self):
        """Variance of the model output over the sample, summed over outputs."""
        return float(self.anchor_values.var(axis=0).sum())

    def _means(self, labels, masks):
        """Row and column means for bitmasks over ``labels`` (one chunk)."""
        if self.tree is not None:
            r, c = self.tree.anchored_sums(
                self.table, self.table, labels, masks, n_jobs=self.game.n_jobs
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
        rows, cols = [], []
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
            r, c = self._means(labels, masks)
            rows.append(r)
            cols.append(c)
        if not rows:
            empty = np.zeros((0, self.n_outputs, self.n_rows))
            return empty, empty.copy()
        return np.concatenate(rows), np.concatenate(cols)

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
        return self.union_means(
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
        rows, cols = self.group_means(groups)
        return interaction_potentials(rows, cols)

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

    def pair_strengths(self, groups, rows=None, cols=None):
        """Interaction strengths of every pair of groups.

        With ``I_jk = G_{j u k} - G_j - G_k``: ``pure`` is the mean square
        of its row means (E[F_jk**2]), ``full`` of its column means (every
        component that holds both groups), and ``joint`` the mean square of
        the row means of ``G_{j u k}`` (E[PD_jk**2]).

        Parameters
        ----------
        groups : list of array-like of int
        rows, cols : ndarray of shape (K, n_outputs, N) or None
            Means of the single groups, when already known.

        Returns
        -------
        pairs : ndarray of shape (n_pairs, 2)
        pure, full, joint : ndarray of shape (n_pairs,)
        """
        groups = [np.asarray(g, dtype=np.int64) for g in groups]
        K = len(groups)
        if rows is None or cols is None:
            rows, cols = self.group_means(groups)
        pairs = np.array(list(itertools.combinations(range(K), 2)), dtype=np.int64)
        pairs = pairs.reshape(-1, 2)
        prow = np.empty((pairs.shape[0], self.n_outputs, self.n_rows))
        pcol = np.empty_like(prow)
        for i in range(K - 1):
            sel = np.flatnonzero(pairs[:, 0] == i)
            r, c = self.union_means(groups[i], [groups[j] for j in pairs[sel, 1]])
            prow[sel], pcol[sel] = r, c
        pure, full, joint = pair_interaction_strengths(rows, cols, prow, pcol, pairs)
        return pairs, pure, full, joint
