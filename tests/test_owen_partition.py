"""The Owen value by the partition recursion (``method_params={"estimator": "partition"}``).

Expanded everywhere it is the Owen value (the brute-force mean over the
orders consistent with the hierarchy in ``_naive``); at any budget the
values add up to f(x) - E_B f, the totals of the root's children are exact
once the root is expanded, and the budget is kept.
"""

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage
from sklearn.base import BaseEstimator, RegressorMixin

from skdecomp import Explainer
from skdecomp._hierarchy import Hierarchy
from skdecomp._methods._owen import owen_coalition_count
from skdecomp._methods._owen_partition import _one_row, check_partition_budget

from ._naive import hierarchical_value


def interacting_model(X):
    return (X[:, 0] * X[:, 1] - 2 * X[:, 2] * X[:, 3] * X[:, 4] + np.sin(X[:, 5])
            + X[:, 1] * X[:, 5] + 0.5 * X[:, 4] ** 2)


class Fitted(RegressorMixin, BaseEstimator):
    """A fitted regressor whose prediction is ``interacting_model``."""

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return interacting_model(np.asarray(X, dtype=np.float64))


NESTED = [[[0, 1], 2], [[3, [4, 5]]]]


def nested_to_hierarchy(spec, K):
    children = []

    def build(node):
        if isinstance(node, int):
            return node
        ids = [build(c) for c in node]
        if len(ids) == 1:
            return ids[0]
        children.append(ids)
        return K + len(children) - 1

    build(spec)
    return Hierarchy(K, children)


def game_of(x, z):
    def v(S):
        row = z.copy()
        row[list(S)] = x[list(S)]
        return float(interacting_model(row[None])[0])
    return v


def brute_owen(x, z, spec, K):
    from itertools import combinations

    v = game_of(x, z)
    values = {S: v(S) for r in range(K + 1) for S in combinations(range(K), r)}
    return hierarchical_value(values, K, spec)


@pytest.mark.parametrize("spec", [NESTED, [[0, 1, 2], [3, 4], [5]], [0, 1, 2, 3, 4, 5]])
def test_expanded_everywhere_it_is_the_owen_value(spec):
    rng = np.random.default_rng(0)
    x, z = rng.normal(size=6), rng.normal(size=6)
    h = nested_to_hierarchy(spec, 6)
    v = game_of(x, z)

    def value(masks):
        return np.array([[v(np.flatnonzero(m))] for m in masks])

    phi = _one_row(value, h, 10**6, np.array([v(())]), np.array([v(range(6))]),
                   np.ones(6))[:, 0]
    np.testing.assert_allclose(phi, brute_owen(x, z, spec, 6), atol=1e-12)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 6))
    return X, Fitted().fit(X)


def partition(model, X, hierarchy, budget, background=None):
    return Explainer(model, method="owen", hierarchy=hierarchy, n_samples=budget,
                     background=X[:1] if background is None else background,
                     method_params={"estimator": "partition"}).fit(X)


def test_values_add_up_and_root_children_totals_are_exact_at_any_budget(data):
    X, model = data
    Z = linkage(np.random.default_rng(2).normal(size=(6, 3)), "average")
    exact = Explainer(model, method="owen", hierarchy=Z, background=X[:2]).fit(X)
    h = exact.hierarchy_
    phi_exact = exact.transform(X[5:9])
    prediction = model.predict(X[5:9]) - model.predict(X[:2]).mean()
    for budget in (2, 4, 8, 16, 30):
        phi = partition(model, X, Z, budget, background=X[:2]).transform(X[5:9])
        np.testing.assert_allclose(phi.sum(axis=1), prediction, atol=1e-12)
        for child in h.children[-1]:  # the root's children: one context each
            leaves = h.leaves[child]
            np.testing.assert_allclose(phi[:, leaves].sum(axis=1),
                                       phi_exact[:, leaves].sum(axis=1), atol=1e-12)


def test_a_larger_budget_comes_closer_and_the_budget_is_kept(data):
    X, model = data
    calls = {"n": 0}

    class Counting(Fitted):
        def predict(self, X):
            calls["n"] += len(X)
            return super().predict(X)

    counting = Counting().fit(X)
    Z = linkage(np.random.default_rng(3).normal(size=(6, 2)), "single")
    exact = Explainer(model, method="owen", hierarchy=Z, background=X[:1]).fit(X)
    phi_exact = exact.transform(X[7:8])[0]
    errors = []
    count = owen_coalition_count(exact.hierarchy_)  # 62: a chain of 5 splits
    for budget in (2, 6, 14, 30, count - 2):
        e = partition(counting, X, Z, budget)
        calls["n"] = 0
        phi = e.transform(X[7:8])[0]
        assert calls["n"] <= budget + 1  # the budget, and f(x)
        errors.append(np.abs(phi - phi_exact).sum())
    assert errors == sorted(errors, reverse=True), errors
    assert errors[-1] < 0.1 * errors[0]


