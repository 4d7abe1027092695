import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skdecomp import MAX_EXACT_GROUPS, Decomposition, Explainer

from . import _naive
from .conftest import random_function, random_partition

METHODS = ["shapley", "banzhaf", "occlusion", "arch", "pdp", "pfi"]


def _oracle(f, X, background, groups, method):
    K = len(groups)
    out = []
    for x in X:
        v = _naive.game(f, x, background, groups)
        out.append(_naive.METHODS[method](v, K))
    return np.array(out)


@pytest.mark.parametrize("K", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("single_baseline", [False, True])
def test_every_method_equals_powerset_oracle(K, single_baseline):
    d = K + 2
    f = random_function(K, d)
    rng = np.random.default_rng(K)
    X = rng.normal(size=(40, d))
    groups = random_partition(K, d, K)
    background = X[3] if single_baseline else 4
    n_explain = 2 if K == 8 else 3
    explainer = Explainer(f, groups=groups, background=background, random_state=K)
    explainer.fit(X)
    bg = explainer.background_
    assert bg.shape == ((1, d) if single_baseline else (4, d))
    res = explainer.explain(X[:n_explain], methods=METHODS)
    for method in METHODS:
        expected = _oracle(f, X[:n_explain], bg, groups, method)
        np.testing.assert_allclose(res[method], expected, atol=1e-10, rtol=0)
    # Möbius components against inclusion-exclusion on the brute-force game
    dec = explainer.decompose(X[:1])
    v = _naive.game(f, X[0], bg, groups)
    for U, val in _naive.moebius(v, K).items():
        assert dec[U][0] == pytest.approx(val, abs=1e-10)


def test_shapley_is_permutation_average():
    f = random_function(3, 4)
    X = np.random.default_rng(3).normal(size=(10, 4))
    e = Explainer(f, groups=[[0], [1, 2], [3]], background=3, random_state=0).fit(X)
    v = _naive.game(f, X[0], e.background_, e.groups_)
    np.testing.assert_allclose(
        e.transform(X[:1])[0], _naive.shapley_by_permutations(v, 3), atol=1e-12
    )


def _group_game(f, x, background, groups):
    v = _naive.game(f, x, background, groups)

    def game(coalitions):
        coalitions = np.atleast_2d(coalitions)
        return np.array([v[tuple(np.flatnonzero(c))] for c in coalitions])

    return game


def test_equals_shapiq_exact_computer():
    shapiq = pytest.importorskip("shapiq")
    K = 5
    f = random_function(11, 7)
    X = np.random.default_rng(11).normal(size=(20, 7))
    groups = random_partition(11, 7, K)
    e = Explainer(f, groups=groups, background=5, random_state=1).fit(X)
    dec = e.decompose(X[:2])
    phi = e.transform(X[:2])
    for i in range(2):
        ec = shapiq.ExactComputer(_group_game(f, X[i], e.background_, groups), n_players=K)
        sv = ec("SV", 1)
        np.testing.assert_allclose(
            [sv[(k,)] for k in range(K)], phi[i], atol=1e-8, rtol=0
        )
        mo = ec("Moebius", K)
        for U in dec.subsets:
            assert dec[U][i] == pytest.approx(mo[U], abs=1e-8)


def test_equals_shap_kernel_explainer_with_groups():
    shap = pytest.importorskip("shap")
    from shap.utils._legacy import DenseData

    K = 4
    f = random_function(5, 6)
    X = np.random.default_rng(5).normal(size=(20, 6))
    groups = random_partition(5, 6, K)
    e = Explainer(f, groups=groups, background=6, random_state=2).fit(X)
    bg = e.background_
    data = DenseData(bg, [f"g{k}" for k in range(K)], [np.array(g) for g in groups])
    kernel = shap.KernelExplainer(f, data)
    phi = kernel.shap_values(X[:3], nsamples=2**K - 2, l1_reg=False, silent=True)
    np.testing.assert_allclose(np.asarray(phi), e.transform(X[:3]), atol=1e-8, rtol=0)


def test_identities(rng):
    f = random_function(2, 5)
    X = rng.normal(size=(30, 5))
    e = Explainer(f, groups=[[0, 1], [2], [3, 4]], background=8, random_state=0).fit(X)
    dec = e.decompose(X[:5])
    assert isinstance(dec, Decomposition)
    # completeness: sum_U F_U(x) = f(x), and F_{} = E_B f
    np.testing.assert_allclose(dec.components.sum(axis=1), f(X[:5]), atol=1e-10)
    assert dec.completeness_error() < 1e-10
    np.testing.assert_allclose(dec.expected_value, f(e.background_).mean(), atol=1e-12)
    assert e.expected_value_ == pytest.approx(dec.expected_value)
    # Shapley efficiency
    np.testing.assert_allclose(
        dec.attributions("shapley").sum(axis=1), f(X[:5]) - f(e.background_).mean(), atol=1e-10
    )
    # coalition values round trip
    v = dec.coalition_values()
    np.testing.assert_allclose(v[:, -1], f(X[:5]), atol=1e-10)
    # lookup by names and order sums
    assert np.allclose(dec[("x0:x1", "x2")], dec[(0, 1)])
    np.testing.assert_allclose(
        sum(dec.order(s) for s in range(4)), dec.prediction, atol=1e-10
    )
    frame = dec.to_frame()
    assert list(frame.columns[:2]) == ["baseline", "x0:x1"]
    assert frame.shape == (5, 8)
    assert dec.to_frame(max_order=1).shape == (5, 4)


def test_groupwise_additive_model_all_methods_agree(rng):
    def f(X):
        return np.sin(X[:, 0] * X[:, 1]) + X[:, 2] ** 2 + np.exp(X[:, 3]) * X[:, 4]

    X = rng.normal(size=(40, 5))
    e = Explainer(f, groups=[[0, 1], [2], [3, 4]], background=10, random_state=0).fit(X)
    res = e.explain(X[:6], methods=METHODS)
    for m in METHODS[1:]:
        np.testing.assert_allclose(res[m], res["shapley"], atol=1e-10)
    dec = e.decompose(X[:6])
    for size in (2, 3):
        np.testing.assert_allclose(dec.order(size), 0, atol=1e-10)


def test_single_baseline_closed_forms(rng):
    f = random_function(7, 4)
    X = rng.normal(size=(10, 4))
    b = rng.normal(size=4)
    groups = [[0, 2], [1], [3]]
    e = Explainer(f, groups=groups, background=b).fit(X)
    x = X[:2]
    res = e.explain(x, methods=["arch", "occlusion"])
    for k, g in enumerate(groups):
        xb = np.tile(b, (2, 1))
        xb[:, g] = x[:, g]
        np.testing.assert_allclose(res["arch"][:, k], f(xb) - f(b[None])[0], atol=1e-12)
        bx = x.copy()
        bx[:, g] = b[g]
        np.testing.assert_allclose(res["occlusion"][:, k], f(x) - f(bx), atol=1e-12)


def _mixed_frame(n, seed=0):
    r = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": r.normal(40, 10, n),
            "city": pd.Categorical(r.choice(["a", "b", "c"], n)),
            "income": r.normal(size=n),
            "job": r.choice(["x", "y"], n).astype(object),
        }
    )


