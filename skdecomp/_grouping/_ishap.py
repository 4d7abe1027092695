"""IGREEDY: the greedy partition search of iShap, as a grouper.

:class:`IShapGrouper` tests every pair of columns for a significant
interaction, then merges groups greedily, along significant pairs only, while
an additive model over the groups fits the model better, with a penalty for
large groups. It is a baseline of :class:`~skdecomp.AdaptiveGrouper` (see
:ref:`agreed`).
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, _fit_context, transactional_fit
from .._table import Table
from ._base import (
    _MODEL_CONSTRAINT, MergePathMixin, _BaseGrouper, _progress, column_names, loss_path,
)
from ._merge import _ATOL

__all__ = ["IShapGrouper"]

# Mean differences below this fraction of the output's standard deviation are
# rounding noise in the significance test.
_RTOL = 1e-9


def _welch_p_values(a, in_a, b, in_b, atol):
    """Two-sided p-values of Welch's t-test of equal means, for every row.

    The samples of row n are ``a[n, in_a[n]]`` and ``b[n, in_b[n]]`` (at
    least two each), per output. A mean difference of at most ``atol`` has
    p = 1 (also when both variances are 0); a larger one with both
    variances 0 has p = 0.
    """

    def moments(x, keep):
        w = keep[:, :, None].astype(np.float64)
        n = w.sum(axis=1)
        mean = (x * w).sum(axis=1) / np.maximum(n, 1)
        var = (((x - mean[:, None, :]) ** 2) * w).sum(axis=1) / np.maximum(n - 1, 1)
        return mean, var / np.maximum(n, 1), n

    mean_a, va, n_a = moments(a, in_a)
    mean_b, vb, n_b = moments(b, in_b)
    diff = mean_a - mean_b
    se2 = va + vb
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(diff) / np.sqrt(se2)
        df = se2**2 / (va**2 / np.maximum(n_a - 1, 1) + vb**2 / np.maximum(n_b - 1, 1))
        p = 2.0 * stats.t.sf(t, df)
    p = np.where(se2 <= 0, 0.0, p)
    return np.where(np.abs(diff) <= atol, 1.0, p)


class _SampleHybrids:
    """Hybrid rows of the samples of the test, one coalition each; picklable.

    Sample k takes the columns of ``masks[k]`` from explained row ``k % N``
    and the others from background row ``(k // N) % N``.
    """

    def __init__(self, table, masks, n_rows):
        self.table = table
        self.masks = masks
        self.n_rows = n_rows
        dtypes = table.dtypes if table.is_frame else None
        self.rows = [Table(table.rows([m]), dtypes) for m in range(n_rows)]

    def __call__(self, pairs):
        N = self.n_rows
        m = (pairs // N) % N
        starts = np.flatnonzero(np.r_[True, m[1:] != m[:-1]])
        ends = np.r_[starts[1:], len(pairs)]
        parts = [
            self.table.hybrids(self.rows[m[a]], pairs[a:b] % N, self.masks[pairs[a:b]])
            for a, b in zip(starts, ends)
        ]
        if self.table.is_frame:
            return pd.concat(parts, ignore_index=True)
        return np.concatenate(parts)


def _pair_p_value(values, in_i, in_j, rng, atol):
    """Smallest p-value over rows and outputs of the tests of i and of j.

    ``values`` (N, K, n_outputs) are the K samples of every explained row,
    ``in_i`` and ``in_j`` (N, K) whether i and j are in their coalitions. As
    in the authors' code, the effect of adding i without j (samples with i
    only, minus a random sample with neither) is compared with the effect of
    adding i to j (a random sample with both, minus samples with j only), by
    Welch's t-test; the same for j. Rows where a cell has fewer than two
    samples give p = 1.
    """
    cells = [~in_i & ~in_j, in_i & ~in_j, ~in_i & in_j, in_i & in_j]
    none, only_i, only_j, both = cells
    ok = np.min([c.sum(axis=1) for c in cells], axis=0) >= 2
    if not ok.any():
        return 1.0

    def partner(cell):
        # for every sample, a random sample of ``cell`` in the same row (with
        # replacement, as the authors do)
        order = np.argsort(~cell, axis=1, kind="stable")
        count = np.maximum(cell.sum(axis=1, keepdims=True), 1)
        pick = (rng.random_sample(cell.shape) * count).astype(np.int64)
        idx = np.take_along_axis(order, pick, axis=1)
        return np.take_along_axis(values, idx[:, :, None], axis=1)

    p_i = _welch_p_values(values - partner(none), only_i, partner(both) - values, only_j, atol)
    p_j = _welch_p_values(values - partner(none), only_j, partner(both) - values, only_i, atol)
    p = np.minimum(p_i, p_j)[ok]
    return float(p.min())


def _potential(rows, cols):
    """AGREED potential of a group from its row and column means (n_outputs, N)."""
    return float(((rows + cols) ** 2).sum(axis=0).mean())


def _fit_error(target, total):
    """``mean_n sum_o (target - total)**2`` for arrays of shape (N, n_outputs)."""
    return float(np.mean(np.sum((target - total) ** 2, axis=1)))


class IShapGrouper(MergePathMixin, _BaseGrouper):
    """IGREEDY: the greedy partition of iShap, with a pairwise significance test.

    iShap (Xu, Cüppers and Vreeken) explains a prediction additively over a
    partition P of the features, chosen to minimise

        ``(v(all) - sum_{S in P} v(S))**2 + lambda * sum_{S in P} |S| (|S| - 1) / 2``,

    where v(S) is the value of the coalition S (the mean model output with
    S from x and the other columns from background rows, minus the mean
    output). Pairs of features are first tested for a significant
    interaction; the greedy search then merges, one pair of groups at a
    time, the pair that lowers the objective most among pairs joined by a
    significant interaction, and stops when no merge lowers it.

    Here the search is global, on N sample rows used both as explained
    points and as background (B = D, as in :class:`AdaptiveGrouper`). The
    value of S at row n is ``v_n(S) = mean_m f(x^n_S, x^m_{-S}) - mean f``
    (the row mean of the anchored matrix of S),
    ``v_n(all) = f(x^n) - mean f``, and the objective is

        ``E(P) + lambda * sum_{S in P} |S| (|S| - 1) / 2``, with
        ``E(P) = mean_n sum_o (v_n(all) - sum_{S in P} v_n(S))**2``

    and ``lambda = size_penalty * E(singletons)``.

    The test, at every explained row n: ``test_samples`` hybrid rows, each
    with its own random coalition (every column taken from x^n with
    probability 1/2) and the other columns from a background row (the N
    rows in turn). For a pair (i, j) the samples fall into four cells by
    whether i and j are in the coalition. The effect of adding i without j
    (each sample with i only, minus a random sample with neither) and with
    j (a random sample with both, minus each sample with j only) are
    compared by Welch's t-test, and the same for j, each at level
    ``significance / 2``, with a Bonferroni correction over the N rows and
    the outputs. The pair interacts when a test rejects.

    Parameters
    ----------
    estimator : estimator, callable or None, default=None
        The model (see :class:`AdaptiveGrouper`).
    max_samples : int, default=100
        Number of sample rows N (at least 2).
    n_groups : int or None, default=None
        Merge until this many groups remain, taking the merge of lowest
        objective whether or not it lowers the objective; once no pair
        joined by a significant interaction is left, any pair of groups
        may merge. There may be more groups when ``max_group_size`` leaves
        no admissible pair. None stops when no merge lowers the objective.
    significance : float, default=0.05
        Level alpha of the interaction test of a pair (over the rows,
        outputs and the two columns).
    test_samples : int, default=1000
        Random-coalition samples of the test per sample row (at least 2);
        the test costs ``test_samples * N`` model calls for all pairs.
    size_penalty : float, default=0.01
        The penalty lambda of a pair of columns in a group, as a share of
        the fit error of the singletons, ``E(singletons)``. 0 merges
        whenever the fit improves.
    response_method : {"auto", "predict", "predict_proba", "decision_function", "log_odds", "margin"}, default="auto"
        Model output to group on (see :class:`AdaptiveGrouper`).
    target : class label or int, default=None
        Output to group on (see :class:`AdaptiveGrouper`); None uses all
        outputs, with the fit error summed over them.
    n_jobs : int, default=None
        Joblib workers over chunks of hybrid rows.
    random_state : int, RandomState instance or None, default=None
        Draws the N sample rows, then the coalitions of the test and the
        random pairing of its samples.
    max_memory : int, str or None, default=None
        Largest size of the anchored values held at once while computing
        the values v (see :class:`AdaptiveGrouper`).
    verbose : int, default=0
        Show a progress bar over the pair tests when positive.
    algorithm : {"auto", "tree", "model_agnostic"}, default="auto"
        As for :class:`AdaptiveGrouper`: the tree path reads the values v
        from the trees; the test always calls the model.
    max_group_size : int or None, default=None
        The largest number of columns of a group: a merge whose union would
        have more columns is not a candidate (the authors' maximum
        coalition size). None sets no bound.

    Attributes
    ----------
    groups_, labels_, n_groups_, group_names_, group_features_
        The partition (see :class:`AdaptiveGrouper`).
    interaction_graph_ : ndarray of bool of shape (n_features_in_, n_features_in_)
        The pairs with a significant interaction (symmetric, False on the
        diagonal).
    p_values_ : ndarray of shape (n_features_in_, n_features_in_)
        Bonferroni-adjusted p-value of every pair (1 on the diagonal); a
        pair interacts when it is below ``significance``.
    history_ : list of dict
        One entry per merge, in order, with keys ``"groups"`` (the two
        merged groups, as column lists), ``"objective_before"``,
        ``"objective_after"``, ``"error_after"`` (E after the merge),
        ``"n_groups"`` (after the merge) and ``"model_calls"`` (so far).
    path_ : list of dict
        Every partition along the merges, from one group per column, with
        the keys of :attr:`AdaptiveGrouper.path_` (``"held_out_loss"`` is
        None): the AGREED loss on the sample, the largest group, the
        disagreement left as a share of the initial loss, and ``"chosen"``
        for ``groups_``. With ``n_groups=None`` the path goes on past the
        stopping point with the same rule (the candidate of lowest
        objective among the pairs joined by ``interaction_graph_``, whether
        or not it lowers the objective): to a single group, until no
        candidate is left, to a loss of 0, or until the merges past the stop
        have computed as many values v as those up to it (the d singletons
        and the candidates). With an int ``n_groups`` it ends at
        ``groups_``. :meth:`cut` gives the groups of any of them;
        :class:`~skdecomp.plot.GroupingDisplay` draws the trade-off.
    objective_ : float
        Objective of the final partition.
    initial_objective_ : float
        Objective of the singletons, ``E(singletons)``.
    size_penalty_ : float
        The penalty lambda, ``size_penalty * E(singletons)``.
    stop_reason_ : str
        ``"objective"`` (no merge lowers the objective), ``"n_groups"``
        (``n_groups`` groups, or one group, were reached; see the Notes for
        one group),
        ``"interaction_graph"`` (no two groups are joined by a significant
        interaction) or ``"max_group_size"`` (every remaining candidate
        would exceed ``max_group_size``).
    model_calls_ : int
        Rows sent to the model during fit: ``N + test_samples * N`` for the
        sample and the test, plus, off the tree path, ``N**2`` for each
        value v of a group: the d singletons and every candidate merge, past
        the stopping point too (the losses of ``path_`` reuse these values).
    estimator_, background_, expected_value_, n_outputs_, output_names_, \
            response_method_
        As in :class:`AdaptiveGrouper`.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    AdaptiveGrouper : AGREED, greedy merges that remove between-group interactions.
    RecursiveGrouper : Non-separable groups by recursive differential grouping.

    Notes
    -----
    Sources: the abstract of the paper and a summary of its method (the
    objective above, a statistical pairwise test that prunes the search,
    exact and greedy variants), and the authors' open-source code
    (``find_interactions``, ``test_additivity``, ``find_partition_greedy``,
    ``lasso_term``), which gives the details followed here: the penalty
    ``|S| (|S| - 1) / 2`` per group, scaled by the error of the singletons;
    samples with random coalitions (marginal sampling) for the test, the
    random pairing of samples of different cells (with replacement) and
    Welch's t-test for i and for j at ``alpha / 2`` each; candidate merges
    only between groups joined by at least one significant pair; strict
    improvement; and, with a positive penalty, never ending with a single
    group (the last merge is undone; it stays on ``path_``). Choices where
    the sources leave room:

    * Globally instead of per instance: the error is averaged over the N
      sample rows, and the test is run at every row and combined with a
      Bonferroni correction over the rows (and outputs).
    * The background row of the k-th sample of a row is sample row
      ``k mod N`` instead of a random row, and a cell with fewer than two
      samples at a row gives no evidence (p = 1).
    * The values v are exact means over the N background rows instead of
      Monte Carlo estimates.
    * ``n_groups`` is an addition, handled as described above, and
      improvements below 1e-9 times the output variance count as none
      (rounding; the authors' Monte Carlo values are never exact).

    The random pairing makes the test liberal (a spurious edge only adds a
    candidate merge). The values are interventional, so the fit is exact
    at the true blocks of an additive model whatever the dependence of the
    columns; but the greedy search may stop early, e.g. when merging two
    columns of a three-way product does not lower the objective, and then
    misses the block.

    References
    ----------
    S. Xu, J. Cüppers and J. Vreeken. "Succinct Interaction-Aware
    Explanations". KDD 2025 (arXiv:2402.05566).

    Examples
    --------
    >>> from skdecomp import IShapGrouper
    >>> from skdecomp.datasets import make_agreed_example
    >>> data = make_agreed_example(n_samples=200, random_state=0)
    >>> grouper = IShapGrouper(data.function, max_samples=30,
    ...                        random_state=0).fit(data.data)
    >>> grouper.groups_
    [[0, 1], [2, 3], [4], [5]]
    """

    _parameter_constraints = {
        "estimator": _MODEL_CONSTRAINT,
        "max_samples": [Interval(Integral, 2, None, closed="left")],
        "n_groups": [Interval(Integral, 1, None, closed="left"), None],
        "significance": [Interval(Real, 0, 1, closed="neither")],
        "test_samples": [Interval(Integral, 2, None, closed="left")],
        "size_penalty": [Interval(Real, 0, None, closed="left")],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function", "log_odds",
                        "margin"})
        ],
        "target": "no_validation",
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), str, None],
        "verbose": ["verbose"],
        "algorithm": [StrOptions({"auto", "tree", "model_agnostic"})],
        "max_group_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        max_samples=100,
        n_groups=None,
        significance=0.05,
        test_samples=1000,
        size_penalty=0.01,
        response_method="auto",
        target=None,
        n_jobs=None,
        random_state=None,
        max_memory=None,
        verbose=0,
        algorithm="auto",
        max_group_size=None,
    ):
        self.estimator = estimator
        self.max_samples = max_samples
        self.n_groups = n_groups
        self.significance = significance
        self.test_samples = test_samples
        self.size_penalty = size_penalty
        self.response_method = response_method
        self.target = target
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_memory = max_memory
        self.verbose = verbose
        self.algorithm = algorithm
        self.max_group_size = max_group_size

    @_fit_context(prefer_skip_nested_validation=False)
    @transactional_fit
    def fit(self, X, y=None):
        """Test every pair of columns, then merge groups greedily.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data; the N sample rows are drawn from it.
        y : array-like of shape (n_samples,) or None
            Target, needed only to fit an unfitted model.

        Returns
        -------
        self : IShapGrouper
            The fitted grouper.
        """
        X = self._check_X(X, reset=True)
        d = X.shape[1]
        rng = check_random_state(self.random_state)
        ev = self._sample(self._fit_model(X, y, rng))
        test_calls = self._test_pairs(ev, d, rng)
        groups, singles, merges, unions = self._greedy(ev, d, test_calls)
        self._set_partition(groups, feature_names=getattr(self, "feature_names_in_", None))
        # the losses along the path from the means the search computed: no model call
        self.path_ = loss_path(ev, merges, column_names(self, d), self.groups_,
                               singles=singles, unions=unions)
        self._path_merges = merges
        self.model_calls_ = ev.model_calls + test_calls
        return self

    def _test_pairs(self, ev, d, rng):
        """Test every pair on random coalitions; set ``p_values_``, return the model calls."""
        N, n_out, K = ev.n_rows, ev.n_outputs, self.test_samples
        atol = _RTOL * np.sqrt(ev.variance)
        # sample s of explained row n: a random coalition (True: the column
        # is taken from x^n) and background row s % N; samples are ordered
        # s-major, so that a chunk of model calls spans few background rows
        masks = rng.random_sample((K * N, d)) < 0.5
        hybrids = _SampleHybrids(ev.table, masks, N)

        def describe(pair, row):
            s, n = divmod(pair, N)
            cols = np.flatnonzero(masks[pair])
            return (
                f"the hybrid of sample row {n} (columns {cols.tolist()}) with "
                f"sample row {s % N} (the other columns)"
            )

        values = ev.game.mean_predictions(hybrids, K * N, 1, describe=describe)
        values = values.reshape(K, N, n_out).transpose(1, 0, 2)  # (N, K, n_out)
        masks = masks.reshape(K, N, d).transpose(1, 0, 2)
        p = np.ones((d, d))
        bar = _progress(self.verbose, d - 1, "pair tests")
        for i in range(d - 1):
            for j in range(i + 1, d):
                p[i, j] = p[j, i] = _pair_p_value(values, masks[:, :, i], masks[:, :, j],
                                                  rng, atol)
            bar.update(1)
        bar.close()
        self.p_values_ = np.minimum(1.0, p * 2 * N * n_out)
        np.fill_diagonal(self.p_values_, 1.0)
        self.interaction_graph_ = self.p_values_ < self.significance
        return K * N

    def _greedy(self, ev, d, test_calls):
        """The greedy merges of iShap on the graph of significant pairs.

        Return the chosen groups, the row and column means of the single
        columns, every merge (past the stop too) as two column lists, and
        the row and column means of the union each merge formed.
        """
        max_size = d if self.max_group_size is None else self.max_group_size
        graph = self.interaction_graph_
        target = ev.anchor_values - ev.anchor_values.mean(axis=0)
        # v_n(S), the row means of the anchored matrices, as (N, n_outputs)
        # arrays; the column means give the AGREED loss along the path
        single_means = ev.group_means([[k] for k in range(d)])
        singles = np.transpose(single_means[0], (0, 2, 1))
        # id -> (columns, v_n, Psi)
        groups = {k: ([k], singles[k], _potential(*(m[k] for m in single_means)))
                  for k in range(d)}
        total = singles.sum(axis=0)
        error = _fit_error(target, total)
        lam = self.size_penalty * error
        penalty = 0.0
        # improvements below this are rounding noise, and so is such a loss
        atol = _ATOL * ev.variance
        loss_atol = _ATOL * max(ev.variance, np.finfo(float).tiny)
        self.initial_objective_ = error
        self.size_penalty_ = lam

        def connected(a, b):
            return bool(graph[np.ix_(groups[a][0], groups[b][0])].any())

        def admissible(a, b):
            return len(groups[a][0]) + len(groups[b][0]) <= max_size

        def loss():
            return sum(psi for _, _, psi in groups.values())

        # candidate merges: the row and column means of the union of two
        # groups joined by the graph; ``asked`` counts the values v computed
        candidates, refused, asked = {}, False, d
        for i in range(d - 1):
            js = [j for j in range(i + 1, d) if graph[i, j]]
            if js and max_size < 2:
                refused = True
            elif js:
                rows, cols = ev.union_means([i], [[j] for j in js])
                asked += len(js)
                candidates.update({(i, j): (r, c) for j, r, c in zip(js, rows, cols)})
        fallback = False
        history, last, stop, at_stop = [], None, None, None
        merges, unions = [], []
        new = d

        def reach(reason):
            """Record the stopping point; whether the path goes on past it."""
            nonlocal stop, at_stop
            stop = reason
            at_stop = (dict(groups), error, penalty, last, asked)
            # as AdaptiveGrouper: no path past a stop at n_groups groups
            return self.n_groups is None and len(groups) > 1 and loss() > loss_atol

        def path_ends():
            """Past the stop: one group, a loss of 0, or the budget spent.

            The budget is AdaptiveGrouper's; here it is a guard only, since a
            merge asks for fewer new values than the candidates it removes.
            """
            spent = asked - at_stop[-1] >= max(at_stop[-1], 1)
            return len(groups) <= 1 or loss() <= loss_atol or spent

        while True:
            if stop is not None and path_ends():
                break
            if stop is None and (
                len(groups) == 1 or (self.n_groups is not None and len(groups) <= self.n_groups)
            ):
                if not reach("n_groups"):
                    break
            if not candidates and self.n_groups is not None and not fallback:
                # n_groups: any pair of groups may merge once the graph is exhausted
                fallback = True
                keys = sorted(groups)
                for t, a in enumerate(keys):
                    others = [b for b in keys[t + 1 :] if admissible(a, b)]
                    if others:
                        rows, cols = ev.union_means(groups[a][0], [groups[b][0] for b in others])
                        asked += len(others)
                        for b, r, c in zip(others, rows, cols):
                            candidates[a, b] = (r, c)
            if not candidates:
                if stop is None:
                    reach("max_group_size" if refused or fallback else "interaction_graph")
                break
            best, best_obj, best_err = None, np.inf, None
            for (a, b), (r, _) in candidates.items():
                err = _fit_error(target, total - groups[a][1] - groups[b][1] + r.T)
                size_a, size_b = len(groups[a][0]), len(groups[b][0])
                obj = err + lam * (penalty + size_a * size_b)
                if obj < best_obj:
                    best, best_obj, best_err = (a, b), obj, err
            objective = error + lam * penalty
            if stop is None and self.n_groups is None and not best_obj < objective - atol:
                if not reach("objective"):
                    break
            a, b = best
            last = (dict(groups), total, error, penalty)
            cols_a, v_a, _ = groups.pop(a)
            cols_b, v_b, _ = groups.pop(b)
            r, c = candidates[a, b]
            merged = (sorted(cols_a + cols_b), r.T, _potential(r, c))
            total = total - v_a - v_b + merged[1]
            penalty += len(cols_a) * len(cols_b)
            error = best_err
            groups[new] = merged
            merges.append((sorted(cols_a), sorted(cols_b)))
            unions.append((r, c))
            candidates = {p: v for p, v in candidates.items() if a not in p and b not in p}
            others = [k for k in groups if k != new and (fallback or connected(k, new))]
            refused = refused or any(not admissible(k, new) for k in others)
            others = [k for k in others if admissible(k, new)]
            # past the stop, the values of a merge the path will not make are not needed
            if others and (stop is None or not path_ends()):
                rows, cols = ev.union_means(merged[0], [groups[k][0] for k in others])
                asked += len(others)
                for k, r, c in zip(others, rows, cols):
                    candidates[k, new] = (r, c)
            if stop is None:
                history.append(
                    {
                        "groups": (sorted(cols_a), sorted(cols_b)),
                        "objective_before": objective,
                        "objective_after": best_obj,
                        "error_after": best_err,
                        "n_groups": len(groups),
                        "model_calls": ev.model_calls + test_calls,
                    }
                )
            new += 1
        groups, error, penalty, last, _ = at_stop
        if self.n_groups is None and len(groups) == 1 and history and self.size_penalty > 0:
            # as in the authors' code: a positive penalty never ends with one
            # group (the merge undone stays on the path)
            groups, _, error, penalty = last
            history.pop()
        self.history_ = history
        self.stop_reason_ = stop
        self.objective_ = error + lam * penalty
        chosen = [cols for cols, _, _ in groups.values()]
        return chosen, single_means, merges, unions
