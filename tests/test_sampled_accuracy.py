"""Dummy groups and the accuracy of the sampled Shapley estimators.

Oracles: brute force over all coalitions (tests/_naive.py), exact Shapley
values from the full decomposition, shap's KernelExplainer and shapiq's
KernelSHAP.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor

from skdecomp import Explainer
from skdecomp._methods._registry import min_samples
from skdecomp._methods._sampled import kernel_shap_design

from . import _naive

GROUPS = [[0, 1], [2], [3, 4], [5], [6, 7]]
EXACT = ["shapley", "banzhaf", "occlusion", "arch", "pdp", "pfi"]
ZERO_SAMPLED = ["kernel_shap", "permutation_shap", "lime", "integrated_gradients"]


def _f(A):
    A = np.asarray(A, dtype=float)
    return (np.sin(A[:, 0] * A[:, 3]) + A[:, 2] * A[:, 4] * A[:, 1]
            + np.tanh(A[:, 5] + A[:, 6]) * A[:, 7] + 0.3 * A[:, 2] ** 2)


@pytest.fixture(scope="module")
def dummy_data():
    """Background constant on columns 2 and 5; rows 0-2 equal it there, row 3 on 2."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(40, 8))
    X[:, [2, 5]] = 1.5
    rows = X[10:14].copy()
    rows[3, 5] = 0.3
    return X, X[:6], rows


def _dummy_mask(rows):
    mask = np.zeros((rows.shape[0], len(GROUPS)), dtype=bool)
    mask[:, 1] = True
    mask[:3, 3] = True
    return mask


def _oracle(bg, rows, method):
    out = []
    for x in rows:
        v = _naive.game(_f, x, bg, GROUPS)
        out.append(_naive.METHODS[method](v, len(GROUPS)))
    return np.array(out)


# -- dummy groups ------------------------------------------------------------------
@pytest.mark.parametrize("path", ["model_agnostic", "single_group", "tree"])
def test_exact_methods_give_dummies_zero(dummy_data, path):
    X, bg, rows = dummy_data
    dummy = _dummy_mask(rows)
    if path == "tree":
        model = RandomForestRegressor(n_estimators=8, max_depth=5, random_state=0)
        model.fit(X, _f(X))
        f = model.predict
    else:
        model = f = _f
    methods = ["occlusion", "arch"] if path == "single_group" else EXACT
    ex = Explainer(model, groups=GROUPS, background=bg).fit(X)
    assert ex.algorithm_.startswith("tree" if path == "tree" else "model_agnostic")
    res = ex.explain(rows, methods=methods)
    for m in methods:
        phi = np.asarray(res[m])
        assert np.all(phi[dummy] == 0.0), m
        target = []
        for x in rows:
            v = _naive.game(f, x, bg, GROUPS)
            target.append(_naive.METHODS[m](v, len(GROUPS)))
        np.testing.assert_allclose(phi, np.array(target), atol=1e-9, err_msg=m)


@pytest.mark.parametrize("budget", [30, 40])
def test_sampled_methods_give_dummies_zero(dummy_data, budget):
    X, bg, rows = dummy_data
    dummy = _dummy_mask(rows)
    ex = Explainer(_f, groups=GROUPS, background=bg, n_samples=budget, random_state=1,
                   method="integrated_gradients", method_params={"n_steps": 4}).fit(X)
    res = ex.explain(rows, methods=ZERO_SAMPLED)
    shapley = _oracle(bg, rows, "shapley")
    for m in ZERO_SAMPLED:
        phi = np.asarray(res[m])
        assert np.all(phi[dummy] == 0.0), m
        if m in ("kernel_shap", "permutation_shap", "integrated_gradients"):
            # efficiency: the rest of f(x) - E_B f goes to the other groups
            np.testing.assert_allclose(phi.sum(axis=1), shapley.sum(axis=1), atol=1e-9)
        if m in ("kernel_shap", "permutation_shap") and budget == 30:
            # 30 >= 2**4 - 2: every coalition of the groups in play is enumerated
            np.testing.assert_allclose(phi, shapley, atol=1e-9, err_msg=m)


