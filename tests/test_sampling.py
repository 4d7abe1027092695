"""Sampled explainers: closed forms at full budget, convergence, peers, errors."""

import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LogisticRegression, Ridge

from skdecomp import MAX_EXACT_GROUPS, Explainer
from skdecomp._methods import _kernels
from skdecomp._methods._sampled import kernel_shap_design

SAMPLED = ["kernel_shap", "permutation_shap", "lime", "rise", "integrated_gradients"]
COALITION = ["kernel_shap", "permutation_shap", "lime", "rise"]


def _model(X):
    """Nonlinear model with interactions of every order up to 4."""
    return (
        np.sin(X[:, 0] * X[:, 1])
        + X[:, 2] * X[:, 3] * X[:, 4]
        + np.tanh(X[:, :4].sum(axis=1)) * X[:, 4]
        + 0.5 * X[:, 1] ** 2
    )


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    return rng.normal(size=(40, 5))


def _weighted(components, n_groups, weight):
    """phi_k = sum_{U contains k} weight(|U|) F_U, by an explicit loop over subsets."""
    out = np.zeros(components.shape[:1] + (n_groups,) + components.shape[2:])
    for mask in range(1, 1 << n_groups):
        members = [k for k in range(n_groups) if mask >> k & 1]
        for k in members:
            out[:, k] += weight(len(members)) * components[:, mask]
    return out


def _closed_forms(dec, p):
    K = dec.n_groups
    F = dec.components
    sizes = np.array([bin(m).count("1") for m in range(1 << K)])
    mean_v = np.tensordot(p**sizes, np.moveaxis(F, 1, -1), axes=(0, -1))
    banzhaf_p = _weighted(F, K, lambda s: p ** (s - 1))
    rise = (1 - p) * banzhaf_p + (mean_v[:, None] if F.ndim == 2 else mean_v[:, None, :])
    return {"shapley": _weighted(F, K, lambda s: 1.0 / s), "lime": banzhaf_p, "rise": rise}


# -- closed forms at full budget -------------------------------------------------
@pytest.mark.parametrize(
    "method, p",
    [("kernel_shap", 0.5), ("permutation_shap", 0.5), ("lime", 0.5), ("lime", 0.3),
     ("rise", 0.5), ("rise", 0.3)],
)
def test_full_budget_equals_closed_form(data, method, p):
    bg = data[:4]
    params = {"p": p} if method in ("lime", "rise") else None
    ex = Explainer(
        _model, method=method, background=bg, n_samples=2**5 - 2, method_params=params
    ).fit(data)
    dec = ex.decompose(data[:6])
    forms = _closed_forms(dec, p)
    target = forms["shapley"] if method.endswith("shap") else forms[method]
    np.testing.assert_allclose(ex.transform(data[:6]), target, atol=1e-8)


def test_full_budget_matches_exact_methods_multi_output():
    rng = np.random.RandomState(1)
    X = rng.normal(size=(90, 4))
    y = np.digitize(X[:, 0] * X[:, 1] + X[:, 2], [-0.5, 0.5])
    clf = LogisticRegression().fit(X, y)
    ex = Explainer(clf, background=5, random_state=0, n_samples=14).fit(X)
    res = ex.explain(X[:3], methods=["shapley", "kernel_shap", "permutation_shap"])
    assert res.kernel_shap.shape == (3, 4, 3)
    np.testing.assert_allclose(res.kernel_shap, res.shapley, atol=1e-8)
    np.testing.assert_allclose(res.permutation_shap, res.shapley, atol=1e-8)


def test_lime_half_is_banzhaf(data):
    ex = Explainer(_model, method="lime", background=data[:3], n_samples=30).fit(data)
    exact = ex.explain(data[:4], methods=["banzhaf", "lime"])
    np.testing.assert_allclose(exact.lime, exact.banzhaf, atol=1e-8)


