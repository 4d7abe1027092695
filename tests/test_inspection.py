"""Grouped global explanations and interaction statistics."""

import numpy as np
import pandas as pd
import pytest
from sklearn import inspection as skinspection
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdecomp import Explainer
from skdecomp._game._kernels import pair_interaction_strengths
from skdecomp.inspection import (
    _anchored_effects,
    agreed_loss,
    cost_of_exclusion,
    h_statistic,
    importance,
    interaction_matrix,
    partial_dependence,
    permutation_importance,
)

GROUPS = [[0, 1], [2], [3]]


def additive(X):
    return X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + X[:, 3] ** 2


def interacting(X):
    return X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + X[:, 3] + X[:, 0] * X[:, 2] + X[:, 1] * X[:, 2] * X[:, 3]


@pytest.fixture(scope="module")
def data():
    return np.random.RandomState(0).normal(size=(25, 4))


def _explainer(f, X, groups=GROUPS):
    # background = the rows themselves, so B = D = X
    return Explainer(f, groups=groups, background=X).fit(X)


def _brute_pdp_pfi(f, X, groups):
    """Local PDP and PFI of each group by explicit loops.

    PDP_k(x^n) = mean_m f(x^n_k, x^m_-k) - mean_m f(x^m) and
    PFI_k(x^n) = f(x^n) - mean_m f(x^m_k, x^n_-k), with the rows as background.
    """
    N = len(X)
    pdp = np.zeros((N, len(groups)))
    pfi = np.zeros((N, len(groups)))
    mean_f = f(X).mean()
    for k, cols in enumerate(groups):
        for n in range(N):
            h = X.copy()
            h[:, cols] = X[n, cols]
            pdp[n, k] = f(h).mean() - mean_f
            h = np.repeat(X[n:n + 1], N, axis=0)
            h[:, cols] = X[:, cols]
            pfi[n, k] = f(X[n:n + 1])[0] - f(h).mean()
    return pdp, pfi


def _pair_components(dec):
    K = dec.n_groups
    return {(i, j): dec[(i, j)] for i in range(K) for j in range(i + 1, K)}


# -- anchored matrices -------------------------------------------------------------------
def test_anchored_effects_duality(data):
    X = data
    G, fx = _anchored_effects(_explainer(interacting, X), X)
    assert G.shape == (3, 25, 25, 1) and fx.shape == (25, 1)
    assert np.all(G[:, np.arange(25), np.arange(25)] == 0)
    pdp, pfi = _brute_pdp_pfi(interacting, X, GROUPS)
    np.testing.assert_allclose(G[..., 0].mean(axis=2).T, pdp, atol=1e-10)
    np.testing.assert_allclose(-G[..., 0].mean(axis=1).T, pfi, atol=1e-10)
    # a plain response function with groups gives the same matrices
    G2, _ = _anchored_effects(interacting, X, groups=GROUPS)
    np.testing.assert_allclose(G2, G, atol=1e-12)
    # pair masks: G_{0u1} - G_0 - G_1 has row means F_01
    Gp, _ = _anchored_effects(interacting, X, groups=GROUPS, masks=[0b011, 0b001, 0b010])
    dec = _explainer(interacting, X).decompose(X)
    I01 = Gp[0] - Gp[1] - Gp[2]
    np.testing.assert_allclose(I01[..., 0].mean(axis=1), dec[(0, 1)], atol=1e-10)


@pytest.mark.parametrize("f", [additive, interacting])
def test_agreed_loss_equals_direct_definition(data, f):
    X = data
    pdp, pfi = _brute_pdp_pfi(f, X, GROUPS)
    direct = ((pdp - pfi) ** 2).mean(axis=0)
    explainer = _explainer(f, X)
    per_group = agreed_loss(explainer, X, per_group=True)
    np.testing.assert_allclose(per_group, direct, atol=1e-10)
    np.testing.assert_allclose(agreed_loss(explainer), direct.sum(), atol=1e-10)
    dec = explainer.decompose(X)
    via_dec = ((dec.attributions("pdp") - dec.attributions("pfi")) ** 2).mean(axis=0)
    np.testing.assert_allclose(per_group, via_dec, atol=1e-10)
    if f is additive:
        assert agreed_loss(explainer, X) <= 1e-20
    else:
        assert np.all(per_group > 1e-3)


