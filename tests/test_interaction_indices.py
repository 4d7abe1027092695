"""Interaction indices as weights on the Moebius components."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import Explainer
from skdecomp._methods._indices import INDICES, index_terms

ORDERS = [("k-SII", 2), ("SII", 2), ("STII", 2), ("FSII", 2), ("BII", 2), ("FBII", 2),
          ("Moebius", 3), ("SV", 1), ("BV", 1), ("k-SII", 3), ("STII", 3), ("FSII", 3)]


def _multilinear(Z):
    # known Moebius components with a zero background: 2 x0, 1.5 x1 x2, -x0 x1 x3
    Z = np.asarray(Z, dtype=float)
    return 2 * Z[:, 0] + 1.5 * Z[:, 1] * Z[:, 2] - Z[:, 0] * Z[:, 1] * Z[:, 3]


def test_terms_order_and_names():
    X = np.random.default_rng(0).normal(size=(30, 4))
    explainer = Explainer(_multilinear, background=np.zeros((1, 4))).fit(X)
    r = explainer.interactions(X[:3], index="k-SII", max_order=2)
    assert r.terms == index_terms(4, 2)
    assert r.terms[:6] == [(), (0,), (1,), (2,), (3,), (0, 1)]
    assert r.term_names[5] == "x0 x x1"
    assert list(r.to_frame().columns) == r.term_names[1:]
    M = r.matrix()
    np.testing.assert_array_equal(M, np.swapaxes(M, 1, 2))
    assert r[1:].values.shape == (2, len(r.terms)) and r[0].values.shape == (1, len(r.terms))


def test_closed_forms_of_a_multilinear_model():
    # anchored at 0: m({0}) = 2 x0, m({1,2}) = 1.5 x1 x2, m({0,1,3}) = -x0 x1 x3
    X = np.random.default_rng(1).normal(size=(20, 4))
    x = X[:2]
    explainer = Explainer(_multilinear, background=np.zeros((1, 4))).fit(X)
    a, b, c = 2 * x[:, 0], 1.5 * x[:, 1] * x[:, 2], -x[:, 0] * x[:, 1] * x[:, 3]
    want = {
        # SII: m(T) / (|T| - |S| + 1)
        "SII": {(0,): a + c / 3, (1, 2): b, (0, 1): c / 2, (2, 3): 0 * a},
        # BII: m(T) / 2**(|T| - |S|)
        "BII": {(0,): a + c / 4, (1, 2): b, (0, 1): c / 2},
        # STII of order 2: m(T) / C(|T|, 2) at pairs
        "STII": {(0,): a, (1, 2): b, (0, 1): c / 3, (1, 3): c / 3},
        # k-SII of order 2: SII at the pairs, and the singletons take back the
        # excess (Bernoulli weights: 1/3 - 2/4 = -1/6 each), so it is efficient
        "k-SII": {(1, 2): b, (0, 1): c / 2, (0,): a - c / 6, (3,): -c / 6},
        "Moebius": {(0,): a, (1, 2): b, (0, 1, 3): c, (0, 1): 0 * a},
    }
    for index, expected in want.items():
        order = 3 if index == "Moebius" else 2
        r = explainer.interactions(x, index=index, max_order=order)
        for term, value in expected.items():
            np.testing.assert_allclose(r.values[:, r.terms.index(term)], value,
                                       atol=1e-12, err_msg=f"{index} {term}")


@pytest.mark.parametrize("index", ["k-SII", "STII", "FSII", "SV", "Moebius"])
def test_efficient_indices_sum_to_the_prediction(index):
    X = np.random.default_rng(2).normal(size=(200, 5))
    y = X[:, 0] * X[:, 1] * X[:, 2] + X[:, 3] - X[:, 1] * X[:, 4]
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    explainer = Explainer(model, background=20, random_state=0).fit(X)
    r = explainer.interactions(X[:4], index=index, max_order=5 if index == "Moebius" else 2)
    np.testing.assert_allclose(r.values[:, 1:].sum(axis=1) + r.values[:, 0],
                               model.predict(X[:4]), atol=1e-10)
    np.testing.assert_allclose(r.values[:, 0], explainer.expected_value_, atol=1e-12)


def test_indices_of_order_k_equal_moebius_when_components_stop_at_k():
    # f has components of at most two groups: every index of order 2 that
    # is faithful to the game gives its Moebius components
    X = np.random.default_rng(3).normal(size=(20, 4))

    def f(Z):
        Z = np.asarray(Z)
        return Z[:, 0] * Z[:, 1] + Z[:, 2] - 0.5 * Z[:, 1] * Z[:, 3]

    explainer = Explainer(f, background=np.zeros((1, 4))).fit(X)
    ref = explainer.interactions(X[:3], index="Moebius", max_order=2).values
    for index in ("k-SII", "STII", "FSII", "FBII"):
        r = explainer.interactions(X[:3], index=index, max_order=2)
        np.testing.assert_allclose(r.values[:, 1:], ref[:, 1:], atol=1e-12, err_msg=index)


@pytest.mark.parametrize("algorithm", ["tree", "model_agnostic"])
def test_every_index_equals_shapiq_exact_computer(algorithm):
    shapiq = pytest.importorskip("shapiq")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8))
    y = X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] * X[:, 4] + X[:, 5]
    model = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y)
    groups = [[0], [1], [2, 3], [4], [5], [6, 7]]
    bg = X[:20]
    explainer = Explainer(model, groups=groups, background=bg, algorithm=algorithm).fit(X)
    assert explainer.algorithm_ == algorithm
    x = X[50]

    def game(coalitions):
        out = []
        for c in np.asarray(coalitions, dtype=bool):
            Z = bg.copy()
            cols = [j for g in np.flatnonzero(c) for j in groups[g]]
            Z[:, cols] = x[cols]
            out.append(model.predict(Z).mean())
        return np.asarray(out)

    exact = shapiq.ExactComputer(n_players=6, game=game)
    for index, order in ORDERS:
        ours = explainer.interactions(X[50:51], index=index, max_order=order)
        ref = exact(index, order)
        for j, term in enumerate(ours.terms):
            want = ref[term] if term in ref.interaction_lookup else 0.0
            assert abs(ours.values[0, j] - want) <= 1e-8, (index, order, term)
    iv = explainer.interactions(X[50:51], index="k-SII").to_shapiq(0)
    assert isinstance(iv, shapiq.InteractionValues) and iv.index == "k-SII"


def test_errors():
    X = np.random.default_rng(4).normal(size=(10, 3))
    explainer = Explainer(_multilinear_3, background=2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="Unknown interaction index"):
        explainer.interactions(X, index="shapley-taylor")
    with pytest.raises(ValueError, match="max_order"):
        explainer.interactions(X, max_order=0)
    assert set(INDICES) == {"Moebius", "SII", "k-SII", "STII", "FSII", "BII", "FBII",
                            "SV", "BV"}


def _multilinear_3(Z):
    Z = np.asarray(Z)
    return Z[:, 0] * Z[:, 1] + Z[:, 2]


def test_summary_ranks_the_terms():
    X = np.random.default_rng(5).normal(size=(40, 4))
    explainer = Explainer(_multilinear, background=np.zeros((1, 4))).fit(X)
    r = explainer.interactions(X[:20], index="Moebius", max_order=3)
    table = r.summary()
    assert len(table) == len(r.terms) - 1
    # independent: the mean absolute components in closed form
    a = np.abs(2 * X[:20, 0]).mean()
    b = np.abs(1.5 * X[:20, 1] * X[:20, 2]).mean()
    c = np.abs(X[:20, 0] * X[:20, 1] * X[:20, 3]).mean()
    top = table.iloc[:3]
    assert set(top.index) == {"x0", "x1 x x2", "x0 x x1 x x3"}
    np.testing.assert_allclose(sorted(top["mean_abs"]), sorted([a, b, c]), rtol=1e-12)
    assert (table["mean_abs"].iloc[3:] < 1e-12).all()
    assert list(table["order"].loc[["x0", "x1 x x2", "x0 x x1 x x3"]]) == [1, 2, 3]
    assert len(r.summary(top=2)) == 2
    with pytest.raises(ValueError, match="top"):
        r.summary(top=0)


def test_interaction_display_draws_the_pairs():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skdecomp.plot import InteractionDisplay

    X = np.random.default_rng(6).normal(size=(30, 4))
    explainer = Explainer(_multilinear, background=np.zeros((1, 4))).fit(X)
    r = explainer.interactions(X[:10], index="k-SII")
    disp = InteractionDisplay.from_result(r, grouping=[[1, 2], [0, 3]])
    (image,) = disp.images_.values()
    drawn = np.asarray(image.get_array())
    want = np.abs(r.matrix()).mean(axis=0)
    np.fill_diagonal(want, 0.0)
    order = disp.order_
    np.testing.assert_allclose(np.nan_to_num(drawn), want[np.ix_(order, order)], atol=1e-12)
    matplotlib.pyplot.close("all")