def test_no_standard_errors_and_clear_refusals(data):
    X, model = data
    e = partition(model, X, [[0, 1, 2], [3, 4, 5]], 2)  # the root needs 2 coalitions
    assert e.explain(X[:2], methods=["owen"])["owen"].standard_errors is None
    with pytest.raises(ValueError, match=r"root has 3 children.*n_samples >= 6"):
        partition(model, X, [[0, 1], [2, 3], [4, 5]], 4)  # refused in fit
    e = partition(model, X, [[0, 1], [2, 3], [4, 5]], 6).set_params(n_samples=4)
    with pytest.raises(ValueError, match=r"root has 3 children.*n_samples >= 6"):
        e.transform(X[:1])  # and in transform, when set after fit
    with pytest.raises(ValueError, match="choose 'permutation'"):
        Explainer(model, method="owen", hierarchy=NESTED,
                  method_params={"estimator": "tree"}).fit(X)
    # a chain over 60 players: 2**61 coalitions for the exact value
    chain = Hierarchy(60, [[0, 1]] + [[59 + t, t + 1] for t in range(1, 59)])
    assert check_partition_budget(chain, 10**4) == 10**4
    with pytest.raises(ValueError, match="largest budget that fits"):
        check_partition_budget(chain, 10**13)


def test_several_outputs_and_rows_each_add_up_and_follow_their_own_priorities():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(4)
    X = rng.normal(size=(120, 6))
    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5)
    model = LogisticRegression(max_iter=500).fit(X, y)  # three classes
    Z = linkage(rng.normal(size=(6, 3)), "complete")
    exact = Explainer(model, method="owen", hierarchy=Z, background=X[:3],
                      response_method="predict_proba").fit(X)
    got = Explainer(model, method="owen", hierarchy=Z, background=X[:3], n_samples=6,
                    response_method="predict_proba",
                    method_params={"estimator": "partition"}).fit(X)
    phi, phi_exact = got.transform(X[:4]), exact.transform(X[:4])
    assert phi.shape == phi_exact.shape == (4, 6, 3)
    np.testing.assert_allclose(phi.sum(axis=1), phi_exact.sum(axis=1), atol=1e-12)
    h = got.hierarchy_
    for child in h.children[-1]:
        leaves = h.leaves[child]
        np.testing.assert_allclose(phi[:, leaves].sum(axis=1),
                                   phi_exact[:, leaves].sum(axis=1), atol=1e-12)
    # each row alone gives its own values (its own priorities)
    for i in range(4):
        np.testing.assert_allclose(got.transform(X[i:i + 1])[0], phi[i], atol=1e-15)
    assert np.abs(phi - phi_exact).max() > 1e-6  # 6 coalitions do not expand everything


def test_owen_asked_of_another_method_takes_the_recursion_at_a_small_budget(data):
    # explain(methods=["owen"]) of an occlusion explainer: below the sampled Owen
    # value's smallest budget (40 for 6 groups) the default estimator ("auto") is
    # the partition recursion, whatever the explainer's own method
    X, model = data
    Z = linkage(np.random.default_rng(2).normal(size=(6, 3)), "average")
    e = Explainer(model, method="occlusion", hierarchy=Z, n_samples=12,
                  background=X[:1]).fit(X)
    res = e.explain(X[:3], methods=["owen"])
    np.testing.assert_array_equal(np.asarray(res["owen"].values),
                                  partition(model, X, Z, 12).transform(X[:3]))
    assert res["owen"].standard_errors is None
    # a budget that covers every coalition of the hierarchy gives the exact value
    count = owen_coalition_count(e.hierarchy_)
    e = Explainer(model, method="occlusion", hierarchy=Z, n_samples=count,
                  background=X[:1]).fit(X)
    exact = Explainer(model, method="owen", hierarchy=Z, background=X[:1]).fit(X)
    np.testing.assert_allclose(np.asarray(e.explain(X[:3], methods=["owen"])["owen"].values),
                               exact.transform(X[:3]), atol=1e-12)