@pytest.mark.parametrize("f", [additive, interacting])
def test_cost_of_exclusion_equals_between_group_components(data, f):
    X = data
    explainer = _explainer(f, X)
    dec = explainer.decompose(X)
    sizes = np.array([bin(m).count("1") for m in range(8)])
    expected = (dec.components[:, sizes >= 2].sum(axis=1) ** 2).mean()
    got = cost_of_exclusion(explainer, X)
    np.testing.assert_allclose(got, expected, atol=1e-10)
    var = f(X).var()
    np.testing.assert_allclose(cost_of_exclusion(explainer, X, normalize=True),
                               expected / var, atol=1e-10)
    assert (got <= 1e-20) == (f is additive)


def test_h_statistic_and_interaction_matrix_from_components(data):
    X = data
    explainer = _explainer(interacting, X)
    dec = explainer.decompose(X)
    F = dec.components
    res = h_statistic(explainer, X)
    pdp, pfi = dec.attributions("arch"), dec.attributions("occlusion")
    var = interacting(X).var()
    np.testing.assert_allclose(res.group, ((pdp - pfi) ** 2).mean(0) / var, atol=1e-10)
    np.testing.assert_allclose(res.variance, var)
    pure = np.zeros((3, 3))
    full = np.zeros((3, 3))
    h2 = np.zeros((3, 3))
    for (i, j), Fij in _pair_components(dec).items():
        pair = (1 << i) | (1 << j)
        pure[i, j] = pure[j, i] = (Fij**2).mean()
        sup = F[:, [m for m in range(8) if m & pair == pair]].sum(axis=1)
        full[i, j] = full[j, i] = (sup**2).mean()
        joint = dec[i] + dec[j] + Fij
        h2[i, j] = h2[j, i] = (Fij**2).mean() / (joint**2).mean()
    np.testing.assert_allclose(res.pairwise, h2, atol=1e-10)
    np.testing.assert_allclose(interaction_matrix(explainer, X, kind="pure"), pure, atol=1e-10)
    np.testing.assert_allclose(interaction_matrix(explainer, X, kind="full"), full, atol=1e-10)
    np.testing.assert_allclose(interaction_matrix(explainer, X), h2, atol=1e-10)
    assert h_statistic(explainer, X, pairwise=False).pairwise is None


def test_interaction_statistics_vanish_for_additive_model(data):
    explainer = _explainer(additive, data)
    res = h_statistic(explainer)
    assert np.all(res.group <= 1e-20) and np.all(res.pairwise <= 1e-20)
    assert np.all(interaction_matrix(explainer, kind="full") <= 1e-20)


def test_importance_from_one_decomposition(data):
    X = data
    for f in (additive, interacting):
        explainer = _explainer(f, X)
        dec = explainer.decompose(X)
        res = importance(explainer, X)
        for key, method in (("pdp", "arch"), ("pfi", "occlusion"), ("shap", "shapley")):
            expected = np.sqrt((dec.attributions(method) ** 2).mean(0))
            np.testing.assert_allclose(res[key], expected, rtol=1e-12)
        sq = importance(decomposition=dec, squared=True)
        np.testing.assert_allclose(sq.pfi, res.pfi**2, rtol=1e-12)
        if f is additive:
            np.testing.assert_allclose(res.pdp, res.pfi, rtol=1e-8)
            np.testing.assert_allclose(res.shap, res.pfi, rtol=1e-8)
        else:
            assert not np.allclose(res.pdp, res.pfi)
    with pytest.raises(ValueError, match="explainer or a decomposition"):
        importance()