def test_rise_gives_dummies_the_mean_value(dummy_data):
    X, bg, rows = dummy_data
    dummy = _dummy_mask(rows)
    K, p = len(GROUPS), 0.4
    ex = Explainer(_f, groups=GROUPS, background=bg, method="rise", n_samples=30,
                   method_params={"p": p}).fit(X)
    phi = ex.transform(rows)
    for r, x in enumerate(rows):
        v = _naive.game(_f, x, bg, GROUPS)
        # closed form: S_k = E_M[v(M) M_k] / p over M ~ Bernoulli(p)**K
        prob = {S: p ** len(S) * (1 - p) ** (K - len(S)) for S in v}
        mean = sum(prob[S] * v[S] for S in v)
        target = [sum(prob[S] * v[S] for S in v if k in S) / p for k in range(K)]
        np.testing.assert_allclose(phi[r], target, atol=1e-10)
        np.testing.assert_allclose(phi[r, dummy[r]], mean, atol=1e-10)
    # at a sampled budget a row's dummies share one value, the mean over its masks
    phi = ex.set_params(n_samples=9, random_state=0).transform(rows)
    for r in range(rows.shape[0]):
        assert np.ptp(phi[r, dummy[r]]) == 0.0


def _reduced_problem(columns_kept, fixed):
    """The model on the kept columns, with the dropped ones at their fixed value."""
    d = 8

    def g(A):
        full = np.empty((A.shape[0], d))
        full[:, columns_kept] = A
        for c, val in fixed.items():
            full[:, c] = val
        return _f(full)

    where = {c: i for i, c in enumerate(columns_kept)}
    groups = [[where[c] for c in grp] for grp in GROUPS if all(c in where for c in grp)]
    return g, groups


@pytest.mark.parametrize("method", ["kernel_shap", "permutation_shap", "lime", "rise",
                                    "integrated_gradients"])
def test_non_dummies_equal_the_game_without_dummies(dummy_data, method):
    X, bg, rows = dummy_data
    params = {"n_steps": 3} if method == "integrated_gradients" else None
    budget = max(12, min_samples(method, len(GROUPS)))
    full = Explainer(_f, groups=GROUPS, background=bg, method=method, n_samples=budget,
                     random_state=5, method_params=params).fit(X)
    phi = full.transform(rows)
    for kept_groups, cases in [([0, 2, 4], slice(0, 3)), ([0, 2, 3, 4], slice(3, 4))]:
        cols = [c for k in kept_groups for c in GROUPS[k]]
        fixed = {c: 1.5 for k in range(len(GROUPS)) if k not in kept_groups
                 for c in GROUPS[k]}
        g, groups = _reduced_problem(cols, fixed)
        reduced = Explainer(g, groups=groups, background=bg[:, cols], method=method,
                            n_samples=budget, random_state=5, method_params=params)
        target = reduced.fit(X[:, cols]).transform(rows[cases][:, cols])
        np.testing.assert_allclose(phi[cases][:, kept_groups], target, atol=1e-12)


def test_rows_independent_of_batch_with_dummies(dummy_data):
    X, bg, rows = dummy_data
    for method in ["kernel_shap", "permutation_shap", "lime", "rise"]:
        ex = Explainer(_f, groups=GROUPS, background=bg, method=method,
                       n_samples=max(12, min_samples(method, len(GROUPS))),
                       random_state=2).fit(X)
        together = ex.transform(rows)
        for order in ([3, 0], [2], [1, 3, 2, 0]):
            np.testing.assert_array_equal(ex.transform(rows[order]), together[order])


