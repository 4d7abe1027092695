"""AGREED: the adaptive grouper, for tables and for images.

:class:`AdaptiveGrouper` implements AGREED (see the user guide, :ref:`agreed`):
greedy merges of the groups whose between-group interactions are largest, so
that PDP, SHAP, PFI and the other explainers of :ref:`explainers_as_weights`
agree on the result. Both modes run the one greedy merge loop of
:func:`~skdecomp._grouping._merge.greedy_merges` and keep its merge tree;
:meth:`AdaptiveGrouper.cut` and :meth:`AdaptiveGrouper.cut_label_map` replay
it with :func:`~skdecomp._grouping._merge.cut`.
"""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._compat import HasMethods, Interval, StrOptions, _fit_context, transactional_fit
from .._game import AnchoredStatistics, agreement_score, column_pair_price
from .._image import (
    image_ndim,
)
from .._partition import resolve_groups
from ._base import _MODEL_CONSTRAINT, _BaseGrouper, _progress
from ._agreed_images import ImageAgreedMixin
from ._merge import _ATOL, check_cut, cut, greedy_merges

__all__ = ["AdaptiveGrouper"]

# A merge is kept when it lowers the held-out loss by more than this many
# standard errors of the decrease.
_HELD_OUT_Z = 1.0

# The price of a merge charges this share of a unit for every column pair it
# joins that does not interact on its own (a unit for every pair that does).
_UNLINKED_SHARE = 0.25

# A partition is useful when it leaves at most this share of the initial loss.
_USEFUL_SHARE = 0.5



class _HeldOutScore:
    """The AGREED loss of every partition along the merges, on held-out rows.

    The loss is a mean over rows, ``L = mean_n sum_k c_k(n)`` with
    ``c_k(n) = sum_o (rows_k + cols_k)[o, n]**2`` (see
    :meth:`~skdecomp._game.AnchoredStatistics.potentials_from`), so the
    decrease of a merge of groups i and j into g is the mean over held-out
    rows of ``d(n) = c_i(n) + c_j(n) - c_g(n)``, and its standard error is
    ``std(d) / sqrt(N_held)``. The merge is kept when the mean exceeds
    ``_HELD_OUT_Z`` standard errors and its price.

    The price charges the column pairs the merge joins that interact: a pair
    of initial groups p of i and q of j interacts when merging p and q alone
    lowers the loss on the sample by at least ``sample_price`` per column
    pair (their gains are in ``leaf_gains``, filled by the merge loop). A
    merge that joins some interacting pairs pays ``pair_price`` for each of
    their column pairs and ``_UNLINKED_SHARE`` of it for every other column
    pair it joins: a true pair term that links a column to a group of four
    pays for about two pairs, not four. A merge that joins no interacting
    pair pays for every column pair: it gathers many small interactions,
    none worth a merge on its own (the chaining of fitted models, see
    :ref:`agreed_fitted`). With ``leaf_gains`` None every column pair is
    charged.
    """

    def __init__(self, stats, groups, pair_price=0.0, leaf_gains=None, sample_price=0.0,
                 sample=None):
        self.stats = stats
        self.pair_price = pair_price
        self.leaf_gains = leaf_gains
        self.sample_price = sample_price
        self.sample = sample
        self.groups = [np.asarray(g, dtype=np.int64) for g in groups]
        self.leaves = {k: [k] for k in range(len(groups))}
        self.sizes = [len(g) for g in groups]
        empty = np.zeros(0, dtype=np.int64)
        c = stats.row_terms(stats.union_stats(empty, [np.asarray(g) for g in groups]))
        self.contrib = {k: c[k] for k in range(len(groups))}
        self.losses = [float(c.sum(axis=0).mean())]
        self.errors, self.prices = [], []
        self.refused = False

    def _linked_pairs(self, i, j, n_pairs):
        """Column pairs of the interacting pairs of initial groups across i and j."""
        if self.leaf_gains is None:
            return n_pairs
        if self.pair_price <= 0:
            return n_pairs  # no price to share out
        psi = self.leaf_gains["psi"]
        # a merge of p and q gains at most Psi_p + Psi_q: only those pairs
        # can interact, and those the merge loop did not score are scored
        # here on the sample, in one batch
        cand = [(p, q) for p in self.leaves[i] for q in self.leaves[j]
                if psi[p] + psi[q] >= self.sample_price * self.sizes[p] * self.sizes[q]]
        missing = {}
        for p, q in cand:
            if (min(p, q), max(p, q)) not in self.leaf_gains:
                missing.setdefault(p, []).append(q)
        if missing:
            requests = [(0, self.groups[p], [self.groups[q] for q in qs])
                        for p, qs in missing.items()]
            for (p, qs), stats in zip(missing.items(),
                                      self.sample.union_statistics(requests)):
                union = self.sample.potentials_from(stats)
                for q, u in zip(qs, union):
                    self.leaf_gains[(min(p, q), max(p, q))] = psi[p] + psi[q] - float(u)
        linked = 0
        for p, q in cand:
            cells = self.sizes[p] * self.sizes[q]
            if self.leaf_gains[(min(p, q), max(p, q))] >= self.sample_price * cells:
                linked += cells
        return linked

    def __call__(self, problem, i, j, g, units, n_pairs):
        self.contrib[g] = self.stats.row_terms(
            self.stats.union_stats(np.zeros(0, dtype=np.int64), [units]))[0]
        d = self.contrib.pop(i) + self.contrib.pop(j) - self.contrib[g]
        # past the first refusal (the merge path past the stop) no price is used
        linked = n_pairs if self.refused else self._linked_pairs(i, j, n_pairs)
        self.leaves[g] = self.leaves.pop(i) + self.leaves.pop(j)
        n = d.shape[0]
        error = float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
        self.losses.append(float(np.sum(list(self.contrib.values()), axis=0).mean()))
        self.errors.append(error)
        # a merge that joins no interacting pair pays for every pair it joins
        charged = linked + _UNLINKED_SHARE * (n_pairs - linked) if linked else n_pairs
        self.prices.append(self.pair_price * max(charged, 1.0))
        keep = float(d.mean()) > max(_HELD_OUT_Z * error, self.prices[-1])
        # one group of every column leaves no loss by construction and tells
        # no column apart: it is never the stop
        keep = keep and len(self.contrib) > 1
        self.refused = self.refused or not keep
        return keep