def test_pair_kernel_without_jit_and_read_only_inputs():
    rng = np.random.RandomState(0)
    rows, cols = rng.normal(size=(2, 4, 2, 7))
    prow, pcol = rng.normal(size=(2, 3, 2, 7))
    pairs = np.array([[0, 1], [1, 3], [0, 2]], dtype=np.int64)
    for a in (rows, cols, prow, pcol, pairs):
        a.setflags(write=False)
    jit = pair_interaction_strengths(rows, cols, prow, pcol, pairs)
    py = pair_interaction_strengths.py_func(rows, cols, prow, pcol, pairs)
    for a, b in zip(jit, py):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    r = prow[1] - rows[1] - rows[3]
    np.testing.assert_allclose(jit[0][1], (r**2).mean(axis=1).sum())


def test_anchored_functions_accept_dataframes():
    rng = np.random.RandomState(1)
    X = pd.DataFrame(rng.normal(size=(15, 4)), columns=list("abcd"))

    def f(D):
        return interacting(np.asarray(D, dtype=float))

    explainer = Explainer(f, groups={"ab": ["a", "b"], "c": ["c"], "d": ["d"]},
                          background=X).fit(X)
    loss = agreed_loss(explainer)
    pdp, pfi = _brute_pdp_pfi(interacting, X.to_numpy(), GROUPS)
    np.testing.assert_allclose(loss, ((pdp - pfi) ** 2).mean(0).sum(), atol=1e-10)
    assert h_statistic(explainer).group_names == ["ab", "c", "d"]


def test_anchored_errors(data):
    with pytest.raises(ValueError, match="at least 2 rows"):
        agreed_loss(_explainer(additive, data), data[:1])
    with pytest.raises(ValueError, match="X is required"):
        _anchored_effects(additive, None)


# -- permutation importance -------------------------------------------------------------
@pytest.fixture(scope="module")
def regression():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 4))
    y = X @ [1.0, -2.0, 0.5, 0.0] + X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=60)
    return X, y, Ridge().fit(X, y)


@pytest.mark.parametrize("max_samples", [1.0, 0.6, 30])
def test_singleton_groups_reproduce_sklearn(regression, max_samples):
    X, y, model = regression
    kw = dict(n_repeats=4, random_state=7, max_samples=max_samples)
    ours = permutation_importance(model, X, y, **kw)
    ref = skinspection.permutation_importance(model, X, y, **kw)
    for key in ("importances", "importances_mean", "importances_std"):
        np.testing.assert_allclose(ours[key], ref[key], rtol=0, atol=1e-12)
    assert ours.group_names == ["x0", "x1", "x2", "x3"]


def test_multi_metric_scoring_and_sample_weight(regression):
    X, y, model = regression
    w = np.random.RandomState(2).uniform(0.5, 2, size=len(y))
    kw = dict(n_repeats=3, random_state=0, scoring=["r2", "neg_mean_squared_error"],
              sample_weight=w)
    ours = permutation_importance(model, X, y, **kw)
    ref = skinspection.permutation_importance(model, X, y, **kw)
    for name in ("r2", "neg_mean_squared_error"):
        np.testing.assert_allclose(ours[name].importances, ref[name].importances, atol=1e-12)


def test_grouped_importance_permutes_columns_jointly(regression):
    X, y, model = regression
    res = permutation_importance(model, X, y, groups={"a": [0, 1], "c": [2]},
                                 n_repeats=3, random_state=0)
    assert res.importances.shape == (2, 3) and res.group_names == ["a", "c"]
    # by hand: the same shuffle stream applied to both columns of the group
    seed = np.random.RandomState(0).randint(np.iinfo(np.int32).max + 1)
    rs = np.random.RandomState(seed)
    idx = np.arange(len(X))
    Xp = X.copy()
    base = model.score(X, y)
    expected = []
    for _ in range(3):
        rs.shuffle(idx)
        Xp[:, [0, 1]] = Xp[idx][:, [0, 1]]
        expected.append(base - model.score(Xp, y))
    np.testing.assert_allclose(res.importances[0], expected, atol=1e-12)


