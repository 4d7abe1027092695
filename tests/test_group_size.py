"""The ``max_group_size`` bound of every grouper."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdecomp import (
    AdaptiveGrouper,
    CorrelationGrouper,
    IShapGrouper,
    PairwiseGrouper,
    RecursiveGrouper,
)
from skdecomp.datasets import make_agreed_example


def _random_model(d, seed):
    """A model with random pairwise interactions among d columns."""
    rng = np.random.RandomState(seed)
    weights = rng.normal(size=(d, d)) * (rng.random_sample((d, d)) < 0.6)
    linear = rng.normal(size=d)

    def f(X):
        X = np.asarray(X, dtype=float)
        return X @ linear + np.einsum("ni,ij,nj->n", X, np.triu(weights, 1), X)

    return f, rng.normal(size=(30, d))


@settings(max_examples=20, deadline=None)
@given(
    d=st.integers(2, 6),
    bound=st.integers(1, 6),
    seed=st.integers(0, 10_000),
    which=st.sampled_from([
        "agreed", "agreed_interaction", "agreed_auto", "pairwise", "correlation",
        "recursive", "ishap",
    ]),
    n_groups=st.sampled_from([None, 1, 2]),
    linkage=st.sampled_from(["single", "average", "complete"]),
)
def test_no_group_exceeds_max_group_size(d, bound, seed, which, n_groups, linkage):
    f, X = _random_model(d, seed)
    if which == "agreed_auto":
        grouper = AdaptiveGrouper(
            f, max_samples=8, group_penalty=0.0, max_group_size=bound, random_state=seed
        )
    elif which.startswith("agreed"):
        score = "interaction" if which == "agreed_interaction" else "loss"
        grouper = AdaptiveGrouper(
            f, max_samples=8, rel_tol=0, n_groups=n_groups, merge_score=score,
            max_group_size=bound, random_state=seed,
        )
    elif which in ("recursive", "ishap"):
        cls = RecursiveGrouper if which == "recursive" else IShapGrouper
        kwargs = {} if which == "recursive" else {"test_samples": 40}
        grouper = cls(f, max_samples=8, n_groups=n_groups, max_group_size=bound,
                      random_state=seed, **kwargs)
    elif which == "pairwise":
        grouper = PairwiseGrouper(
            f, max_samples=8, n_groups=n_groups, linkage=linkage,
            min_interaction=1e-3, pair_score="loss", max_group_size=bound,
            random_state=seed,
        )
    else:
        grouper = CorrelationGrouper(
            n_groups, distance_threshold=1.0, linkage=linkage, max_group_size=bound
        )
    grouper.fit(X)
    assert max(len(g) for g in grouper.groups_) <= bound
    assert sorted(c for g in grouper.groups_ for c in g) == list(range(d))
    if which.startswith("agreed"):
        assert all(len(sum(h["groups"], [])) <= bound for h in grouper.history_)
        assert grouper.stop_reason_ in {"n_groups", "rel_tol", "max_group_size", "held_out"}
        if grouper.stop_reason_ == "max_group_size":
            # no two remaining groups fit together
            sizes = sorted(len(g) for g in grouper.groups_)
            assert len(sizes) < 2 or sizes[0] + sizes[1] > bound
    if which in ("recursive", "ishap") and n_groups is not None and (
        grouper.n_groups_ > n_groups
    ):
        # only the bound stops merging early: no two groups fit together
        assert grouper.stop_reason_ == "max_group_size"
        sizes = sorted(len(g) for g in grouper.groups_)
        assert sizes[0] + sizes[1] > bound


def test_agreed_still_merges_interacting_pairs_with_bound():
    data = make_agreed_example(n_samples=300, random_state=0)
    grouper = AdaptiveGrouper(
        data.function, max_samples=60, rel_tol=0, max_group_size=2, random_state=0
    ).fit(data.data)
    assert grouper.groups_ == [[0, 1], [2, 3], [4], [5]]
    # a tight bound removes merges; the reason is recorded
    single = AdaptiveGrouper(
        data.function, max_samples=60, rel_tol=0, max_group_size=1, random_state=0
    ).fit(data.data)
    assert single.n_groups_ == 6 and single.history_ == []
    assert single.stop_reason_ == "max_group_size"
    free = AdaptiveGrouper(
        data.function, max_samples=60, rel_tol=0, random_state=0
    ).fit(data.data)
    assert free.stop_reason_ == "rel_tol"


def test_agreed_bound_takes_next_group():
    # x0 interacts with x1 and x2; with groups of at most 2 columns x0 pairs
    # with one of them, and the other still merges with its own partner x3
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 4))

    def f(X):
        return 3 * X[:, 0] * X[:, 1] + 2 * X[:, 0] * X[:, 2] + X[:, 2] * X[:, 3]

    grouper = AdaptiveGrouper(f, max_samples=50, rel_tol=0, max_group_size=2,
                              random_state=0).fit(X)
    assert max(len(g) for g in grouper.groups_) <= 2
    assert grouper.groups_ == [[0, 1], [2, 3]]
    assert grouper.stop_reason_ == "max_group_size"


def test_loose_bound_changes_nothing():
    data = make_agreed_example(n_samples=200, random_state=1)
    a = AdaptiveGrouper(data.function, max_samples=40, rel_tol=0, random_state=0)
    b = AdaptiveGrouper(data.function, max_samples=40, rel_tol=0, random_state=0,
                        max_group_size=6)
    assert a.fit(data.data).history_ == b.fit(data.data).history_
    rng = np.random.RandomState(0)
    X = rng.normal(size=(50, 7))
    X[:, 1] += X[:, 0]
    X[:, 3] += 0.5 * X[:, 2]
    for linkage in ("single", "average", "complete"):
        for n_groups in (None, 3):
            free = CorrelationGrouper(n_groups, linkage=linkage).fit(X)
            bounded = CorrelationGrouper(n_groups, linkage=linkage, max_group_size=7).fit(X)
            assert free.groups_ == bounded.groups_


def test_correlation_bound_splits_a_block():
    rng = np.random.RandomState(0)
    z = rng.normal(size=(100, 1))
    X = z + 0.01 * rng.normal(size=(100, 4))
    assert CorrelationGrouper().fit(X).groups_ == [[0, 1, 2, 3]]
    groups = CorrelationGrouper(max_group_size=2).fit(X).groups_
    assert sorted(len(g) for g in groups) == [2, 2]


def test_max_group_size_images():
    # a product of every pixel: unbounded, the whole image becomes one group
    images = np.random.RandomState(0).uniform(0.5, 1.5, size=(2, 4, 4))

    def f(x):
        return np.prod(x.reshape(len(x), -1), axis=1)

    free = AdaptiveGrouper(f, rel_tol=0).fit(images)
    assert free.n_groups_ == 1
    for bound in (1, 3, 5):
        grouper = AdaptiveGrouper(f, rel_tol=0, max_group_size=bound).fit(images)
        for labels in grouper.label_maps_:
            assert np.bincount(labels.ravel()).max() <= bound
        assert grouper.stop_reason_ == "max_group_size"
        if bound == 1:
            assert grouper.n_groups_ == 16 and not grouper.history_


@pytest.mark.parametrize(
    "grouper",
    [
        AdaptiveGrouper(lambda X: X.sum(1), max_group_size=0),
        PairwiseGrouper(lambda X: X.sum(1), max_group_size=0),
        CorrelationGrouper(max_group_size=0),
    ],
)
def test_max_group_size_validated(grouper):
    with pytest.raises(ValueError, match="max_group_size"):
        grouper.fit(np.random.RandomState(0).normal(size=(10, 3)))