def test_all_groups_dummies():
    bg = np.tile(np.array([[0.5, -1.0, 2.0, 0.0, 1.0]]), (3, 1))
    X = np.vstack([bg, np.random.RandomState(0).normal(size=(5, 5))])
    ex = Explainer(_model5, background=bg, n_samples=30, random_state=0,
                   method="integrated_gradients", method_params={"n_steps": 2}).fit(X)
    methods = EXACT + ZERO_SAMPLED
    res = ex.explain(bg[:1], methods=methods)
    for m in methods:
        np.testing.assert_array_equal(np.asarray(res[m]), np.zeros((1, 5)), err_msg=m)
    rise = ex.set_params(method="rise", method_params=None).transform(bg[:1])
    np.testing.assert_allclose(rise, _model5(bg[:1])[0], atol=1e-12)


def _model5(A):
    A = np.asarray(A, dtype=float)
    return A[:, 0] * A[:, 1] + np.exp(A[:, 2] * A[:, 3]) + A[:, 4]


def test_categorical_dummy_group():
    rng = np.random.RandomState(3)
    df = pd.DataFrame({
        "a": rng.normal(size=20),
        "c": pd.Categorical(["u"] * 20, categories=["u", "v"]),
        "b": rng.normal(size=20),
    })

    def f(d):
        a, b = d["a"].to_numpy(), d["b"].to_numpy()
        return a * (1 + (d["c"] == "u").to_numpy()) + b**2

    ex = Explainer(f, background=df.iloc[:4], method="kernel_shap", n_samples=6,
                   random_state=0).fit(df)
    res = ex.explain(df.iloc[5:8], methods=["shapley", "kernel_shap", "lime"])
    for m in ["shapley", "kernel_shap", "lime"]:
        assert np.all(np.asarray(res[m])[:, 1] == 0.0), m
    np.testing.assert_allclose(res.kernel_shap, res.shapley, atol=1e-10)