@pytest.fixture(scope="module")
def categorical():
    rng = np.random.RandomState(0)
    n = 80
    X = pd.DataFrame({
        "cat": rng.choice(["a", "b", "c"], size=n),
        "u": rng.normal(size=n),
        "v": rng.normal(size=n),
    })
    y = (X["cat"] == "b") * 2.0 + X["u"] - X["v"] * (X["cat"] == "c") + 0.1 * rng.normal(size=n)
    encoder = ColumnTransformer([("oh", OneHotEncoder(), ["cat"])], remainder="passthrough")
    pipe = make_pipeline(encoder, Ridge(alpha=0.1)).fit(X, y)
    return X, y, pipe


def test_pipeline_raw_columns_and_one_hot_blocks(categorical):
    X, y, pipe = categorical
    kw = dict(n_repeats=5, random_state=3)
    ref = skinspection.permutation_importance(pipe, X, y, **kw)
    raw = permutation_importance(pipe, X, y, **kw)
    np.testing.assert_allclose(raw.importances, ref.importances, atol=1e-12)
    assert raw.group_names == ["cat", "u", "v"]
    # the fitted model on the encoded matrix, the raw column as its one-hot block
    encoded = pipe[:-1].transform(X)
    blocks = {"cat": [0, 1, 2], "u": [3], "v": [4]}
    grouped = permutation_importance(pipe[-1], encoded, y, groups=blocks, **kw)
    np.testing.assert_allclose(grouped.importances, ref.importances, atol=1e-12)


def test_permutation_importance_errors(regression):
    X, y, model = regression
    with pytest.raises(ValueError, match="max_samples"):
        permutation_importance(model, X, y, max_samples=1000)
    with pytest.raises(ValueError, match="out of range"):
        permutation_importance(model, X, y, groups=[[0, 9]])
    with pytest.raises(ValueError, match="empty"):
        permutation_importance(model, X, y, groups=[[]])


# -- partial dependence -----------------------------------------------------------------
def test_one_column_equals_sklearn_brute(regression):
    X, y, model = regression
    ref = skinspection.partial_dependence(model, X, [1], kind="both", method="brute",
                                          grid_resolution=20)
    ours = partial_dependence(model, X, 1, kind="both", grid_resolution=20)
    np.testing.assert_allclose(ours.grid_values[0], ref.grid_values[0])
    np.testing.assert_allclose(ours.average, ref.average, atol=1e-12)
    np.testing.assert_allclose(ours.individual, ref.individual, atol=1e-12)


def test_two_columns_and_classifier_equal_sklearn():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (X[:, 2] > 1)
    clf = LogisticRegression().fit(X, y)
    for feats in ([0], [0, 2]):
        ref = skinspection.partial_dependence(clf, X, feats, kind="both", method="brute",
                                              grid_resolution=6)
        ours = partial_dependence(clf, X, feats, kind="both", grid_resolution=6,
                                  response_method="predict_proba")
        assert ours.average.shape == ref.average.shape
        np.testing.assert_allclose(ours.average, ref.average, atol=1e-12)
        np.testing.assert_allclose(ours.individual, ref.individual, atol=1e-12)
    binary = LogisticRegression().fit(X, y > 0)
    ref = skinspection.partial_dependence(binary, X, [1], method="brute", grid_resolution=5)
    ours = partial_dependence(binary, X, [1], grid_resolution=5, response_method="predict_proba")
    np.testing.assert_allclose(ours.average, ref.average, atol=1e-12)
    # "auto" is the additive scale: the decision function
    ref = skinspection.partial_dependence(binary, X, [1], method="brute", grid_resolution=5,
                                          response_method="decision_function")
    ours = partial_dependence(binary, X, [1], grid_resolution=5)
    np.testing.assert_allclose(ours.average, ref.average, atol=1e-12)