def test_dataframe_with_categories():
    rng = np.random.RandomState(2)
    df = pd.DataFrame(
        {
            "a": rng.normal(size=30),
            "b": pd.Categorical(rng.choice(["u", "v", "w"], 30)),
            "c": rng.normal(size=30),
        }
    )

    def f(d):
        return d["a"].to_numpy() * (d["b"] == "u").to_numpy() + d["c"].to_numpy()

    ex = Explainer(f, method="kernel_shap", background=4, n_samples=6, random_state=0)
    ex.fit(df)
    res = ex.explain(df.iloc[:5], methods=["shapley", "kernel_shap"])
    np.testing.assert_allclose(res.kernel_shap, res.shapley, atol=1e-8)


# -- sampling --------------------------------------------------------------------
def test_kernel_shap_design_is_paired_and_nontrivial():
    rng = np.random.RandomState(0)
    Z, w = kernel_shap_design(20, 300, rng)
    assert Z.shape[0] <= 300 and Z.shape[0] == w.shape[0]
    sizes = Z.sum(axis=1)
    assert np.all((sizes > 0) & (sizes < 20))
    keys = {row.tobytes(): i for i, row in enumerate(Z)}
    assert len(keys) == Z.shape[0]  # no coalition twice
    for i, row in enumerate(Z):
        j = keys[(~row).tobytes()]  # the complement is there, with the same weight
        assert w[j] == pytest.approx(w[i])
    assert np.all(w > 0)


def test_budget_counts_model_calls(data):
    calls = []

    def f(X):
        calls.append(X.shape[0])
        return _model(X)

    bg = data[:3]
    for method, budget in [("kernel_shap", 30), ("permutation_shap", 24), ("lime", 12),
                           ("rise", 7)]:
        ex = Explainer(f, method=method, background=bg, n_samples=budget, random_state=0)
        ex.fit(data)
        calls.clear()
        ex.transform(data[:2])
        # f(x) once per row, then at most n_samples coalitions x background rows
        assert sum(calls) <= 2 + 2 * budget * bg.shape[0]


def test_additive_model_exact_at_any_budget():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(30, 20))
    beta = rng.normal(size=20)
    ex = Explainer(lambda X: X @ beta, background=X[:5], method="kernel_shap",
                   random_state=0).fit(X)
    target = (X[:4] - X[:5].mean(axis=0)) * beta
    for method, budget in [("kernel_shap", 160), ("permutation_shap", 114), ("lime", 60)]:
        phi = ex.set_params(method=method, n_samples=budget).transform(X[:4])
        np.testing.assert_allclose(phi, target, atol=1e-8, err_msg=method)


def test_random_state_reproducible_and_rows_independent(data):
    # 8 groups, so that every method samples at its smallest budget (64)
    wide = np.hstack([data, np.random.RandomState(1).normal(size=(40, 3))])
    for method in COALITION:
        ex = Explainer(_model, method=method, background=wide[:3], n_samples=64,
                       random_state=7).fit(wide)
        a = ex.transform(wide[:5])
        np.testing.assert_array_equal(a, ex.transform(wide[:5]))
        np.testing.assert_array_equal(a[:2], ex.transform(wide[:2]))
        b = ex.set_params(random_state=8).transform(wide[:5])
        assert not np.allclose(a, b), method


def test_explain_matches_transform(data):
    ex = Explainer(_model, method="lime", background=data[:3], n_samples=24,
                   method_params={"p": 0.4}, random_state=0).fit(data)
    # one sampled method with others that draw nothing: its own design
    res = ex.explain(data[:3], methods=["occlusion", "lime", "arch"])
    np.testing.assert_array_equal(res.lime, ex.transform(data[:3]))
    # several: one shared design, the same on every call
    res = ex.explain(data[:3], methods=["rise", "lime", "permutation_shap"])
    again = ex.explain(data[:3], methods=["permutation_shap", "rise", "lime"])
    for m in res:
        np.testing.assert_array_equal(res[m], again[m])


def _check_n_jobs(data):
    # several chunks per method, so the two workers share the work
    ex = Explainer(_model, background=data[:4], n_samples=30, batch_size=48,
                   method_params={"n_steps": 2}, method="integrated_gradients",
                   random_state=3).fit(data)
    one = ex.set_params(n_jobs=1).explain(data[:2], methods=SAMPLED)
    two = ex.set_params(n_jobs=2).explain(data[:2], methods=SAMPLED)
    for method in SAMPLED:
        np.testing.assert_array_equal(one[method], two[method])