class AdaptiveGrouper(ImageAgreedMixin, _BaseGrouper):
    """AGREED: adaptive grouping that removes between-group interactions.

    Starting from one group per column (or ``initial_groups``), repeatedly
    merges the pair of groups that best reduces the AGREED loss
    ``L = sum_k Psi_k``, the mean squared gap between the PDP and PFI
    effects of the groups (see :ref:`agreed`), per pair of columns the merge
    joins (``strategy="pairs"``); or, as in the AGREED paper, the group of
    largest interaction potential Psi with its best partner
    (``strategy="paper"``). On the learned groups the between-group interactions are
    small, so PDP, SHAP, PFI and the other explainers agree (see
    :ref:`why_disagree`).

    Everything is measured on a sample of N rows used both as explained
    points and as background (B = D). The anchored N x N matrix of a group
    is ``G_k[n, m] = f(x^n_{G_k}, x^m_{-G_k}) - f(x^m)``; Psi_k depends only
    on its row and column means, which are cached. A candidate merge
    of groups i and j costs one new matrix, G_{i∪j} = G_i + G_j + I_ij;
    groups that are not merged are never evaluated again. Model calls are at
    most ``N + K N**2 + K (K - 1) / 2 N**2 + sum_steps (K_step - 2) N**2``
    with ``strategy="pairs"`` (fewer beyond 25 groups) and ``N + K N**2 +
    sum_steps (K_step - 1) N**2`` with ``strategy="paper"``, both O(d**2
    N**2), and
    memory is O(K N) plus one chunk of N x N blocks bounded by
    ``max_memory``.

    Parameters
    ----------
    estimator : estimator, callable or None, default=None
        The model. A fitted model is used as it is, an unfitted one is fitted
        on ``(X, y)``, and a plain callable ``f(X) -> array`` is a fitted
        regressor. None is allowed only inside ``Explainer(model,
        groups=AdaptiveGrouper())``, which passes its own model. On images,
        also a ``torch.nn.Module``, an ``onnxruntime.InferenceSession`` or
        an :class:`ImageModel`.

    max_samples : int, default=100
        Number of rows N (at least 2) drawn from X (without replacement) for
        the anchored matrices. Cost grows as N**2; 100 is a good default, 50
        for wide data.

    n_groups : int, "auto" or None, default="auto"
        Merge until this many groups remain (``rel_tol`` is then ignored).
        "auto" (or None) stops on ``rel_tol`` when it is set, and otherwise
        on held-out rows: a second sample of rows, disjoint from the N rows
        the merges are chosen on (``max_samples`` more rows, or X split in
        two halves when it has fewer than ``2 * max_samples`` rows), scores
        every merge, and a merge of groups of a and b columns is kept only
        when it lowers the AGREED loss of these held-out rows by more than
        one paired standard error over the held-out rows and by more than
        its price (see ``group_penalty``). Merging
        stops at the first merge that fails; it stays in ``history_`` with
        ``"accepted": False``. The merge into a single group of every column
        always fails: that group leaves no between-group loss only because
        nothing is left between groups, so its held-out gain is the whole
        remaining loss and says nothing about a partition; on a model whose
        interactions chain every column (e.g. ``x0 x1 + x1 x2 + x2 x3 + x3
        x4``) "auto" stops at two groups and ``useful_partition_`` says
        whether they make the explainers agree. An int ``n_groups=1`` still
        gives one group. Images have no rows to hold out: there "auto"
        stops when the best merge no longer pays its price (see
        ``group_penalty``), when no merge within ``max_group_size`` is
        left, or when ``max_evaluations`` are spent; with ``rel_tol`` it
        stops on ``rel_tol``, by the paper's rule.

    rel_tol : float or None, default=None
        The stopping rule of the AGREED paper: unless ``n_groups`` is a
        number, stop as soon as the loss on the sample is at most
        ``rel_tol`` times the initial loss. 0 merges until no between-group
        interaction is left. None uses the held-out rule of ``n_groups``.

    merge_score : {"loss", "interaction"}, default="loss"
        How a merge of groups i and j is scored: "loss" by the exact loss
        decrease ``Psi_i + Psi_j - Psi_{i∪j}``; "interaction" by the
        interaction strength
        ``mean_n I_ij.mean(1)[n]**2 + mean_m I_ij.mean(0)[m]**2``.

    strategy : {"auto", "pairs", "paper"}, default="auto"
        Which merge is made at every step. "auto": "paper" when ``rel_tol``
        is given (the AGREED paper's rule: ``AdaptiveGrouper(model,
        rel_tol=0.25)`` gives the paper's partitions), "pairs" otherwise.
        "pairs": the pair of groups of
        largest score per pair of columns it joins, ``score / (|G_i|
        |G_j|)``, over all pairs. A pair of groups i and j lowers the loss
        by at most ``Psi_i + Psi_j``, so only the pairs whose bound ``(Psi_i
        + Psi_j) / (|G_i| |G_j|)`` reaches the best score found are scored:
        first the K - 1 pairs of the group of largest Psi, then the others
        that may beat them, largest bound first, beyond 25 groups up to
        1.5 (K - 1) more per merge. That gives the merges of scoring every pair unless the
        budget runs out (among the small interactions of a fitted model,
        once its true ones are merged), at 1.5 to 1.8 times the cost of the
        paper's rule on the tree path from 64 to 256 columns (with
        ``merge_score="interaction"``, which has no such bound, the pairs
        with one of the 24 groups of largest Psi). "paper": the group i of largest Psi_i merges with the
        partner of largest score, the rule of the AGREED paper (K - 1
        unions per merge, cheaper for hundreds of columns); with
        ``rel_tol`` or an int ``n_groups`` it gives the paper's partitions.
        On fitted models the paper's rule chains: a large group's Psi sums
        its small interactions with every other column, so it stays the
        largest and absorbs one column after another (see
        :ref:`agreed_fitted`). On images merges are limited to adjacent
        groups; "auto" is "pairs" with ``n_groups="auto"`` and "paper" with
        an int ``n_groups`` or ``rel_tol``, which lowers the loss most at a
        given number of groups but lets one group grow large. There "pairs"
        counts pairs of initial groups (patches) and scores a union only when
        its bound can win, so a growing group does not re-score its boundary
        after every merge (see :ref:`agreed`). The rule used is
        ``strategy_``.

    initial_groups : None, list of lists, dict, grouper or label map, default=None
        Partition to start from (e.g. one-hot blocks kept together); None
        starts from one group per column on tables. On images None starts
        from each image's colour tree (a binary partition tree of its
        pixels by CIELAB colour and position, built with no model call; see
        :ref:`image_maps`), cut into ``max_evaluations // 10`` regions (128
        at ``"auto"``; at most one per pixel, so small images start from
        their pixels): regions that follow the objects' edges, which merging
        squares cannot undo. For images also an image grouper such as
        ``PatchGrouper(4)`` or ``SuperpixelGrouper()`` (fitted on the
        images), or a label map of shape (H, W); the paper's squares
        (``PatchGrouper(16)``) reproduce its experiments; see :ref:`agreed`.

    response_method : {"auto", "predict", "predict_proba", "decision_function", "log_odds", "margin"}, default="auto"
        Model output to group on. "auto" groups a model on the scale on
        which it is a sum over trees or terms: ``predict_proba`` for random
        forests, extra trees and decision trees (a forest's probability is
        the mean of its trees'); else a classifier's ``decision_function``
        when it has one (gradient boosting, linear models, SVMs); else
        "log_odds", the log-odds of ``predict_proba``; ``predict`` for
        regressors; "margin", the raw score, for XGBoost, LightGBM and
        CatBoost models (see :class:`Explainer` and :ref:`output_scale`:
        through a sigmoid every column interacts with every other). The
        choice made is ``response_method_``.

    target : class label or int, default=None
        Output to group on (see :class:`Explainer`); None uses all outputs,
        with the loss summed over them.

    n_jobs : int, default=None
        Joblib workers over chunks of hybrid rows; on an image model, the
        runtime's threads instead (see :class:`ImageModel`).

    random_state : int, RandomState instance or None, default=None
        Draws the N sample rows.

    max_memory : int, str or None, default=None
        Largest size of the anchored values held at once, in bytes or as a
        string such as ``"512MB"``; None uses scikit-learn's
        ``working_memory`` (:func:`sklearn.set_config`). A ValueError gives the size needed when
        one N x N block does not fit. Not used on the tree path, which never
        holds the N x N values.

    verbose : int, default=0
        Show a progress bar over merges when positive (on images, over the
        model evaluations, with their budget as the total and the time
        left); silent by default, so also inside ``GridSearchCV``.

    algorithm : {"auto", "tree", "model_agnostic"}, default="auto"
        How the N x N anchored values are computed. "tree" reads their row
        and column sums exactly from the flattened trees of a scikit-learn
        tree ensemble (one walk per tree for all N rows, no model calls and
        no N x N block in memory); "auto" does so when the model allows it
        (see :class:`~skdecomp.Explainer`) and calls the model otherwise;
        "model_agnostic" always calls the model.

    max_group_size : int or None, default=None
        The largest number of columns (pixels, for images) of a group. A
        merge whose union would have more is not a candidate; when the group
        of largest Psi has no admissible partner, the next group is taken,
        and merging stops when no admissible merge is left (``stop_reason_``
        is then ``"max_group_size"``). Initial groups larger than the bound
        are kept as they are and never merged. None sets no bound, except
        on images with ``n_groups="auto"`` and the "pairs" rule, where it is
        a quarter of the image (``max_group_size_``): no group then covers
        more of the image, so the map stays informative, and
        ``useful_partition_`` says when that leaves the explainers
        disagreeing.

    max_evaluations : int, "auto" or None, default="auto"
        Images: the most model evaluations per image (f(x), f(b), and two
        per group or union scored). "auto" is 10 per initial group with
        ``n_groups="auto"`` and the "pairs" rule, else no bound. Merging
        stops when they are spent (``stop_reason_`` "max_evaluations").

    group_penalty : float, default=0.02
        The price of a pair of columns joined, as a share of the variance of
        the model output, on tables of up to 20 columns; on a table of d > 20
        columns the price is ``group_penalty * 20 / d``: the interactions a
        fitted model learns by chance are shared out among more partners,
        while a true pair term keeps its size (on 68 columns with three pair
        terms of 3-6 % of the variance, a fixed price merged all three in 1
        of 8 fitted models, this one in 8 of 8, and nothing on additive
        models). Below, ``group_penalty`` stands for that price. With
        ``n_groups="auto"`` a merge must lower the
        held-out loss by more than ``group_penalty * Var(f)`` times the
        column pairs it joins that interact, plus a quarter of that for
        every other column pair it joins: a pair of initial groups
        interacts when merging it alone lowers the loss on the sample by
        ``group_penalty * Var(f)`` per column pair. So a true pair term that
        links a column to a group of four pays for one pair and a quarter
        of three, and is merged; a merge that joins no interacting pair
        pays for all ``a * b`` column pairs of its groups of a and b
        columns, so many small interactions of a large group cost what they
        are worth. :meth:`score` subtracts ``group_penalty`` per pair of
        columns that share a group. A pure pair interaction term that
        carries a share s of the variance lowers the loss by 2 s when its
        columns are merged, so the default merges pair terms above 1 % of
        the variance. 0 keeps every merge whose gain
        exceeds its sampling error (on fitted models, where small
        interactions are everywhere, that merges most columns).
        ``Explainer(group_penalty=..., groups=AdaptiveGrouper())`` passes its
        own value on.

    image_shape : tuple of int or None, default=None
        Set it (or pass images of shape (n, H, W) or (n, H, W, C)) for
        per-image AGREED (see :ref:`agreed`): every image x passed to
        :meth:`fit` gets its own partition, learned on the mixture
        Q = (delta_x + delta_b) / 2 of the image and its baseline b (N = 2),
        with loss ``1/4 sum_k (Arch_k - Occ_k)**2``; merges are limited to
        adjacent groups, so groups stay connected. (H, W) or (H, W, C) of
        flattened rows (C order: row, column, channel); all channels of a
        pixel are in one group. ``max_samples``, ``random_state`` and
        ``algorithm`` are not used. Estimators get flattened rows; a
        plain callable gets batches of images of shape (n, *image_shape).
        All groups and all adjacent pairs are evaluated in one batch, then
        only the new group's pairs after each merge;
        images are merged in lockstep, so each round is one batch over all
        images; a batch holds at most ``min(max_memory, 64 MiB)`` of hybrid
        images.

    adjacency : {"4", "8"}, default="4"
        Images: groups are adjacent when their pixels touch through a side
        ("4") or also through a corner ("8").

    baseline : {"zeros", "mean", "blur"}, array-like or None, default=None
        Images: the baseline image b. "zeros" is black; "mean" the mean
        image of a reference set passed as ``fit(X, reference=images)``
        (never of the explained images); "blur" each image blurred by a
        Gaussian of standard deviation ``max(H, W) / 8`` pixels; an array
        of the image's shape is that image. None is "zeros", except inside
        ``Explainer(baseline=...)``, which passes its baseline image on.

    imputer : {"marginal", "path_dependent", "conditional"} or sampler, \
            default="marginal"
        The game whose interactions are measured (see :ref:`imputation` and
        :class:`~skdecomp.Explainer`). Under ``"marginal"`` a group's PDP
        and PFI effects differ by its interactions with the other groups;
        under ``"conditional"`` also by its dependence on them, so columns
        that are strongly dependent are merged even in an additive model
        (the groups then make conditional explanations agree); under
        ``"path_dependent"`` (tree models) by the interactions of the trees'
        cover-weighted game. The conditional sampler is fitted on the data
        given to :meth:`fit`; every value averages ``max_samples`` draws,
        taken in two independent halves so that the noise of the draws does
        not add to the loss (see :ref:`imputation`).
        Tabular data only.

    Attributes
    ----------
    groups_ : list of list of int
        Column positions of each group, ordered by their first column (int64
        arrays on images).
    labels_ : ndarray of shape (n_features_in_,)
        Group index of every column.
    n_groups_ : int
    group_names_ : ndarray of str
        Column names of each group joined by ``":"``.
    group_features_ : list of list of str
        Column names of each group: ``feature_names_in_``, or ``"x0"``,
        ``"x1"``, ... without them.
    history_ : list of dict
        One entry per merge, in order, with keys ``"groups"`` (the two merged
        groups, as column lists; on images int64 arrays, read-only views in
        the order of the tree's leaves), ``"names"``, ``"score"`` (the loss decrease
        or interaction strength), ``"loss_before"``, ``"loss_after"``,
        ``"n_groups"`` (after the merge), ``"model_calls"`` (so far),
        ``"held_out_loss_before"``, ``"held_out_loss_after"`` and
        ``"held_out_error"`` (the loss on the held-out rows and the
        standard error of its decrease, with ``n_groups="auto"``, else
        None), ``"held_out_price"`` (the price of the merge on the held-out
        rows, see ``group_penalty``: the smallest decrease that pays for it;
        None without held-out rows) and ``"accepted"`` (False for a merge
        refused on the held-out rows, which is not in ``groups_``).
    path_ : list of dict
        Tables: every partition along the merges, from the initial one, and
        past the stopping point (unless ``n_groups`` is a number) to a
        single group, to a loss of 0, or until the merges past the stop
        have cost as much as those up to it. Keys: ``"n_groups"``,
        ``"merged"`` (the names of the two groups merged into it, None for
        the initial partition), ``"loss"`` (on the sample),
        ``"held_out_loss"`` (None without held-out rows),
        ``"largest_group"`` (columns of the largest group),
        ``"remaining_share"`` (the disagreement left: the share of the
        initial loss, held-out when there are held-out rows) and
        ``"chosen"`` (True for ``groups_``). :meth:`cut` gives the groups of
        any of them; :meth:`GroupingDisplay.from_estimator
        <skdecomp.plot.GroupingDisplay.from_estimator>` draws the
        trade-off. Images (the first image, "pairs" rule): past the stop at
        no price while the evaluations last (at most as many again), with
        the keys ``"n_groups"``, ``"merged"``, ``"loss"``,
        ``"largest_group"`` (pixels), ``"largest_share"`` (of the image),
        ``"effective_n_groups"`` (``exp(-sum_k p_k log p_k)``, ``p_k`` the
        area share of group k), ``"remaining_share"``,
        ``"loss_share_of_variance"``, ``"model_evaluations"`` and
        ``"chosen"``.
    loss_ : float
        AGREED loss of the final partition on the sample.
    remaining_share_ : float
        Share of the initial AGREED loss that the final partition leaves,
        on the held-out rows with ``n_groups="auto"`` and on the sample
        otherwise (0 when the initial loss is 0).
    useful_partition_ : bool
        False when the final partition leaves more than half of the initial
        loss (``remaining_share_ > 0.5``): the interactions are spread over
        many pairs of columns, and no partition at this price makes the
        explainers agree; the groups are then close to the columns and the
        disagreement stays (see :ref:`agreed_fitted`). Also False when
        several columns end in a single group: the explainers then agree
        only because they no longer tell any column apart. Images: the
        first image's, and True also when its loss is at most 5 % of the
        output variance on {x, b} (the maps already agree).
    held_out_initial_loss_ : float or None
        With ``n_groups="auto"``, the AGREED loss of the initial partition on
        the held-out rows.
    stop_reason_ : str
        Why merging stopped: ``"n_groups"`` (``n_groups`` groups, or a
        single group, were reached), ``"rel_tol"`` (the loss fell to
        ``rel_tol`` times the initial loss, or to zero), ``"held_out"``
        (``n_groups="auto"``: the next merge did not pay on the held-out
        rows, or it would leave a single group), ``"max_group_size"`` (every
        remaining merge would exceed ``max_group_size``),
        ``"connectivity"`` (images: no two adjacent groups are left),
        ``"price"`` (images: the best merge does not pay its price) or
        ``"max_evaluations"`` (images). For images, the first image's.
    stop_reasons_ : list of str
        Images: the ``stop_reason_`` of every image.
    initial_loss_ : float
        AGREED loss of the initial partition.
    strategy_ : str
        The merge rule used: ``"pairs"`` or ``"paper"``.
    max_group_size_ : int or None
        Images: the bound on the pixels of a group that was used.
    initial_groups_ : list of list of int
        The partition merging started from (int64 arrays on images).
    initial_group_names_ : ndarray of str
        Names of the groups of ``initial_groups_``.
    model_calls_ : int
        Rows sent to the model during fit (only the N sample rows on the tree
        path).
    algorithm_ : str
        ``"tree"`` or ``"model_agnostic"``, with the reason in parentheses
        when "auto" could not take the tree path.
    estimator_ : estimator
        The fitted model.
    background_ : ndarray or DataFrame
        The N sample rows.
    expected_value_ : float or ndarray
        Mean model output over the sample.
    n_outputs_ : int
    output_names_ : list of str
    response_method_ : str
        The response method grouped on: ``"predict"``, ``"predict_proba"``,
        ``"decision_function"``, ``"log_odds"`` or ``"margin"``.
    label_maps_ : ndarray of shape (n_images, H, W)
        Images only: the partition of every image; ``groups_``, ``labels_``,
        ``history_``, ``loss_`` and the other attributes above describe the
        first image's, and ``background_`` is its baseline.
    label_map_ : ndarray of shape (H, W)
        Images only: the first image's partition (group ``k`` of
        ``groups_`` is label ``k``).
    initial_label_maps_ : ndarray of shape (n_images, H, W)
        Images only: the partitions merging started from.
    colour_trees_ : list of ColourTree or None
        Images only: each image's colour tree (its ``cut(n)``, ``linkage(n)``
        and ``n_blocks`` leaves) when ``initial_groups=None``, else None.
    merges_ : list of ndarray of shape (n_merges, 2)
        Images only: per image, the merges in order, each as one initial
        group id of either side (see :meth:`cut_label_map`).
    losses_, initial_losses_ : ndarray of shape (n_images,)
        Images only: final and initial loss of every image.
    baseline_images_ : ndarray of shape (n_images, *image_shape)
        Images only: the baseline of every image.
    image_shape_ : tuple
        Images only: (H, W) or (H, W, C).
    model_batches_ : int
        Images only: number of calls to the model (batches of hybrid images).
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    PairwiseGrouper : All pairwise interactions, then clustering.
    CorrelationGrouper : Clustering of column dependence, model-free.

    References
    ----------
    "Tackling the XAI Disagreement Problem with Adaptive Feature Grouping".
    ICLR 2026.

    Examples
    --------
    >>> from skdecomp import AdaptiveGrouper
    >>> from skdecomp.datasets import make_agreed_example
    >>> data = make_agreed_example(n_samples=300, random_state=0)
    >>> grouper = AdaptiveGrouper(data.function, max_samples=60, rel_tol=0,
    ...                           random_state=0).fit(data.data)
    >>> grouper.groups_
    [[0, 1], [2, 3], [4], [5]]
    """

    _parameter_constraints = {
        "estimator": _MODEL_CONSTRAINT,
        "max_samples": [Interval(Integral, 2, None, closed="left")],
        "n_groups": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "rel_tol": [Interval(Real, 0, 1, closed="both"), None],
        "merge_score": [StrOptions({"loss", "interaction"})],
        "strategy": [StrOptions({"auto", "pairs", "paper"})],
        "initial_groups": [None, list, tuple, dict, HasMethods(["fit"]), np.ndarray],
        "response_method": [
            StrOptions({"auto", "predict", "predict_proba", "decision_function", "log_odds",
                        "margin"})
        ],
        "target": "no_validation",
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "max_memory": [Interval(Integral, 1, None, closed="left"), str, None],
        "verbose": ["verbose"],
        "max_group_size": [Interval(Integral, 1, None, closed="left"), None],
        "max_evaluations": [Interval(Integral, 1, None, closed="left"),
                            StrOptions({"auto"}), None],
        "group_penalty": [Interval(Real, 0, None, closed="left")],
        "image_shape": [tuple, list, None],
        "adjacency": [StrOptions({"4", "8"})],
        "baseline": [StrOptions({"zeros", "mean", "blur"}), "array-like", None],
        "algorithm": [StrOptions({"auto", "tree", "model_agnostic"})],
        "imputer": [
            StrOptions({"marginal", "path_dependent", "conditional"}),
            HasMethods(["fit", "sample"]),
        ],
    }

    def __init__(
        self,
        estimator=None,
        *,
        max_samples=100,
        n_groups="auto",
        rel_tol=None,
        merge_score="loss",
        strategy="auto",
        initial_groups=None,
        response_method="auto",
        target=None,
        n_jobs=None,
        random_state=None,
        max_memory=None,
        verbose=0,
        algorithm="auto",
        max_group_size=None,
        max_evaluations="auto",
        group_penalty=0.02,
        image_shape=None,
        adjacency="4",
        baseline=None,
        imputer="marginal",
    ):
        self.estimator = estimator
        self.max_samples = max_samples
        self.n_groups = n_groups
        self.rel_tol = rel_tol
        self.merge_score = merge_score
        self.strategy = strategy
        self.initial_groups = initial_groups
        self.response_method = response_method
        self.target = target
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_memory = max_memory
        self.verbose = verbose
        self.algorithm = algorithm
        self.imputer = imputer
        self.max_group_size = max_group_size
        self.max_evaluations = max_evaluations
        self.group_penalty = group_penalty
        self.image_shape = image_shape
        self.adjacency = adjacency
        self.baseline = baseline


    @_fit_context(prefer_skip_nested_validation=False)
    @transactional_fit
    def fit(self, X, y=None, *, reference=None):
        """Learn the groups by greedy merges.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Tabular rows; or images of shape (n_images, H, W[, C]), or
            flattened images with ``image_shape``, each grouped on its own.
        y : array-like of shape (n_samples,) or None
            Target, needed only to fit an unfitted model (tabular data).
        reference : array-like of images or None, default=None
            Images only: the reference set whose mean image is the baseline
            when ``baseline="mean"``.

        Returns
        -------
        self : AdaptiveGrouper
            The fitted grouper.
        """
        if self.image_shape is not None or image_ndim(X) in (3, 4):
            return self._fit_images(X, reference)
        if reference is not None:
            raise ValueError(
                "reference= gives the images of baseline='mean'; it is used only "
                "for images (set image_shape or pass images of shape (n, H, W[, C]))."
            )
        return self._fit_table(X, y)

    def _fit_table(self, X, y):
        """Tabular AGREED: the merge loop on the anchored statistics of N rows."""
        X = self._check_X(X, reset=True)
        feature_names = getattr(self, "feature_names_in_", None)
        initial, names = resolve_groups(self.initial_groups, X.shape[1], feature_names)
        rng = check_random_state(self.random_state)
        auto = not isinstance(self.n_groups, Integral) and self.rel_tol is None
        self.strategy_ = self.strategy
        if self.strategy == "auto":
            self.strategy_ = "pairs" if self.rel_tol is None else "paper"
        # groups are kept in the order of their first column
        order = np.argsort([int(g[0]) for g in initial], kind="stable")
        groups = [initial[k] for k in order]
        names = [names[k] for k in order]
        held = None
        if auto:
            game, held_rows = self._fit_model(X, y, rng, held_out=True)
            ev = self._sample(game)
            held_stats = AnchoredStatistics(
                game, held_rows, max_memory=self.max_memory, what="the held-out rows"
            )
            leaf_gains = {}
            price = column_pair_price(self.group_penalty, X.shape[1])
            held = _HeldOutScore(held_stats, groups, price * held_stats.variance,
                                 leaf_gains, price * ev.variance, ev)
        else:
            leaf_gains = None
            ev = self._sample(self._fit_model(X, y, rng))
        bar = _progress(self.verbose, len(groups) - 1, "AGREED merges")
        (tree,) = greedy_merges(
            ev,
            [groups],
            n_groups=self.n_groups if isinstance(self.n_groups, Integral) else None,
            rel_tol=0.0 if self.rel_tol is None else self.rel_tol,
            merge_score=self.merge_score,
            order="first",
            progress=bar,
            max_group_size=self.max_group_size,
            accept=held,
            strategy=self.strategy_,
            path=not isinstance(self.n_groups, Integral),
            leaf_gains=None if leaf_gains is None else [leaf_gains],
        )
        bar.close()
        # a merged group is named after its two parts, in merge order
        full = tree.with_tail()
        for a, b in full.children:
            names.append(f"{names[a]}:{names[b]}")
        self._set_merges([tree], groups, names, held_out=held)
        self.model_calls_ = ev.model_calls + (0 if held is None else held.stats.model_calls)
        # a merge refused on the held-out rows stays in the history, not in the groups
        n_final = tree.n_leaves - tree.n_merges + (tree.stop_reason == "held_out")
        nodes, labels = cut(tree, n_final)
        self._set_partition(self._cut_groups(labels), [names[k] for k in nodes])
        if tree.stop_reason == "held_out":
            self.loss_ = tree.losses[-2]
        n_kept = tree.n_merges - (tree.stop_reason == "held_out")
        sizes = dict(n_groups=self.n_groups_, n_initial=len(groups))
        if held is None:
            self._set_remaining(self.initial_loss_, self.loss_, ev.variance, **sizes)
        else:
            self._set_remaining(held.losses[0], held.losses[n_kept], held.stats.variance,
                                **sizes)
        self._set_path(full, names, n_kept, held,
                       ev.variance if held is None else held.stats.variance)
        return self

    def _set_path(self, full, names, n_kept, held, variance):
        """``path_``: every partition along the merges, past the stop too."""
        sizes = {k: len(g) for k, g in enumerate(self.initial_groups_)}
        largest = max(sizes.values())
        base = held.losses[0] if held is not None else full.losses[0]
        tiny = _ATOL * max(variance, np.finfo(float).tiny)
        self._path_tree = full
        self.path_ = []
        for t in range(full.n_merges + 1):
            merged = None
            if t:
                a, b = full.children[t - 1]
                sizes[full.n_leaves + t - 1] = sizes[a] + sizes[b]
                largest = max(largest, sizes[a] + sizes[b])
                merged = (names[a], names[b])
            held_loss = held.losses[t] if held is not None and t < len(held.losses) else None
            left = held_loss if held is not None else full.losses[t]
            self.path_.append({
                "n_groups": full.n_leaves - t,
                "merged": merged,
                "loss": full.losses[t],
                "held_out_loss": held_loss,
                "largest_group": int(largest),
                "remaining_share": (
                    None if left is None else float(left / base) if base > tiny else 0.0
                ),
                "chosen": t == n_kept,
            })

    def _set_remaining(self, initial, final, variance, n_groups=None, n_initial=None,
                       agreeing=None):
        """Set remaining_share_ and useful_partition_ from the loss before and after.

        A single group of every column leaves no loss, but it is no partition
        either: the explanation no longer tells any column apart. With
        ``agreeing`` (images), a loss of at most that share of the variance
        counts as agreement whatever share of the initial loss it leaves.
        """
        tiny = _ATOL * max(variance, np.finfo(float).tiny)
        self.remaining_share_ = float(max(final, 0.0) / initial) if initial > tiny else 0.0
        one_group = n_groups == 1 and n_initial is not None and n_initial > 1
        agrees = agreeing is not None and final <= agreeing * variance
        self.useful_partition_ = bool(
            (self.remaining_share_ <= _USEFUL_SHARE or agrees) and not one_group
        )

    def score(self, X, y=None):
        """Held-out agreement of the learned groups; higher is better.

        The score of :meth:`Explainer.score`: ``-L / Var(f) - group_penalty
        * P``, with L the AGREED loss of ``groups_`` and Var(f) the variance
        of the model output on a sample of X (``max_samples`` rows, all of
        them when X has fewer) and P the number of pairs of columns that
        share a group (beyond 20 columns ``group_penalty`` is scaled by ``20
        / d``, as in ``fit``). A merge of groups of a and b columns raises it only
        when it removes more than ``group_penalty * a * b`` of the variance,
        so ``GridSearchCV`` over ``n_groups`` finds where merging stops
        paying (see :ref:`agreed_fitted`). ``group_penalty`` is the price
        this score charges, so it cannot be tuned by this same score: a
        smaller price always scores a finer partition higher. Choose it for
        the size of groups you can read, or compare the partitions of
        ``path_``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Held-out rows.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Higher is better; 0 is the largest possible value.
        """
        check_is_fitted(self)
        if getattr(self, "image_shape_", None) is not None:
            raise ValueError(
                "score compares rows of a table with each other; a grouper fitted "
                "on images has one partition per image and no held-out rows to "
                "score it on."
            )
        X = self._check_X(X, reset=False)
        return agreement_score(self.game_, X, self.groups_, self.group_penalty,
                               size=self.max_samples, random_state=self.random_state)

    def _set_merges(self, trees, initial_groups, names, images=False, held_out=None):
        """Set the merge history of the first tree, and the merges of every image.

        ``initial_groups`` holds the columns of the first tree's leaves and
        ``names`` the name of every node of that tree.
        """
        self._trees = trees
        tree = trees[0]
        # images: int64 arrays (millions of columns), tables: lists
        self.initial_groups_ = [np.asarray(g, dtype=np.int64) if images
                                else [int(c) for c in g] for g in initial_groups]
        self.initial_group_names_ = np.asarray(names[: tree.n_leaves], dtype=object)
        leaves = tree.leaves()
        if images:
            # every node's columns as a view of one array, the leaves in the
            # order of the tree (millions of columns, many merges)
            flat, span = _leaf_ordered(tree, self.initial_groups_)
            self.initial_groups_ = [flat[span[k][0]:span[k][1]]
                                    for k in range(len(self.initial_groups_))]

        def columns(node):
            if images:
                return flat[span[node][0]:span[node][1]]
            return sorted(c for k in leaves[node] for c in self.initial_groups_[k])

        self.history_ = [
            {
                "groups": (columns(a), columns(b)),
                "names": (names[a], names[b]),
                "score": tree.scores[t],
                "loss_before": tree.losses[t],
                "loss_after": tree.losses[t + 1],
                "n_groups": tree.n_leaves - t - 1,
                "model_calls": tree.model_calls[t],
                "held_out_loss_before": None if held_out is None else held_out.losses[t],
                "held_out_loss_after": None if held_out is None else held_out.losses[t + 1],
                "held_out_error": None if held_out is None else held_out.errors[t],
                "held_out_price": None if held_out is None else held_out.prices[t],
                "accepted": not (
                    tree.stop_reason == "held_out" and t == len(tree.children) - 1
                ),
            }
            for t, (a, b) in enumerate(tree.children)
        ]
        self.held_out_initial_loss_ = None if held_out is None else held_out.losses[0]
        self.initial_loss_ = tree.losses[0]
        self.loss_ = tree.losses[-1]
        self.stop_reason_ = tree.stop_reason
        if images:
            # each merge as the first initial group of either side
            self.merges_ = []
            for t in trees:
                first = t.first_leaves()
                pairs = [[first[a], first[b]] for a, b in t.children]
                self.merges_.append(np.array(pairs, dtype=np.int64).reshape(-1, 2))
            self.losses_ = np.array([t.losses[-1] for t in trees])
            self.initial_losses_ = np.array([t.losses[0] for t in trees])

    def _cut_groups(self, labels):
        """Columns of every group, from the group of every initial group."""
        groups = [[] for _ in range(int(labels.max()) + 1)]
        for k, g in zip(labels, self.initial_groups_):
            groups[k].append(np.asarray(g, dtype=np.int64))
        if getattr(self, "image_shape_", None) is not None:  # images: int arrays
            return [np.sort(np.concatenate(g)) for g in groups]
        return [np.sort(np.concatenate(g)).tolist() for g in groups]

    def cut(self, n_groups):
        """The partition with ``n_groups`` groups along the merge path.

        Parameters
        ----------
        n_groups : int
            Between the end of the merge path (``path_``, which goes past
            ``n_groups_`` for tables) and the number of initial groups.

        Returns
        -------
        groups : list of list of int
            Column positions of each group, ordered by their first column.
        """
        check_is_fitted(self)
        tree = getattr(self, "_path_tree", self._trees[0])
        check_cut(tree, n_groups)
        _, labels = cut(tree, n_groups)
        return self._cut_groups(labels)