# -- the KernelSHAP design ---------------------------------------------------------
def test_kernel_shap_design_layers_equal_and_unbiased():
    K, budget = 10, 120
    sizes = np.arange(1, K // 2 + 1)
    mass = (K - 1) / (sizes * (K - sizes)) * np.where(2 * sizes == K, 1.0, 2.0)
    mass /= mass.sum()
    rng = np.random.RandomState(0)
    g = rng.normal(size=K)

    def game(Z):
        return np.sin(Z @ g) * (1 + Z[:, 0])

    # exact kernel-weighted mean of the game, by brute force over all coalitions
    exact = 0.0
    for s in sizes:
        layer = [S for S in _naive.powerset(range(K)) if len(S) in (s, K - s)]
        Z = np.zeros((len(layer), K))
        for i, S in enumerate(layer):
            Z[i, list(S)] = 1
        exact += mass[s - 1] * game(Z).mean()
    draws = []
    for seed in range(2000):
        Z, w = kernel_shap_design(K, budget, np.random.RandomState(seed))
        assert Z.shape[0] <= budget
        s = Z.sum(axis=1)
        if seed == 0:
            # layer 1 (20 coalitions) fits its share of 120 / 5; the other
            # layers share the remaining 100 equally (within 1 pair)
            layer = np.minimum(s, K - s)
            counts = np.bincount(layer, minlength=K // 2 + 1)[1:]
            assert counts[0] == 2 * K
            assert np.ptp(counts[1:]) <= 2 and counts[1:].sum() == budget - 2 * K
        draws.append(w @ game(Z.astype(float)))
    draws = np.array(draws)
    assert abs(draws.mean() - exact) < 4 * draws.std() / np.sqrt(draws.size)


# -- accuracy at equal budget ---------------------------------------------------------
def _digits_problem():
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier

    X, y = load_digits(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = MLPClassifier(hidden_layer_sizes=(32,), max_iter=100,
                            random_state=0).fit(X[:600], y[:600])
    bg = X[np.random.RandomState(0).choice(600, 6, replace=False)]
    return X, mlp, bg, X[[1200, 1212]]


def test_kernel_shap_beats_shap_and_shapiq_on_digits():
    """16 groups of 2 x 2 pixels, exact Shapley values as reference, budget 512."""
    shap = pytest.importorskip("shap")
    approximator = pytest.importorskip("shapiq.approximator")
    X, mlp, bg, rows = _digits_problem()
    idx = np.arange(64).reshape(8, 8)
    groups = [idx[i:i + 2, j:j + 2].ravel()
              for i in range(0, 8, 2) for j in range(0, 8, 2)]
    labels = np.empty(64, dtype=np.int64)
    for k, grp in enumerate(groups):
        labels[grp] = k
    budget, seeds = 512, range(5)
    mse = {"ours": np.zeros(len(seeds)), "shap": np.zeros(len(seeds)),
           "shapiq": np.zeros(len(seeds))}
    for x in rows:
        c = int(mlp.predict(x[None])[0])

        def f(A, c=c):
            return mlp.predict_proba(A)[:, c]

        ex = Explainer(mlp, groups=[list(g) for g in groups], background=bg,
                       response_method="predict_proba", target=c).fit(X)
        exact = ex.transform(x[None])[0]
        live = np.flatnonzero([np.any(bg[:, grp] != x[grp]) for grp in groups])

        # shap's features are the groups: u[k] = 0 takes group k from x, j + 1
        # from background row j (0 where x equals every background row)
        def by_group(U, x=x, f=f):
            src = np.asarray(U, dtype=np.int64)[:, labels]
            z = bg[np.maximum(src - 1, 0), np.arange(64)]
            return f(np.where(src == 0, x[None, :], z))

        U = np.repeat(np.arange(1, bg.shape[0] + 1)[:, None], len(groups), axis=1)
        U[:, np.setdiff1d(np.arange(len(groups)), live)] = 0

        def game(coalitions, x=x, f=f, live=live):
            masks = np.zeros((coalitions.shape[0], len(groups)), dtype=bool)
            masks[:, live] = coalitions
            H = np.where(masks[:, labels][:, None, :], x[None, None, :], bg[None])
            return f(H.reshape(-1, 64)).reshape(masks.shape[0], -1).mean(axis=1)

        for i, seed in enumerate(seeds):
            ours = ex.set_params(method="kernel_shap", n_samples=budget,
                                 random_state=seed).transform(x[None])[0]
            mse["ours"][i] += np.mean((ours - exact) ** 2)
            np.random.seed(seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = shap.KernelExplainer(by_group, U).shap_values(
                    np.zeros((1, len(groups))), nsamples=budget, l1_reg=False,
                    silent=True,
                )
            mse["shap"][i] += np.mean((np.ravel(theirs) - exact) ** 2)
            values = approximator.KernelSHAP(
                n=live.size, pairing_trick=True, random_state=seed
            ).approximate(budget + 2, game)
            est = np.zeros(len(groups))
            est[live] = [values[(k,)] for k in range(live.size)]
            mse["shapiq"][i] += np.mean((est - exact) ** 2)
    medians = {k: np.median(v) for k, v in mse.items()}
    assert medians["ours"] <= 0.8 * medians["shap"], mse
    assert medians["ours"] <= medians["shapiq"], mse


@pytest.mark.parametrize("method", ["kernel_shap", "permutation_shap", "lime", "rise"])
def test_one_group_in_play(method):
    # every group but one equals the background: no coalition lies strictly
    # between the empty and the full one for that row
    rng = np.random.RandomState(0)
    bg = np.tile(rng.normal(size=(1, 4)), (5, 1))
    bg[:, 3] = rng.normal(size=5)
    x = bg[:1].copy()
    x[0, 3] = 2.0

    def f(Z):
        return Z[:, 0] * Z[:, 1] + np.sin(Z[:, 3]) * Z[:, 2]

    from skdecomp import Explainer

    exp = Explainer(f, method=method, background=bg, n_samples=64, random_state=0).fit(bg)
    phi = exp.transform(x)
    gap = f(x)[0] - f(bg).mean()
    if method == "rise":
        # RISE: the dummies get the mean value over the masks
        assert np.all(np.isfinite(phi))
    else:
        np.testing.assert_allclose(phi[0, :3], 0.0, atol=0)
        np.testing.assert_allclose(phi[0, 3], gap, rtol=1e-10)