def test_n_jobs_invariance_threads(data):
    with joblib.parallel_backend("threading"):
        _check_n_jobs(data)


@pytest.mark.slow
def test_n_jobs_invariance_processes(data):
    _check_n_jobs(data)


# -- convergence -----------------------------------------------------------------
def _slope(errors, budgets):
    return np.polyfit(np.log(budgets), np.log(errors), 1)[0]


@pytest.fixture(scope="module")
def game12():
    K = 12
    X = np.random.RandomState(4).normal(size=(20, K))
    w = np.linspace(0.3, 1.2, K)

    def f(X):
        return np.sin(X @ w) + np.tanh(X[:, :6].prod(axis=1))

    ex = Explainer(f, background=X[:1], method="shapley").fit(X)
    dec = ex.decompose(X[1:3])
    return f, X, _closed_forms(dec, 0.5)


def _rmse(f, X, target, method, budget, seeds):
    errs = []
    for seed in seeds:
        ex = Explainer(f, background=X[:1], method=method, n_samples=budget,
                       random_state=seed).fit(X)
        errs.append(np.mean((ex.transform(X[1:3]) - target) ** 2))
    return np.sqrt(np.mean(errs))


@pytest.mark.parametrize("method", ["permutation_shap", "lime", "rise"])
def test_convergence_rate_monte_carlo(game12, method):
    f, X, forms = game12
    target = forms["shapley"] if method == "permutation_shap" else forms[method]
    budgets = [128, 256, 512, 1024]
    errors = [_rmse(f, X, target, method, b, range(16)) for b in budgets]
    assert -0.65 <= _slope(errors, budgets) <= -0.35, errors


def test_convergence_kernel_shap(game12):
    # the regression estimator converges at least as fast as budget**-0.5;
    # at K = 12 whole size layers are enumerated early, which makes it faster
    f, X, forms = game12
    budgets = [96, 192, 384, 768]
    errors = [_rmse(f, X, forms["shapley"], "kernel_shap", b, range(16)) for b in budgets]
    assert np.all(np.diff(errors) < 0), errors
    assert -0.9 <= _slope(errors, budgets) <= -0.35, errors


# -- peers -----------------------------------------------------------------------
def test_kernel_shap_no_worse_than_shap_and_shapiq():
    shap = pytest.importorskip("shap")
    approximator = pytest.importorskip("shapiq.approximator")
    K, budget = 10, 200
    rng = np.random.RandomState(0)
    X = rng.normal(size=(30, K))
    W = rng.normal(size=(K, K)) * (rng.random_sample((K, K)) < 0.3)

    def f(X):
        return X @ np.arange(1, K + 1) / K + np.einsum("ni,ij,nj->n", X, W, X) + np.sin(
            X[:, 0] * X[:, 1] * X[:, 2]
        )

    bg, x = X[:4], X[10:12]
    exact = Explainer(f, background=bg, method="shapley").fit(X).transform(x)
    mse = {"ours": [], "shap": [], "shapiq": []}
    for seed in range(6):
        ours = Explainer(f, background=bg, method="kernel_shap", n_samples=budget,
                         random_state=seed).fit(X).transform(x)
        mse["ours"].append(np.mean((ours - exact) ** 2))
        np.random.seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = shap.KernelExplainer(f, bg).shap_values(
                x, nsamples=budget, l1_reg=False, silent=True
            )
        mse["shap"].append(np.mean((theirs - exact) ** 2))
        vals = []
        for r in range(x.shape[0]):
            def game(coal, r=r):
                coal = np.asarray(coal, dtype=bool)
                H = np.where(coal[:, None, :], x[r][None, None, :], bg[None, :, :])
                return f(H.reshape(-1, K)).reshape(coal.shape[0], -1).mean(axis=1)

            ks = approximator.KernelSHAP(n=K, pairing_trick=True, random_state=seed)
            iv = ks.approximate(budget + 2, game)  # shapiq counts {} and the full set
            vals.append([iv[(k,)] for k in range(K)])
        mse["shapiq"].append(np.mean((np.array(vals) - exact) ** 2))
    ours = np.mean(mse["ours"])
    assert ours <= 1.5 * np.mean(mse["shap"]) + 1e-12, mse
    assert ours <= 1.5 * np.mean(mse["shapiq"]) + 1e-12, mse