def _leaf_ordered(tree, initial_groups):
    """The leaves' columns in the tree's order, and each node's (start, stop) in it.

    The leaves under a node are consecutive in a depth-first order of the
    tree, so each node's columns are one slice of a single array.
    """
    n_nodes = tree.n_leaves + len(tree.children)
    children = {tree.n_leaves + t: ab for t, ab in enumerate(tree.children)}
    used = {c for ab in tree.children for c in ab}
    roots = [n for n in range(n_nodes) if n not in used]
    order = []
    for root in roots:
        stack = [root]
        while stack:
            node = stack.pop()
            if node in children:
                a, b = children[node]
                stack.extend((b, a))  # a first
            else:
                order.append(node)
    sizes = np.array([len(initial_groups[k]) for k in order], dtype=np.int64)
    start = dict(zip(order, np.r_[0, np.cumsum(sizes)[:-1]].tolist()))
    span = {k: (start[k], start[k] + len(initial_groups[k])) for k in order}
    for node in range(tree.n_leaves, n_nodes):
        a, b = children[node]
        span[node] = (min(span[a][0], span[b][0]), max(span[a][1], span[b][1]))
    flat = (np.concatenate([initial_groups[k] for k in order]) if order
            else np.zeros(0, dtype=np.int64))
    flat.setflags(write=False)  # shared by every view
    return flat, span