def test_big_group_uses_observed_joint_values(regression):
    X, y, model = regression
    res = partial_dependence(model, X, [0, 1, 3], kind="both", grid_resolution=10,
                             random_state=0)
    assert res.grid.shape == (10, 3) and res.grid_values is None
    assert res.average.shape == (1, 10) and res.individual.shape == (1, 60, 10)
    observed = {tuple(r) for r in X[:, [0, 1, 3]]}
    assert all(tuple(p) in observed for p in res.grid)
    for i, point in enumerate(res.grid):
        H = X.copy()
        H[:, [0, 1, 3]] = point
        np.testing.assert_allclose(res.individual[0, :, i], model.predict(H), atol=1e-12)
        np.testing.assert_allclose(res.average[0, i], model.predict(H).mean(), atol=1e-12)
    # all observed values when there are few enough
    small = partial_dependence(model, X[:7], [0, 1, 3], grid_resolution=10)
    assert small.grid.shape == (7, 3)


def test_partial_dependence_on_pipeline_with_categorical_group(categorical):
    X, y, pipe = categorical
    res = partial_dependence(pipe, X, ["cat", "v"], kind="both", grid_resolution=4)
    assert res.average.shape == (1, 3, 4)
    assert list(res.grid_values[0]) == ["a", "b", "c"]
    H = X.copy()
    H["cat"] = "c"
    H["v"] = res.grid_values[1][2]
    np.testing.assert_allclose(res.average[0, 2, 2], pipe.predict(H).mean(), atol=1e-12)
    custom = partial_dependence(pipe, X, ["cat", "v"], grid=[["a", 0.0], ["c", 1.0]])
    assert custom.average.shape == (1, 2)


def test_partial_dependence_errors(regression):
    X, y, model = regression
    with pytest.raises(ValueError, match="percentiles"):
        partial_dependence(model, X, 0, percentiles=(0.9, 0.1))
    with pytest.raises(ValueError, match="repeats a column"):
        partial_dependence(model, X, [0, 0])
    with pytest.raises(ValueError, match="grid has shape"):
        partial_dependence(model, X, [0, 1], grid=np.zeros((3, 3)))


def test_partial_dependence_grid_skips_missing_and_keeps_category_order():
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.RandomState(0)
    n = 200
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "size": pd.Categorical(rng.choice(["small", "medium", "large"], size=n),
                               categories=["small", "medium", "large"], ordered=True),
    })
    X.loc[::7, "a"] = np.nan
    y = X["a"].fillna(0) + X["size"].cat.codes
    model = HistGradientBoostingRegressor(max_iter=20, categorical_features="from_dtype",
                                          random_state=0).fit(X, y)
    ours = partial_dependence(model, X, "a", grid_resolution=15)
    # the grid of the observed values, as sklearn builds it on the rows without NaN
    ref = skinspection.partial_dependence(model, X.dropna(), ["a"], method="brute",
                                          grid_resolution=15)
    grid = ours.grid_values[0].astype(float)
    assert not np.isnan(grid).any()
    np.testing.assert_allclose(grid, ref["grid_values"][0])
    for i, g in enumerate(grid):  # averaged over every row, missing ones included
        H = X.copy()
        H["a"] = g
        np.testing.assert_allclose(ours.average[0, i], model.predict(H).mean(), atol=1e-12)
    levels = partial_dependence(model, X, "size")
    assert list(levels.grid_values[0]) == ["small", "medium", "large"]
    H = X.copy()
    H["size"] = pd.Categorical(["large"] * n, categories=X["size"].cat.categories,
                               ordered=True)
    np.testing.assert_allclose(levels.average[0, 2], model.predict(H).mean(), atol=1e-12)