def test_pipeline_with_column_transformer_one_attribution_per_raw_column():
    X = _mixed_frame(80)
    y = (
        0.1 * X["age"]
        + X["city"].map({"a": 1.0, "b": -1.0, "c": 0.0}).astype(float)
        + X["income"] * (X["job"] == "x")
    )
    pipe = make_pipeline(
        make_column_transformer(
            (OneHotEncoder(), ["city", "job"]), remainder=StandardScaler()
        ),
        Ridge(alpha=1e-3),
    ).fit(X, y)
    X_in = X.copy()
    e = Explainer(pipe, background=6, random_state=0).fit(X)
    phi = e.transform(X.iloc[:4])
    assert phi.shape == (4, 4)
    assert list(e.get_feature_names_out()) == ["age", "city", "income", "job"]
    pd.testing.assert_frame_equal(X, X_in)
    # oracle: build the hybrid frames by hand
    bg = e.background_
    expected = np.zeros((4, 4))
    for i in range(4):
        v = {}
        for S in _naive.powerset(range(4)):
            rows = bg.copy()
            for k in S:
                col = X.columns[k]
                rows[col] = [X[col].iloc[i]] * len(rows)
            rows = rows.astype(X.dtypes.to_dict())
            v[S] = pipe.predict(rows).mean()
        expected[i] = _naive.shapley(v, 4)
    np.testing.assert_allclose(phi, expected, atol=1e-10)
    # a one-hot block moves as one: the linear model's attribution of "city"
    # is its coefficient on the encoded block times (x - mean over background)
    e.set_output(transform="pandas")
    out = e.transform(X.iloc[:4])
    assert list(out.columns) == ["age", "city", "income", "job"]


