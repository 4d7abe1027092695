"""AGREED on fitted models: semi-synthetic problems, no chaining, the score.

The problems are real columns of scikit-learn's bundled tables with a target
of known blocks (``make_semi_synthetic``); the groupers see only the model
fitted to them. ``benchmarks/bench_fitted_grouping.py`` runs the full
comparison; these tests keep a few of its runs.
"""

import functools
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import GridSearchCV

from skdecomp import AdaptiveGrouper, Explainer, PairwiseGrouper, RecursiveGrouper
from skdecomp._partition import group_labels
from skdecomp.datasets import make_agreed_example, make_semi_synthetic

from .test_grouper import naive_loss


def _truth(data):
    return group_labels([np.asarray(g) for g in data.groups], data.data.shape[1])


def _hgb(data, seed):
    model = HistGradientBoostingRegressor(max_iter=300, learning_rate=0.05, random_state=seed)
    return model.fit(data.data, data.target)


# -- the generator -----------------------------------------------------------------
@pytest.mark.parametrize("table, d", [("diabetes", 9), ("wine", 12), ("breast_cancer", 13)])
def test_semi_synthetic_blocks_and_target(table, d):
    data = make_semi_synthetic(table, noise=0.0, random_state=3)
    X = data.data
    assert X.shape[1] == d and list(X.columns) == data.feature_names
    sizes = sorted(len(g) for g in data.groups if len(g) > 1)
    assert sizes == [2, 2, 3]
    assert sorted(j for g in data.groups for j in g) == list(range(d))
    assert data.n_groups == len(data.groups) == d - 4
    # columns within a block are not strongly dependent
    corr = X.corr(method="spearman").abs().to_numpy()
    for g in data.groups:
        for i in g:
            for j in g:
                assert i == j or corr[i, j] < 0.5
    # noise=0: the target is the function of the real columns
    np.testing.assert_allclose(data.target, data.function(X.to_numpy()), atol=1e-12)
    # the function is additive over the true groups: its AGREED loss is 0 there
    S = X.to_numpy()[:25]
    assert naive_loss(data.function, S, data.groups) < 1e-20
    assert naive_loss(data.function, S, [[j] for j in range(d)]) > 1e-2


def test_semi_synthetic_bootstrap_and_seed():
    a = make_semi_synthetic("wine", n_samples=500, random_state=0)
    b = make_semi_synthetic("wine", n_samples=500, random_state=0)
    assert a.data.shape == (500, 12)
    np.testing.assert_array_equal(a.data.to_numpy(), b.data.to_numpy())
    np.testing.assert_array_equal(a.target, b.target)
    with pytest.raises(ValueError, match="block_sizes"):
        make_semi_synthetic("diabetes", block_sizes=(5, 5))
    with pytest.raises(ValueError, match="block_sizes"):
        make_semi_synthetic("diabetes", block_sizes=(1, 2))


# -- no chaining -------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("table, seed", [("breast_cancer", 2), ("wine", 0), ("wine", 1)])
def test_default_agreed_does_not_chain_on_a_fitted_model(table, seed):
    data = make_semi_synthetic(table, n_samples=2000, random_state=seed)
    model = _hgb(data, seed)
    d, K, truth = data.data.shape[1], data.n_groups, _truth(data)
    default = AdaptiveGrouper(model, random_state=0).fit(data.data)
    reference = PairwiseGrouper(model, n_groups=K, random_state=0).fit(data.data)
    assert max(len(g) for g in default.groups_) <= d / 2
    ari = adjusted_rand_score(truth, default.labels_)
    assert ari >= adjusted_rand_score(truth, reference.labels_) - 0.1
    assert ari > 0.2
    # Shapley Sets on its default finds groups too, not one of all columns
    recursive = RecursiveGrouper(model, random_state=0).fit(data.data)
    assert max(len(g) for g in recursive.groups_) <= d / 2


@pytest.mark.slow
def test_paper_order_without_price_chains_where_the_default_does_not():
    # the run of benchmarks/bench_fitted_diagnosis.py: 8 spurious merges
    data = make_semi_synthetic("breast_cancer", n_samples=2000, random_state=0)
    model = _hgb(data, 0)
    d = data.data.shape[1]
    chained = AdaptiveGrouper(model, strategy="paper", group_penalty=0.0,
                              random_state=0).fit(data.data)
    assert max(len(g) for g in chained.groups_) > d / 2
    default = AdaptiveGrouper(model, random_state=0).fit(data.data)
    assert max(len(g) for g in default.groups_) <= 3
    # the true pairs the model learned are merged first by both
    first = [sorted(map(sorted, h["groups"])) for h in chained.history_[:2]]
    assert all(sorted(map(sorted, h["groups"])) in first for h in default.history_[:2])