# -- many groups -----------------------------------------------------------------
def _image_data(n, rng):
    """n single-channel 64 x 64 images with a blob, flattened, and a target."""
    yy, xx = np.mgrid[:64, :64]
    centers = rng.uniform(10, 54, size=(n, 2))
    imgs = np.exp(-((yy[None] - centers[:, :1, None]) ** 2
                    + (xx[None] - centers[:, 1:, None]) ** 2) / 60.0)
    imgs += 0.05 * rng.normal(size=imgs.shape)
    return imgs.reshape(n, -1), centers[:, 0] > 32


def _patches():
    idx = np.arange(64 * 64).reshape(64, 64)
    return [idx[i:i + 4, j:j + 4].ravel().tolist() for i in range(0, 64, 4)
            for j in range(0, 64, 4)]


def test_256_groups_image_patches():
    rng = np.random.RandomState(5)
    X, y = _image_data(40, rng)
    groups = _patches()
    assert len(groups) == 256
    baseline = np.zeros((1, X.shape[1]))
    ridge = Ridge(alpha=1.0).fit(X, y.astype(float))
    ex = Explainer(ridge, groups=groups, background=baseline, method="kernel_shap",
                   n_samples=2048, random_state=0).fit(X)
    phi = ex.transform(X[:1])
    assert phi.shape == (1, 256)
    # a linear model is additive over groups: the exact Shapley value is known
    target = np.array([(ridge.coef_[g] * X[0, g]).sum() for g in groups])
    np.testing.assert_allclose(phi[0], target, atol=1e-8)

    clf = LogisticRegression(C=0.1, max_iter=200).fit(X, y)
    ex = Explainer(clf, groups=groups, background=baseline, method="kernel_shap",
                   n_samples=2048, random_state=0).fit(X)
    phi = ex.transform(X[:1])
    # the default scale of a classifier is its decision function, here linear
    target = np.array([(clf.coef_[0, g] * X[0, g]).sum() for g in groups])
    np.testing.assert_allclose(phi[0], target, atol=1e-8)
    with pytest.raises(ValueError, match="kernel_shap"):
        ex.decompose(X[:1])


@pytest.mark.slow
@pytest.mark.parametrize("method", ["permutation_shap", "lime", "rise",
                                    "integrated_gradients"])
def test_256_groups_other_methods(method):
    rng = np.random.RandomState(6)
    X, y = _image_data(30, rng)
    clf = LogisticRegression(C=0.1, max_iter=200).fit(X, y)
    ex = Explainer(clf, groups=_patches(), background=np.zeros((1, X.shape[1])),
                   # three pairs of permutations: 6 (K - 1) coalitions
                   method=method, random_state=0,
                   n_samples=1530 if method == "permutation_shap" else 1024,
                   method_params={"n_steps": 2} if method == "integrated_gradients" else None)
    phi = ex.fit(X).transform(X[:1])
    assert phi.shape == (1, 256) and np.all(np.isfinite(phi))
    if method in ("permutation_shap", "integrated_gradients"):
        gap = clf.decision_function(X[:1])[0] - ex.expected_value_
        assert phi.sum() == pytest.approx(gap, abs=1e-8)


# -- integrated gradients ---------------------------------------------------------
def test_ig_completeness_any_model(data):
    y = _model(data) + (data[:, 0] > 0)
    forest = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(data, y)
    for model, groups in [(forest, None), (forest, [[0, 1], [2], [3, 4]]), (_model, None)]:
        ex = Explainer(model, method="integrated_gradients", groups=groups,
                       background=data[:6], method_params={"n_steps": 5}).fit(data)
        phi = ex.transform(data[6:10])
        gap = ex.game_.predict(data[6:10])[:, 0] - ex.expected_value_
        np.testing.assert_allclose(phi.sum(axis=1), gap, atol=1e-6)