def test_groups_by_name_and_dict(rng):
    X = pd.DataFrame(rng.normal(size=(30, 4)), columns=list("abcd"))
    model = LinearRegression().fit(X, X.sum(axis=1))
    e = Explainer(model, groups={"ab": ["a", "b"], "cd": ["c", 3]}, background=5).fit(X)
    assert list(e.get_feature_names_out()) == ["ab", "cd"]
    np.testing.assert_array_equal(e.labels_, [0, 0, 1, 1])
    phi = e.transform(X.iloc[:3])
    bg = e.background_.to_numpy()
    np.testing.assert_allclose(
        phi[:, 0], (X[["a", "b"]].to_numpy() - bg[:, :2].mean(0)).sum(1)[:3], atol=1e-10
    )


def test_classifier_outputs_and_target():
    X, y = make_classification(n_samples=60, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, random_state=0)
    clf = LogisticRegression().fit(X, y)
    e = Explainer(clf, response_method="predict_proba", background=5, random_state=0).fit(X)
    phi = e.transform(X[:3])
    assert phi.shape == (3, 4, 3)
    assert e.output_names_ == ["0", "1", "2"]
    # efficiency per class
    np.testing.assert_allclose(
        phi.sum(axis=1), clf.predict_proba(X[:3]) - clf.predict_proba(e.background_).mean(0), atol=1e-10
    )
    e1 = Explainer(clf, response_method="predict_proba", background=5, random_state=0,
                   target=2).fit(X)
    np.testing.assert_allclose(e1.transform(X[:3]), phi[:, :, 2], atol=1e-12)
    e.set_output(transform="pandas")
    with pytest.raises(ValueError, match="3-D"):
        e.transform(X[:3])
    with pytest.raises(ValueError, match="not a class"):
        Explainer(clf, target=7).fit(X)
    # binary: positive class by default; decision_function of the other class is negated
    yb = (y > 0).astype(int)
    clf2 = LogisticRegression().fit(X, yb)
    eb = Explainer(clf2, background=5, random_state=0).fit(X)
    assert eb.transform(X[:2]).shape == (2, 4)
    assert eb.output_names_ == ["1"]
    d1 = Explainer(clf2, response_method="decision_function", background=5, random_state=0).fit(X)
    d0 = Explainer(clf2, response_method="decision_function", target=0, background=5,
                   random_state=0).fit(X)
    np.testing.assert_allclose(d0.transform(X[:2]), -d1.transform(X[:2]), atol=1e-12)


def test_unfitted_estimator_is_fitted_and_frozen_is_kept(rng):
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, 2.0, 3.0]
    e = Explainer(LinearRegression(), background=5).fit(X, y)
    np.testing.assert_allclose(e.estimator_.coef_, [1, 2, 3], atol=1e-10)
    with pytest.raises(ValueError, match="requires y"):
        Explainer(LinearRegression()).fit(X)
    fitted = LinearRegression().fit(X, 2 * y)
    e2 = Explainer(fitted).fit(X)
    assert e2.estimator_ is fitted
    from sklearn.base import clone

    frozen = clone(Explainer(FrozenEstimator(fitted))).fit(X)
    np.testing.assert_allclose(frozen.estimator_.predict(X), fitted.predict(X))


def test_batch_size_and_n_jobs_do_not_change_results(rng):
    f = random_function(4, 5)
    X = rng.normal(size=(30, 5))
    ref = Explainer(f, background=9, random_state=0).fit(X).transform(X[:4])
    small = Explainer(f, background=9, batch_size=10, random_state=0).fit(X).transform(X[:4])
    par = Explainer(
        HistGradientBoostingRegressor(max_iter=5), background=9, n_jobs=2, batch_size=50, random_state=0
    ).fit(X, f(X))
    seq = Explainer(
        HistGradientBoostingRegressor(max_iter=5), background=9, batch_size=50, random_state=0
    ).fit(X, f(X))
    np.testing.assert_allclose(small, ref, atol=1e-12)
    np.testing.assert_allclose(par.transform(X[:4]), seq.transform(X[:4]), atol=1e-12)


def test_small_jobs_are_split_over_workers(rng):
    """With n_jobs > 1 even a job that fits one batch goes to several workers."""
    import threading

    from joblib import parallel_backend

    f = random_function(4, 5)
    X = rng.normal(size=(30, 5))
    calls = []
    lock = threading.Lock()

    def model(Z):
        with lock:
            calls.append(Z.shape[0])
        return f(Z)

    ref = Explainer(f, background=9, random_state=0).fit(X).transform(X[:4])
    with parallel_backend("threading"):
        exp = Explainer(model, background=9, n_jobs=2, random_state=0).fit(X)
        calls.clear()
        got = exp.transform(X[:4])
    # the 4 rows themselves, then 4 rows x 30 inner coalitions x 9 background
    # rows in two calls of equal size (one batch would hold them all)
    assert sorted(calls) == [4, 540, 540]
    np.testing.assert_allclose(got, ref, atol=1e-12)


