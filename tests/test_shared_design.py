"""Several sampled methods from one design of coalitions (``_methods._shared``)."""

import itertools

import numpy as np
import pytest

from skdecomp import Explainer
from skdecomp.metrics import disagreement

from ._naive import banzhaf, game, shapley

METHODS = ["kernel_shap", "permutation_shap", "lime", "rise"]
K = 6


def _model(X):
    X = np.asarray(X, dtype=float)
    return np.tanh(X[:, 0] * X[:, 1] - X[:, 2] + 0.5 * X[:, 3] * X[:, 4] * X[:, 5]) + X[:, 1]


class Counted:
    def __init__(self):
        self.rows = 0

    def __call__(self, X):
        self.rows += len(X)
        return _model(X)


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(40, K)
    X[:3, 4] = X[3, 4]  # a group equal to one background row for some rows
    return X


def _rise_naive(v, p=0.5):
    """E_M[v(M) M_k] / p by enumeration; v maps sorted tuples to values."""
    out = np.zeros(K)
    for S, value in v.items():
        prob = p ** len(S) * (1 - p) ** (K - len(S))
        for j in S:
            out[j] += prob * value / p
    return out


def test_every_coalition_gives_each_closed_form(data):
    # a budget over every coalition: each method's exact value, with several
    # background rows (the mean game) and dummy groups
    bg = data[3:6]
    ex = Explainer(_model, background=bg, n_samples=1 << K, random_state=0).fit(data)
    res = ex.explain(data[:3], methods=METHODS)
    groups = [[j] for j in range(K)]
    for r in range(3):
        v = game(_model, data[r], bg, groups)
        np.testing.assert_allclose(res.kernel_shap.values[r], shapley(v, K), atol=1e-12)
        np.testing.assert_allclose(res.permutation_shap.values[r], shapley(v, K),
                                   atol=1e-12)
        # LIME with a constant kernel and p = 1/2 is the Banzhaf value
        np.testing.assert_allclose(res.lime.values[r], banzhaf(v, K), atol=1e-12)
        np.testing.assert_allclose(res.rise.values[r], _rise_naive(v), atol=1e-12)
        for m in METHODS:
            np.testing.assert_array_equal(res[m].standard_errors[r], 0.0)


def test_kernel_shap_is_the_same_alone_and_with_others(data):
    ex = Explainer(_model, background=data[3:8], n_samples=60, random_state=3).fit(data)
    alone = ex.explain(data[:4], methods=["kernel_shap"]).kernel_shap.values
    together = ex.explain(data[:4], methods=METHODS).kernel_shap.values
    np.testing.assert_allclose(alone, together, rtol=0, atol=1e-12)


def test_the_result_depends_on_the_seed_and_the_methods_only(data):
    ex = Explainer(_model, background=data[3:8], n_samples=60, random_state=3).fit(data)
    one = ex.explain(data[:4], methods=METHODS)
    two = ex.explain(data[:4], methods=METHODS[::-1])
    for m in METHODS:
        np.testing.assert_array_equal(one[m].values, two[m].values)
        np.testing.assert_array_equal(one[m].standard_errors, two[m].standard_errors)
    # the same design for any two of them: permutation SHAP with LIME or RISE
    a = ex.explain(data[:4], methods=["permutation_shap", "lime"]).permutation_shap
    b = ex.explain(data[:4], methods=["permutation_shap", "rise"]).permutation_shap
    np.testing.assert_array_equal(a.values, b.values)
    other = ex.set_params(random_state=4).explain(data[:4], methods=METHODS)
    assert not np.allclose(other.lime.values, one.lime.values)


def test_one_set_of_model_calls(data):
    counted = Counted()
    ex = Explainer(counted, background=data[3:8], n_samples=60, random_state=0).fit(data)
    calls = {}
    for methods in [[m] for m in METHODS] + [METHODS]:
        counted.rows = 0
        ex.explain(data[:2], methods=methods)
        calls["+".join(methods)] = counted.rows
    # the explained rows are predicted once per call
    assert calls["+".join(METHODS)] <= max(calls[m] for m in METHODS)
    assert calls["+".join(METHODS)] == calls["kernel_shap"]


def _random_game(seed):
    r = np.random.RandomState(seed)
    terms = [(r.choice(8, o, replace=False), r.randn() / o)
             for o in (1, 2, 3) for _ in range(12)]

    def f(M):
        M = np.asarray(M, dtype=float)
        return sum(c * np.prod(M[:, t], axis=1) for t, c in terms)
    return f


