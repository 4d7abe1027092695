"""RECURSIVE: the recursive function decomposition of Shapley Sets, as a grouper.

:class:`RecursiveGrouper` finds the non-separable groups of columns by
recursive differential grouping (RDG): the interaction of a group with a set
of columns is one second difference; when it is not zero the set is halved
until the interacting columns are found. It is a baseline of
:class:`~skdecomp.AdaptiveGrouper` (see :ref:`agreed`).
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._compat import Interval, StrOptions, _fit_context, transactional_fit
from ._base import (
    _MODEL_CONSTRAINT,
    MergePathMixin,
    _BaseGrouper,
    _progress,
    column_names,
    loss_path,
)
from ._merge import _ATOL

__all__ = ["RecursiveGrouper"]


class _SecondDifferences:
    """Mean squared second differences of column sets on the N sample rows.

    ``ev`` is the grouper's :class:`~skdecomp._game.AnchoredStatistics`; its
    game has one group per column, so a boolean mask over the columns is a
    coalition and ``ev.matrices`` gives the anchored matrix
    ``G_C[n, m] = f(x^n_C, x^m_{-C}) - f(x^m)`` of any column set C.

    The row and column means of every matrix computed are kept in ``known``
    (by column set), as :meth:`AnchoredStatistics.union_means` returns them:
    ``rows[o, n] = mean_m G_C[n, m, o]`` and ``cols[o, m] = mean_n G_C[n, m,
    o]``; they give the AGREED loss of the partitions of ``path_``.
    """

    def __init__(self, ev, n_features):
        self.ev = ev
        self.n_features = n_features
        empty = np.zeros((ev.n_outputs, ev.n_rows))
        self.known = {frozenset(): (empty, empty.copy())}
        self.last_second = (None, None)

    def matrices(self, sets):
        masks = np.zeros((len(sets), self.n_features), dtype=bool)
        for k, cols in enumerate(sets):
            masks[k, np.asarray(cols, dtype=np.int64)] = True
        G = self.ev.matrices(masks)
        for cols, G_set in zip(sets, G):
            self.known[frozenset(int(c) for c in cols)] = (
                G_set.mean(axis=1).T, G_set.mean(axis=0).T
            )
        return G

    def means(self, cols):
        """Row and column means of the matrix of ``cols``, or None when unknown.

        A set's means also follow from those of its complement, without a
        model call: ``G_{-C}[n, m] = G_C[m, n] + f(x^n) - f(x^m)``.
        """
        key = frozenset(int(c) for c in cols)
        if key in self.known:
            return self.known[key]
        rest = frozenset(range(self.n_features)) - key
        if rest not in self.known:
            return None
        rows, cols_ = self.known[rest]
        f = self.ev.anchor_values.T
        mean = f.mean(axis=1, keepdims=True)
        return cols_ + f - mean, rows + mean - f

    def fill(self, sets):
        """Compute the means of the sets not known yet (N**2 model calls each).

        ``union_means`` takes disjoint sets at once, so the missing sets are
        packed into batches of disjoint sets, in order.
        """
        batches = []
        for cols in sets:
            key = frozenset(int(c) for c in cols)
            if self.means(key) is not None or any(key in b for b in batches):
                continue
            for batch in batches:
                if all(key.isdisjoint(other) for other in batch):
                    batch.append(key)
                    break
            else:
                batches.append([key])
        empty = np.zeros(0, dtype=np.int64)
        for batch in batches:
            rows, cols = self.ev.union_means(
                empty, [np.array(sorted(key), dtype=np.int64) for key in batch]
            )
            for k, key in enumerate(batch):
                self.known[key] = (rows[k], cols[k])

    def potential(self, cols):
        """Psi of a column set whose means are known."""
        rows, cols_ = self.means(cols)
        return float(((rows + cols_) ** 2).sum(axis=0).mean())

    def strength(self, first, second, G_first=None, G_second=None):
        """``mean_{n,m} sum_o (G_{A u B} - G_A - G_B)**2`` and ``G_{A u B}``."""
        sets = [list(first) + list(second)]
        if G_first is None:
            sets.append(first)
        if G_second is None:
            sets.append(second)
        G = list(self.matrices(sets))
        G_union = G.pop(0)
        G_first = G.pop(0) if G_first is None else G_first
        if G_second is None:
            G_second = G.pop(0)
            self.last_second = (frozenset(int(c) for c in second), G_second)
        inter = G_union - G_first - G_second
        return float(np.mean(np.sum(inter**2, axis=-1))), G_union


class RecursiveGrouper(MergePathMixin, _BaseGrouper):
    """RECURSIVE: non-separable groups by recursive differential grouping.

    The recursive function decomposition of Shapley Sets (Sivill and Flach,
    2023), which uses the recursive differential grouping (RDG) of Sun et
    al. (2018), measured globally on N sample rows used both as explained
    points and as background (B = D, as in :class:`AdaptiveGrouper`).

    The interaction of two disjoint column sets A and B is the mean squared
    second difference over all pairs of sample rows (n explained, m
    background; all other columns from m)::

        I(A, B) = mean_{n,m} sum_o (f(x^n_A, x^n_B, x^m_rest)
                  - f(x^n_A, x^m_B, x^m_rest) - f(x^m_A, x^n_B, x^m_rest)
                  + f(x^m))**2
                = mean_{n,m} sum_o (G_{A u B} - G_A - G_B)[n, m, o]**2,

    with the anchored matrices ``G_C[n, m] = f(x^n_C, x^m_{-C}) - f(x^m)``.
    It is exactly 0 (up to rounding) when f has no interaction between A
    and B, ``f = g(x_A, x_rest) + h(x_B, x_rest)``, whatever the dependence
    of the columns. A and B *interact* when
    ``I(A, B) > tol * Var(f)``, the variance of the model output on the
    sample (summed over outputs).

    RDG: start a group A with the first column not yet grouped and test it
    against the set R of all columns not yet grouped. If they interact and
    R has one column, that column interacts with A; otherwise R is split
    into two halves (the first ``len(R) // 2`` columns, then the rest) and
    each half is tested again, recursively. The columns found are added to
    A, which is tested against the columns left; A is closed when nothing
    interacts with it. A group of k interacting columns among d costs about
    k log2(d) tests instead of the d (d - 1) / 2 of :class:`PairwiseGrouper`.

    RDG is a sequence of merges from one group per column: every group grows
    from its first column by one column at a time, in the order RDG finds
    them (by position within a round of tests), and the groups follow in the
    order RDG closes them. Past the stopping point the merges of
    ``n_groups`` go on (the two admissible groups of largest ``I``), to one
    group, until no pair is admissible (``max_group_size``), until no two
    groups interact (the best ``I`` or the AGREED loss at most ``1e-9``
    times the variance), or until the next merge would make the model calls
    past the stop exceed those up to it, so ``path_`` at most doubles the
    cost of fit. With ``n_groups`` a number, ``path_`` ends at ``groups_``
    (as in :class:`AdaptiveGrouper`). The first merge past the stop tests
    every admissible pair of groups, so when RDG leaves many groups the path
    may not go past the stop.

    Parameters
    ----------
    estimator : estimator, callable or None, default=None
        The model (see :class:`AdaptiveGrouper`).
    max_samples : int, default=100
        Number of sample rows N (at least 2).
    n_groups : int or None, default=None
        At most this many groups. RDG runs first; while it leaves more than
        ``n_groups`` groups, the two groups with the largest interaction
        ``I`` are merged. It cannot split a group, so there may be fewer
        groups (raise ``tol`` for more). None keeps the groups of RDG.
    tol : float, default=0.1
        Two column sets interact when ``I(A, B)`` exceeds ``tol`` times the
        variance of the model output. For a product ``c x_i x_j`` of
        independent centred columns ``I = 4 Var(c x_i x_j)``, so the default
        finds pair terms that carry 2.5 % of the output variance or more.
        RDG tests a group against all the columns left at once, and on a
        fitted model that sums the small interactions it has with almost
        every column: on the fitted models of the semi-synthetic benchmark
        (``benchmarks/bench_fitted_grouping.py``) ``tol=1e-3`` merged every
        column and 0.04 most of them. Lower ``tol`` for exact functions with
        weak interactions (an additive pair gives 0 up to about 1e-30 of the
        variance).
    response_method : {"auto", "predict", "predict_proba", "decision_function", "log_odds", "margin"}, default="auto"
        Model output to group on (see :class:`AdaptiveGrouper`).
    target : class label or int, default=None
        Output to group on (see :class:`AdaptiveGrouper`).
    n_jobs : int, default=None
        Joblib workers over chunks of hybrid rows.
    random_state : int, RandomState instance or None, default=None
        Draws the N sample rows.
    max_memory : int, str or None, default=None
        Largest size of one N x N block of anchored values (see
        :class:`AdaptiveGrouper`); a test holds three such blocks, and one
        block per group is kept for the merges down to ``n_groups`` or past
        the stopping point.
    verbose : int, default=0
        Show a progress bar over the interaction tests when positive.
    algorithm : {"auto", "tree", "model_agnostic"}, default="auto"
        As for :class:`AdaptiveGrouper`. The second differences need every
        hybrid value, so the model is called on the tree path too.
    max_group_size : int or None, default=None
        The largest number of columns of a group. A group that reaches it is
        closed without further tests, and of the interacting columns found
        for a group only the first (by position) that fit are added; the
        others stay ungrouped and start or join later groups. Merges beyond
        the bound are refused while merging down to ``n_groups`` and past
        the stopping point too.
        None sets no bound.

    Attributes
    ----------
    groups_, labels_, n_groups_, group_names_, group_features_
        The partition (see :class:`AdaptiveGrouper`).
    history_ : list of dict
        One entry per interaction test, in order, with keys ``"first"`` and
        ``"second"`` (the column lists A and B), ``"score"`` (``I(A, B)``
        divided by the output variance, 0 for a constant model),
        ``"interacts"`` and ``"model_calls"`` (so far).
    stop_reason_ : str
        ``"tol"`` (no two groups interact, or RDG left at most ``n_groups``
        groups), ``"n_groups"`` (merged down to ``n_groups``) or
        ``"max_group_size"`` (a group reached the bound or an interacting
        column was refused).
    n_tests_ : int
        Number of interaction tests (those of the merges past the stopping
        point are not counted, nor kept in ``history_``).
    path_ : list of dict
        Every partition along the merges, from one group per column, past
        ``groups_`` to where the merging stops (see above), with the keys of
        :attr:`AdaptiveGrouper.path_`: ``"n_groups"``, ``"merged"`` (the
        names of the two groups merged into it, None for the first),
        ``"loss"`` (the AGREED loss on the sample), ``"held_out_loss"``
        (None), ``"largest_group"``, ``"remaining_share"`` (the share of the
        first loss left) and ``"chosen"`` (True for ``groups_``). :meth:`cut`
        gives the groups of any of them;
        :class:`~skdecomp.plot.GroupingDisplay` draws the trade-off.
    model_calls_ : int
        Rows sent to the model during fit: ``N`` plus ``N**2`` per anchored
        matrix (about two per test, and one per merge down to ``n_groups``),
        plus ``N**2`` per group of ``path_`` whose means no matrix gave (a
        column never tested on its own, e.g. every column with
        ``max_group_size=1``; of k columns added to a group at once, the k -
        2 groups in between, and the last when no test follows; none on the
        tree path, where the trees give them), plus the merges past the
        stopping point, at most as many calls as all those before them.
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
    IShapGrouper : Greedy partition of iShap with a pairwise significance test.

    Notes
    -----
    Sources: the abstract of Sivill and Flach (2023) (a recursive function
    decomposition into non-separable variable groups, log-linear in the
    number of variables, for one instance against a baseline), the abstract
    of Sun et al. (2018), and an open-source RDG implementation (the
    ``interact`` recursion and the main loop of niapy). Choices where these
    leave room:

    * Globally instead of per instance: the second difference of one
      instance x against one baseline b becomes the mean of its square over
      the N x N pairs of sample rows. Squaring keeps interactions of
      opposite sign from cancelling; the columns outside A and B come from
      the background row, as the baseline's do in Shapley Sets.
    * Threshold: RDG compares ``|second difference|`` with a rounding bound,
      ``1e-12 min |f|`` over a random population, which suits exact
      functions; models fitted to data need a larger one, hence ``tol``
      relative to the output variance.
    * Order: columns are taken by position; the halves of a split are the
      first ``len(R) // 2`` columns and the rest, as in RDG.
    * Both halves are always tested (as in RDG), even when the first one
      does not interact.
    * ``max_group_size`` and ``n_groups`` are additions, described above;
      RDG itself has neither (a later RDG variant caps the size of a group
      by closing it).

    References
    ----------
    T. Sivill and P. Flach. "Shapley Sets: Feature Attribution via Recursive
    Function Decomposition". arXiv:2307.01777, 2023.

    Y. Sun, M. Kirley and S. K. Halgamuge. "A Recursive Decomposition Method
    for Large Scale Continuous Optimization". IEEE Transactions on
    Evolutionary Computation 22(5), 2018.

    Examples
    --------
    >>> from skdecomp import RecursiveGrouper
    >>> from skdecomp.datasets import make_agreed_example
    >>> data = make_agreed_example(n_samples=200, random_state=0)
    >>> grouper = RecursiveGrouper(data.function, max_samples=30,
    ...                            random_state=0).fit(data.data)
    >>> grouper.groups_
    [[0, 1], [2, 3], [4], [5]]
    >>> [p["n_groups"] for p in grouper.path_]
    [6, 5, 4]
    """

    _parameter_constraints = {
        "estimator": _MODEL_CONSTRAINT,
        "max_samples": [Interval(Integral, 2, None, closed="left")],
        "n_groups": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
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
        tol=0.1,
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
        self.tol = tol
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
        """Find the non-separable groups of columns by recursive differential grouping.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Data; the N sample rows are drawn from it.
        y : array-like of shape (n_samples,) or None
            Target, needed only to fit an unfitted model.

        Returns
        -------
        self : RecursiveGrouper
            The fitted grouper.
        """
        X = self._check_X(X, reset=True)
        d = X.shape[1]
        ev = self._sample(self._fit_model(X, y, check_random_state(self.random_state)))
        max_size = d if self.max_group_size is None else self.max_group_size
        bar = _progress(self.verbose, None, "interaction tests")
        sd = _SecondDifferences(ev, d)
        rdg = _Recursion(sd, self.tol, bar)
        groups = rdg.group(d, max_size, keep=self.n_groups is not None)
        self.stop_reason_ = "max_group_size" if rdg.bounded else "tol"
        if self.n_groups is not None and len(groups) > self.n_groups:
            groups, self.stop_reason_ = rdg.merge_down(groups, self.n_groups, max_size)
        self.history_ = rdg.history
        self.n_tests_ = len(rdg.history)
        self._set_partition(groups, feature_names=getattr(self, "feature_names_in_", None))
        # the path up to the stop: the means no test gave
        sd.fill([[j] for j in range(d)] + [a + b for a, b in rdg.merges])
        loss = sum(sd.potential(g) for g in groups)
        atol = _ATOL * max(ev.variance, np.finfo(float).tiny)
        if self.n_groups is None and len(groups) > 1 and loss > atol:
            # past the stop, at most as many model calls as up to it
            rdg.merge_down(groups, 1, max_size, limit=2 * ev.model_calls, loss=loss, atol=atol)
        bar.close()
        merges = [(sorted(a), sorted(b)) for a, b in rdg.merges]
        singles = [sd.means([j]) for j in range(d)]
        self.path_ = loss_path(
            ev, merges, column_names(self, d), self.groups_,
            (np.stack([r for r, _ in singles]), np.stack([c for _, c in singles])),
            [sd.means(a + b) for a, b in merges],
        )
        self._path_merges = merges
        self.model_calls_ = ev.model_calls
        return self


class _Recursion:
    """The RDG recursion and the merges down to ``n_groups``, with their tests.

    ``merges`` lists the merges in order, as pairs of column lists: the
    growth of every RDG group by one column at a time, then the merges made
    by :meth:`merge_down`.
    """

    def __init__(self, sd, tol, bar):
        self.sd = sd
        self.var = sd.ev.variance
        self.threshold = tol * self.var
        self.bar = bar
        self.history = []
        self.bounded = False
        self.blocks = []
        self.merges = []

    def test(self, first, second, G_first=None, G_second=None, record=True):
        """Interaction test of two column sets; recorded in ``history`` if ``record``."""
        value, G_union = self.sd.strength(first, second, G_first, G_second)
        interacts = value > self.threshold
        if record:
            self.history.append(
                {
                    "first": sorted(int(c) for c in first),
                    "second": sorted(int(c) for c in second),
                    "score": value / self.var if self.var > 0 else 0.0,
                    "interacts": bool(interacts),
                    "model_calls": self.sd.ev.model_calls,
                }
            )
        self.bar.update(1)
        return value, interacts, G_union

    def interact(self, group, G_group, rest, unions):
        """Columns of ``rest`` that interact with ``group`` (the RDG recursion)."""
        _, interacts, G_union = self.test(group, rest, G_group)
        if not interacts:
            return []
        if len(rest) == 1:
            unions[rest[0]] = G_union
            return list(rest)
        half = len(rest) // 2
        return self.interact(group, G_group, rest[:half], unions) + self.interact(
            group, G_group, rest[half:], unions
        )

    def group(self, d, max_size, keep):
        """Recursive differential grouping.

        Keeps the matrix of every group in ``blocks``: computed when
        ``keep``, else only when known (None otherwise), without a model call.
        """
        remaining = list(range(d))
        groups = []
        group, G_group = [remaining.pop(0)], None
        while True:
            found = []
            if remaining and len(group) >= max_size:
                self.bounded = True
            elif remaining:
                if G_group is None:
                    (G_group,) = self.sd.matrices([group])
                unions = {}
                found = self.interact(group, G_group, remaining, unions)
            if found:
                room = max_size - len(group)
                if len(found) > room:
                    self.bounded = True
                    found = found[:room]
                # the group grows by one column at a time, in the order found
                for c in found:
                    self.merges.append((sorted(group), [int(c)]))
                    group = group + [c]
                remaining = [c for c in remaining if c not in found]
                # the matrix of the new group is known when one column joined
                G_group = unions[found[0]] if len(found) == 1 else None
                continue
            groups.append(sorted(group))
            if keep and G_group is None:
                (G_group,) = self.sd.matrices([group])
            elif G_group is None and self.sd.last_second[0] == frozenset(group):
                # the last column, alone, was the set of the last test
                G_group = self.sd.last_second[1]
            self.blocks.append(_own(G_group))
            if not remaining:
                return groups
            group, G_group = [remaining.pop(0)], None

    def merge_down(self, groups, n_groups, max_size, limit=None, loss=None, atol=0.0):
        """Merge the most interacting admissible pair until ``n_groups`` groups remain.

        With ``limit`` (the merges past the stopping point): the tests are
        not recorded, the missing matrices of ``blocks`` are computed,
        ``ev.model_calls`` never exceeds ``limit`` (a merge whose tests do
        not fit is not made), and merging stops when the AGREED loss (from
        ``loss``) or the interaction of the best pair is at most ``atol``.
        """
        past = limit is not None
        ev, N = self.sd.ev, self.sd.ev.n_rows

        def affords(n_matrices):
            return not past or ev.model_calls + n_matrices * N * N <= limit

        blocks = dict(enumerate(self.blocks))
        pairs = [(a, b) for a in range(len(groups)) for b in range(a + 1, len(groups))
                 if len(groups[a]) + len(groups[b]) <= max_size]
        need = sorted({k for p in pairs for k in p if blocks[k] is None})
        if not affords(len(need) + len(pairs)):
            return groups, "budget"
        for k in need:
            (blocks[k],) = self.sd.matrices([groups[k]])
        scores = {}
        for a, b in pairs:
            scores[a, b] = self.test(groups[a], groups[b], blocks[a], blocks[b],
                                     record=not past)[0]
        groups = dict(enumerate(groups))
        new = len(groups)
        while len(groups) > n_groups:
            if not scores:
                return list(groups.values()), "max_group_size"
            a, b = max(scores, key=lambda pair: (scores[pair], -pair[0], -pair[1]))
            if past and (scores[a, b] <= atol or loss <= atol):
                return list(groups.values()), "tol"
            self.merges.append((groups[a], groups[b]))
            merged = sorted(groups.pop(a) + groups.pop(b))
            blocks.pop(a), blocks.pop(b)
            scores = {p: s for p, s in scores.items() if a not in p and b not in p}
            groups[new] = merged
            if past:
                # the test of the pair gave the means of the union
                loss += (self.sd.potential(merged) - self.sd.potential(self.merges[-1][0])
                         - self.sd.potential(self.merges[-1][1]))
                partners = [k for k in groups
                            if k != new and len(groups[k]) + len(merged) <= max_size]
                if (len(groups) <= n_groups or loss <= atol
                        or not affords(1 + len(partners))):
                    return list(groups.values()), "budget"
                if not partners:
                    # a group that admits no partner never will: no matrix
                    blocks[new] = None
                    new += 1
                    continue
            (blocks[new],) = self.sd.matrices([merged])
            for k in list(groups):
                if k != new and len(groups[k]) + len(merged) <= max_size:
                    scores[k, new] = self.test(groups[k], merged, blocks[k], blocks[new],
                                               record=not past)[0]
            new += 1
        return list(groups.values()), "n_groups"


def _own(G):
    """``G`` as its own array: a view would keep a test's other blocks alive."""
    return G if G is None or G.base is None else G.copy()