def test_ig_multilinear_equals_shapley(data):
    # pairwise terms are integrated exactly at any number of steps
    def f(X):
        return X[:, 0] * X[:, 1] - 2 * X[:, 1] * X[:, 3] + X[:, 2] + 3 * X[:, 4] * X[:, 0]

    ex = Explainer(f, background=data[:5], method="integrated_gradients",
                   method_params={"n_steps": 3}).fit(data)
    res = ex.explain(data[5:9], methods=["shapley", "integrated_gradients"])
    np.testing.assert_allclose(res.integrated_gradients, res.shapley, atol=1e-10)

    # a term of degree three: the error falls as 1 / n_steps**2
    def g(X):
        return f(X) + X[:, 0] * X[:, 2] * X[:, 3]

    ex = Explainer(g, background=data[:5], method="integrated_gradients",
                   method_params={"n_steps": 40}).fit(data)
    res = ex.explain(data[5:9], methods=["shapley", "integrated_gradients"])
    np.testing.assert_allclose(res.integrated_gradients, res.shapley, atol=2e-3)


@pytest.mark.parametrize("scheme", ["path", "central"])
def test_ig_is_path_integral_not_shapley(scheme):
    # x0**2 x1 from 0: IG, the path integral of each partial derivative, gives 2/3
    # and 1/3 of f(x) (Sundararajan et al., ICML 2017); Shapley gives 1/2 each
    X = np.array([[0.0, 0.0], [1.5, 2.0], [1.0, -1.0]])
    ex = Explainer(lambda X: X[:, 0] ** 2 * X[:, 1], background=X[:1],
                   method="integrated_gradients",
                   method_params={"n_steps": 200, "scheme": scheme}).fit(X)
    phi = ex.transform(X[1:])
    fx = X[1:, 0] ** 2 * X[1:, 1]
    np.testing.assert_allclose(phi, np.c_[2 * fx / 3, fx / 3], atol=1e-4)


def test_ig_dataframe(data):
    df = pd.DataFrame(data, columns=list("abcde"))
    df["e"] = (df["e"] * 10).round().astype(int)
    ex = Explainer(lambda d: _model(d.to_numpy(dtype=float)), groups={"ab": ["a", "b"],
                   "rest": ["c", "d", "e"]}, background=4,
                   method="integrated_gradients", random_state=0).fit(df)
    phi = ex.transform(df.iloc[:3])
    gap = _model(df.iloc[:3].to_numpy(dtype=float)) - ex.expected_value_
    np.testing.assert_allclose(phi.sum(axis=1), gap, atol=1e-6)


# -- errors ------------------------------------------------------------------------
def test_errors(data):
    # 5 groups: KernelSHAP's smallest budget, 8 K, is every coalition (30)
    with pytest.raises(ValueError, match="at least n_samples=30"):
        Explainer(_model, method="kernel_shap", n_samples=29).fit(data)
    with pytest.raises(ValueError, match="at least n_samples=24"):
        Explainer(_model, method="permutation_shap", n_samples=23).fit(data)
    with pytest.raises(ValueError, match="at least n_samples=12"):
        Explainer(_model, method="lime", n_samples=11).fit(data)
    with pytest.raises(ValueError, match="at least n_samples=6"):
        Explainer(_model, method="rise", n_samples=5).fit(data)
    for p in [0.0, 1.0, 1.5, -0.1]:
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            Explainer(_model, method="rise", method_params={"p": p}).fit(data)
    with pytest.raises(ValueError, match=r"allowed keys: \['alpha', 'kernel'"):
        Explainer(_model, method="lime", method_params={"q": 0.5}).fit(data)
    with pytest.raises(ValueError, match="allowed keys: none"):
        Explainer(_model, method="kernel_shap", method_params={"p": 0.5}).fit(data)
    with pytest.raises(ValueError, match="scheme"):
        Explainer(_model, method="integrated_gradients",
                  method_params={"scheme": "forward"}).fit(data)

    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["u", "v", "u"], "c": [True, False, True]})
    ex = Explainer(lambda d: d["a"].to_numpy(), method="integrated_gradients",
                   background=2, random_state=0).fit(df)
    with pytest.raises(ValueError, match=r"non-numeric columns \['b', 'c'\].*group"):
        ex.transform(df)

    wide = np.random.RandomState(0).normal(size=(10, MAX_EXACT_GROUPS + 1))
    with pytest.raises(ValueError, match="'kernel_shap', 'permutation_shap'"):
        Explainer(lambda X: X.sum(axis=1), method="shapley").fit(wide)
    ex = Explainer(lambda X: X.sum(axis=1), method="permutation_shap", n_samples=96).fit(wide)
    assert ex.transform(wide[:2]).shape == (2, MAX_EXACT_GROUPS + 1)
    with pytest.raises(ValueError, match="enumerates all"):
        ex.explain(wide[:2], methods=["shapley"])