def test_each_method_is_no_less_accurate_than_alone():
    # random games of 8 groups with exact values, 10 seeds each: each
    # method's mean squared error from the shared design at most its own
    x, z = np.ones((1, 8)), np.zeros((1, 8))
    own = {m: 0.0 for m in METHODS}
    shared = {m: 0.0 for m in METHODS}
    for g in range(3):
        f = _random_game(g)
        ref = Explainer(f, background=z, n_samples=256).fit(x).explain(x, methods=METHODS)
        for s in range(10):
            ex = Explainer(f, background=z, n_samples=80, random_state=s).fit(x)
            together = ex.explain(x, methods=METHODS)
            for m in METHODS:
                alone = ex.explain(x, methods=[m])[m].values
                own[m] += np.mean((alone - ref[m].values) ** 2)
                shared[m] += np.mean((together[m].values - ref[m].values) ** 2)
    for m in METHODS:
        assert shared[m] <= own[m] * (1 + 1e-12), (m, shared[m], own[m])


@pytest.mark.slow
def test_intervals_of_methods_and_differences_cover(data):
    # 95 % intervals over 40 seeds: each method and each difference of two
    bg = data[3:7]
    rows = data[10:14]
    ref = Explainer(_model, background=bg, n_samples=1 << K).fit(data).explain(
        rows, methods=METHODS)
    hits = {}
    for s in range(40):
        res = Explainer(_model, background=bg, n_samples=48, random_state=s).fit(
            data).explain(rows, methods=METHODS)
        for m in METHODS:
            err = np.abs(res[m].values - ref[m].values)
            hits.setdefault(m, []).append(err <= 1.96 * res[m].standard_errors + 1e-12)
        for a, b in itertools.combinations(METHODS, 2):
            err = np.abs(res[a].values - res[b].values - ref[a].values + ref[b].values)
            se = res[a].difference_standard_errors[b]
            np.testing.assert_array_equal(se, res[b].difference_standard_errors[a])
            hits.setdefault((a, b), []).append(err <= 1.96 * se + 1e-12)
    for key, h in hits.items():
        assert np.mean(h) >= 0.9, (key, np.mean(h))


def test_the_noise_floor_uses_the_error_of_the_difference(data):
    ex = Explainer(_model, background=data[3:8], n_samples=60, random_state=0).fit(data)
    res = ex.explain(data[:5], methods=["kernel_shap", "rise"])
    d = disagreement({"kernel_shap": res.kernel_shap, "rise": res.rise})
    se = res.kernel_shap.difference_standard_errors["rise"]
    assert d.noise_floor == pytest.approx(np.mean(se**2), rel=1e-12)
    # given standard errors are taken as independent
    given = disagreement(
        {"kernel_shap": res.kernel_shap, "rise": res.rise},
        standard_errors={"kernel_shap": res.kernel_shap.standard_errors,
                         "rise": res.rise.standard_errors})
    assert given.noise_floor == pytest.approx(np.mean(
        res.kernel_shap.standard_errors**2 + res.rise.standard_errors**2), rel=1e-12)
    # explanations from separate calls carry no difference
    alone = ex.explain(data[:5], methods=["rise"]).rise
    assert alone.difference_standard_errors == {}


def test_lime_with_the_distance_kernel_keeps_its_own_design(data):
    params = {"kernel": "distance"}
    ex = Explainer(_model, background=data[3:8], n_samples=60, method="lime",
                   method_params=params, random_state=0).fit(data)
    res = ex.explain(data[:3], methods=["lime", "rise"])
    np.testing.assert_array_equal(res.lime.values, ex.transform(data[:3]))
    assert "lime" not in res.rise.difference_standard_errors


def test_several_outputs_share_the_design(data):
    def two(X):
        return np.c_[_model(X), np.sin(np.asarray(X)[:, 0])]

    ex = Explainer(two, background=data[3:6], n_samples=60, random_state=1).fit(data)
    both = ex.explain(data[:3], methods=METHODS)
    for t in (0, 1):
        one = Explainer(two, background=data[3:6], n_samples=60, random_state=1,
                        target=t).fit(data).explain(data[:3], methods=METHODS)
        for m in METHODS:
            np.testing.assert_allclose(both[m].values[:, :, t], one[m].values, atol=1e-12)
            np.testing.assert_allclose(both[m].standard_errors[:, :, t],
                                       one[m].standard_errors, atol=1e-12)


def test_a_long_call_is_announced_with_its_estimate(data, monkeypatch):
    import skdecomp._game._game as game_module

    monkeypatch.setattr(game_module, "LONG_RUN_SECONDS", 0.0)
    ex = Explainer(_model, background=data[3:8], n_samples=60, batch_size=50,
                   random_state=0).fit(data)
    with pytest.warns(UserWarning, match=r"sends [\d,]+ rows to .* at the speed of its "
                      r"first [\d,]+\. Set verbose=1"):
        ex.explain(data[:1], methods=METHODS)
    monkeypatch.setattr(game_module, "LONG_RUN_SECONDS", 1e9)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ex.explain(data[:1], methods=METHODS)