@pytest.mark.parametrize("penalty", [0.0, 0.005, 0.02])
def test_held_out_price_is_per_column_pair(penalty):
    """A merge is kept iff its held-out gain beats its SE and its price per pair."""
    data = make_semi_synthetic("breast_cancer", n_samples=600, random_state=0)
    X = data.data
    model = _hgb(data, 0)
    N = 40
    g = AdaptiveGrouper(model, max_samples=N, group_penalty=penalty, random_state=0).fit(X)
    # the held-out rows the grouper drew, and the model's variance on them
    perm = np.random.RandomState(0).permutation(X.shape[0])
    held = X.iloc[np.sort(perm[N : 2 * N])]
    var = model.predict(held).var()
    assert g.held_out_initial_loss_ == pytest.approx(
        naive_loss(model.predict, held.to_numpy(), g.initial_groups_), rel=1e-9)
    # a column pair interacts when its merge alone pays one pair's price on
    # the sample; a merge pays for those pairs and a quarter of the others,
    # or for all its pairs when it joins none that interacts
    S = g.background_.to_numpy()
    unit = penalty * model.predict(g.background_).var()

    def f(Z):
        return model.predict(pd.DataFrame(Z, columns=X.columns))

    psi = [naive_loss(f, S, [[a]]) for a in range(X.shape[1])]

    @functools.cache
    def interacts(a, b):
        return psi[a] + psi[b] - naive_loss(f, S, [[a, b]]) >= unit

    for h in g.history_:
        gain = h["held_out_loss_before"] - h["held_out_loss_after"]
        pairs = len(h["groups"][0]) * len(h["groups"][1])
        linked = sum(interacts(a, b) for a in h["groups"][0] for b in h["groups"][1])
        charged = linked + 0.25 * (pairs - linked) if linked else pairs
        assert h["held_out_price"] == pytest.approx(penalty * max(charged, 1) * var,
                                                    rel=1e-6, abs=1e-15)
        assert h["accepted"] == (gain > max(h["held_out_error"], h["held_out_price"]))
    assert [h["accepted"] for h in g.history_[:-1]] == [True] * (len(g.history_) - 1)
    kept = [h for h in g.history_ if h["accepted"]]
    final = kept[-1]["held_out_loss_after"] if kept else g.held_out_initial_loss_
    assert g.remaining_share_ == pytest.approx(final / g.held_out_initial_loss_)
    assert g.useful_partition_ == (g.remaining_share_ <= 0.5)
    if penalty == 0.0:  # the loss alone: the fitted model's small interactions chain
        assert len(g.history_) > len(
            AdaptiveGrouper(model, max_samples=N, random_state=0).fit(X).history_
        )


# -- when no partition helps ---------------------------------------------------------
def test_no_useful_partition_when_interactions_are_spread():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 6))

    def spread(Z):  # every pair interacts, each with 6 % of the variance
        return np.asarray(Z).sum(axis=1) ** 2

    g = AdaptiveGrouper(spread, max_samples=40, group_penalty=1.0, random_state=0).fit(X)
    assert g.n_groups_ == 6 and g.stop_reason_ == "held_out"
    assert g.remaining_share_ == pytest.approx(1.0)
    assert not g.useful_partition_
    data = make_agreed_example(400, random_state=0)
    g = AdaptiveGrouper(data.function, max_samples=40, random_state=0).fit(data.data)
    assert g.groups_ == data.groups
    assert g.remaining_share_ < 1e-12 and g.useful_partition_


# -- the score ---------------------------------------------------------------------
def test_grouper_score_matches_explainer_score_and_formula():
    data = make_agreed_example(400, random_state=1)
    f = data.function
    g = AdaptiveGrouper(f, max_samples=30, n_groups=3, group_penalty=0.05,
                        random_state=0).fit(data.data)
    S = data.data[:30]
    pairs = sum(len(c) * (len(c) - 1) // 2 for c in g.groups_)
    expected = -naive_loss(f, S, g.groups_) / f(S).var() - 0.05 * pairs
    assert g.score(S) == pytest.approx(expected, rel=1e-10)
    ex = Explainer(f, groups=g.groups_, background=30, group_penalty=0.05).fit(data.data)
    assert ex.score(S) == pytest.approx(expected, rel=1e-10)
    with pytest.raises(ValueError, match="at least 2 rows"):
        g.score(S[:1])


@pytest.mark.slow
@pytest.mark.parametrize("table, seed", [("diabetes", 0), ("diabetes", 2), ("wine", 0)])
def test_gridsearch_n_groups_on_fitted_semi_synthetic(table, seed):
    data = make_semi_synthetic(table, n_samples=2000, random_state=seed)
    model = _hgb(data, seed)
    d = data.data.shape[1]
    grid = list(range(2, d + 1))
    search = GridSearchCV(
        Explainer(FrozenEstimator(model), groups=AdaptiveGrouper(), random_state=0),
        {"groups__n_groups": grid}, cv=3,
    ).fit(data.data)
    picked = search.best_params_["groups__n_groups"]
    assert abs(grid.index(picked) - grid.index(data.n_groups)) <= 1, (picked, data.n_groups)