def test_inputs_untouched(data):
    X = data[:6].copy()
    X.setflags(write=False)
    bg = data[:3].copy()
    for method in SAMPLED:
        ex = Explainer(_model, method=method, background=bg, n_samples=30,
                       method_params={"n_steps": 3} if method.startswith("int") else None,
                       random_state=0).fit(data)
        ex.transform(X)
    np.testing.assert_array_equal(X, data[:6])
    np.testing.assert_array_equal(bg, data[:3])


# -- kernels ------------------------------------------------------------------------
def _py(kernel):
    return getattr(kernel, "py_func", kernel)


def test_kernels_match_pure_python():
    rng = np.random.RandomState(0)
    Z = rng.random_sample((30, 6)) < 0.5
    w = rng.random_sample(30)
    Y = rng.normal(size=(3, 30))
    for Z_, w_, Y_ in [(Z, w, Y)]:
        for a in (Z_, w_, Y_):
            a.setflags(write=False)
        G = _kernels.coalition_gram(Z_, w_)
        np.testing.assert_allclose(G, (Z_.T * w_) @ Z_, rtol=1e-12)
        np.testing.assert_array_equal(G, _py(_kernels.coalition_gram)(Z_, w_))
        M = _kernels.coalition_moments(Z_, w_, Y_)
        np.testing.assert_allclose(M, (Y_ * w_) @ Z_, rtol=1e-12)
        np.testing.assert_array_equal(M, _py(_kernels.coalition_moments)(Z_, w_, Y_))
        sol, ok = _kernels.cholesky_solve(G, M)
        assert ok
        np.testing.assert_allclose(sol @ G, M, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(sol, _py(_kernels.cholesky_solve)(G, M)[0], rtol=1e-13)
        totals = rng.normal(size=3)
        phi, ok = _kernels.constrained_least_squares(G, M, totals)
        assert ok
        np.testing.assert_allclose(phi.sum(axis=1), totals, rtol=1e-10)
        np.testing.assert_allclose(
            phi, _py(_kernels.constrained_least_squares)(G, M, totals)[0], rtol=1e-13
        )
    _, ok = _kernels.cholesky_solve(np.zeros((3, 3)), np.ones((1, 3)))
    assert not ok
    orders = np.array([[0, 1, 2], [2, 1, 0]])
    index = np.array([[0, 1, 2, 3], [0, 4, 5, 3]])
    values = rng.normal(size=(2, 6))
    phi = _kernels.permutation_attributions(orders, index, values)
    np.testing.assert_array_equal(phi, _py(_kernels.permutation_attributions)(orders, index, values))
    np.testing.assert_allclose(phi.sum(axis=1), values[:, 3] - values[:, 0])


def test_explain_defaults_beyond_exact_limit():
    from skdecomp import MAX_EXACT_GROUPS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, MAX_EXACT_GROUPS + 4))

    def f(Z):
        return Z[:, 0] * Z[:, 1] + Z[:, 2]

    e = Explainer(f, method="kernel_shap", background=5, n_samples=200, random_state=0)
    res = e.fit(X).explain(X[:2])
    assert sorted(res) == ["arch", "kernel_shap", "lime", "occlusion"]
    # columns 3 and beyond do not enter f: occlusion and arch give them 0
    for m in ("occlusion", "arch"):
        np.testing.assert_allclose(res[m][:, 3:], 0, atol=1e-10)
    # KernelSHAP keeps efficiency
    gap = f(X[:2]) - f(e.background_).mean()
    np.testing.assert_allclose(res["kernel_shap"].values.sum(axis=1), gap, atol=1e-8)