def test_inputs_not_modified(rng):
    X = rng.normal(size=(20, 3))
    bg = X[:4].copy()
    X0, bg0 = X.copy(), bg.copy()
    e = Explainer(lambda Z: Z[:, 0] * Z[:, 1], background=bg).fit(X)
    e.transform(X)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(bg, bg0)


# -- errors ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "groups, match",
    [
        ([[0, 1], [1, 2]], "overlap"),
        ([[0, 1]], "miss columns"),
        ([[0, 1], [], [2]], "empty"),
        ([[0, 1], ["q"], [2]], "no column names"),
        ([[0, 1], [5], [2]], "out of range"),
        ("abc", "must be None"),
    ],
)
def test_bad_groups(groups, match, rng):
    X = rng.normal(size=(10, 3))
    with pytest.raises((ValueError, TypeError), match=match):
        Explainer(lambda Z: Z.sum(1), groups=groups).fit(X)


def test_unknown_column_name(rng):
    X = pd.DataFrame(rng.normal(size=(10, 2)), columns=["a", "b"])
    with pytest.raises(ValueError, match="unknown column 'z'"):
        Explainer(lambda Z: Z.sum(1), groups=[["a"], ["b", "z"]]).fit(X)


def test_too_many_groups(rng):
    X = rng.normal(size=(5, MAX_EXACT_GROUPS + 1))
    with pytest.raises(ValueError, match=f"at most {MAX_EXACT_GROUPS} groups"):
        Explainer(lambda Z: Z.sum(1), method="shapley").fit(X)
    # the default method is then a sampled Shapley estimate
    assert Explainer(lambda Z: Z.sum(1)).fit(X).method_ == "permutation_shap"


def test_bad_background(rng):
    X = rng.normal(size=(10, 3))
    with pytest.raises(ValueError, match="0 rows"):
        Explainer(lambda Z: Z.sum(1), background=np.zeros((0, 3))).fit(X)
    with pytest.raises(ValueError, match="3 columns"):
        Explainer(lambda Z: Z.sum(1), background=np.zeros((2, 4))).fit(X)
    Xf = pd.DataFrame(X, columns=list("abc"))
    with pytest.raises(ValueError, match="columns of X"):
        Explainer(lambda Z: Z.sum(1), background=Xf.rename(columns={"a": "q"})).fit(Xf)
    with pytest.raises(ValueError, match="background"):
        Explainer(lambda Z: Z.sum(1), background=0).fit(X)


def test_nan_the_model_cannot_take(rng):
    X = rng.normal(size=(20, 3))
    model = LinearRegression().fit(X, X.sum(1))
    Xn = X.copy()
    Xn[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity.*Impute"):
        Explainer(model).fit(Xn)
    e = Explainer(model).fit(X)
    with pytest.raises(ValueError, match="NaN or infinity"):
        e.transform(Xn)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        e.transform(Xi)
    # a model that takes NaN is explained
    hgb = HistGradientBoostingRegressor(max_iter=5).fit(Xn, X.sum(1))
    phi = Explainer(hgb, background=5, random_state=0).fit(Xn).transform(Xn[:3])
    assert np.isfinite(phi).all()


def test_mismatched_columns_at_transform(rng):
    X = pd.DataFrame(rng.normal(size=(20, 3)), columns=list("abc"))
    e = Explainer(LinearRegression().fit(X, X.sum(axis=1)), background=4).fit(X)
    with pytest.raises(ValueError, match="feature names"):
        e.transform(X.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match="features"):
        e.transform(X.iloc[:, :2].to_numpy())


def test_bad_response_method_and_target(rng):
    X = rng.normal(size=(20, 3))
    reg = LinearRegression().fit(X, X.sum(1))
    with pytest.raises(ValueError, match="has no method 'predict_proba'"):
        Explainer(reg, response_method="predict_proba").fit(X)
    with pytest.raises(ValueError, match="output index"):
        Explainer(reg, target=3).fit(X)
    with pytest.raises(ValueError, match="method"):
        Explainer(reg, method="nope").fit(X)


def test_model_without_sklearn_tags(rng):
    class Plain:
        def predict(self, X):
            return np.asarray(X)[:, 0] * 2.0

    X = rng.normal(size=(20, 3))
    phi = Explainer(Plain(), background=5, random_state=0).fit(X).transform(X[:2])
    bg = X[np.sort(np.random.RandomState(0).choice(20, 5, replace=False))]
    np.testing.assert_allclose(phi[:, 0], 2 * (X[:2, 0] - bg[:, 0].mean()), atol=1e-12)
    np.testing.assert_allclose(phi[:, 1:], 0, atol=1e-12)
