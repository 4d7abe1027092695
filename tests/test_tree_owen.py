"""Owen and Winter values on the tree path, leaf by leaf, for any number of groups."""

import os
import subprocess
import sys

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from skdecomp import Explainer
from skdecomp._decomposition import Decomposition
from skdecomp._tree._owen import order_factors

HIERARCHIES = {
    "two levels": [[0, 1, 2], [3, 4], [5, 6, 7]],
    "three levels, unbalanced": [[0, [1, 2]], [3], [[4, 5], 6, 7]],
    "non-binary deep": [[[0, 1, 2], [3, 4]], [5, [6, 7]]],
    "binary": [[[0, 1], [2, [3, 4]]], [5, [6, 7]]],
    "flat": list(range(8)),
}
GAMES = {"marginal": {}, "path_dependent": {"imputer": "path_dependent"}}


def target(X):
    return (X[:, 0] * X[:, 1] + X[:, 1] * X[:, 3] + np.sin(X[:, 2] * X[:, 4])
            + X[:, 5] ** 2 * X[:, 0] + 0.5 * X[:, 6] * X[:, 7] * X[:, 2])


@pytest.fixture(scope="module")
def data():
    X = np.random.default_rng(0).normal(size=(200, 8))
    return X, target(X)


def _models(X, y):
    import lightgbm
    import xgboost

    return {
        "gb": GradientBoostingRegressor(n_estimators=15, max_depth=4,
                                        random_state=0).fit(X, y),
        "forest": RandomForestRegressor(n_estimators=8, max_depth=5,
                                        random_state=0).fit(X, y),
        "xgboost": xgboost.XGBRegressor(n_estimators=15, max_depth=4,
                                        n_jobs=1).fit(X, y),
        "lightgbm": lightgbm.LGBMRegressor(n_estimators=15, num_leaves=12,
                                           verbose=-1, n_jobs=1).fit(X, y),
    }


@pytest.fixture(scope="module")
def models(data):
    return _models(*data)


def components_route(explainer, X):
    """The Owen values from all 2**K components and the hierarchy's weights."""
    F, prediction = explainer._components(X)
    dec = Decomposition(F, list(explainer.group_names_), explainer.output_names_,
                        prediction)
    return dec.attributions("owen", weights=explainer.hierarchy_.component_weights())


def _fit(model, X, game, **kw):
    kwargs = dict(GAMES[game])
    if game == "marginal":
        kwargs["background"] = X[:25]
    return Explainer(model, method="owen", **kwargs, **kw).fit(X)


@pytest.mark.parametrize("game", list(GAMES))
@pytest.mark.parametrize("name", list(HIERARCHIES))
@pytest.mark.parametrize("model_name", ["gb", "forest", "xgboost", "lightgbm"])
def test_equal_to_the_components_route(data, models, model_name, name, game):
    X, _ = data
    explainer = _fit(models[model_name], X, game, hierarchy=HIERARCHIES[name])
    assert explainer.game_.tree is not None
    rows = X[100:112]
    phi = explainer.transform(rows)
    np.testing.assert_allclose(phi, components_route(explainer, rows), rtol=0,
                               atol=1e-10)
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_,
        models[model_name].predict(rows), rtol=0, atol=1e-5)


@pytest.mark.parametrize("game", list(GAMES))
def test_groups_of_columns_merge_into_one_player(data, game):
    X, y = data
    X2 = np.hstack([X, X[:, :3] + 0.1 * np.random.default_rng(1).normal(size=(200, 3))])
    model = GradientBoostingRegressor(n_estimators=15, max_depth=5,
                                      random_state=0).fit(X2, y)
    groups = [[0, 8], [1, 9], [2, 10], [3, 4], [5], [6, 7]]
    hierarchy = [[[0, 8], [1, 9]], [[2, 10], [3, 4]], [5, 6, 7]]
    explainer = _fit(model, X2, game, groups=groups, hierarchy=hierarchy)
    rows = X2[150:160]
    np.testing.assert_allclose(explainer.transform(rows),
                               components_route(explainer, rows), rtol=0, atol=1e-10)


@pytest.mark.parametrize("game", list(GAMES))
def test_several_outputs(data, game):
    X, y = data
    labels = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    model = RandomForestClassifier(n_estimators=6, max_depth=4,
                                   random_state=0).fit(X, labels)
    explainer = _fit(model, X, game, hierarchy=HIERARCHIES["three levels, unbalanced"])
    rows = X[:6]
    phi = explainer.transform(rows)
    assert phi.shape == (6, 8, 3)
    np.testing.assert_allclose(phi, components_route(explainer, rows), rtol=0,
                               atol=1e-10)


@pytest.mark.slow
def test_threads_give_identical_values(data, models):
    X, _ = data
    H = HIERARCHIES["non-binary deep"]
    for game in GAMES:
        one = _fit(models["gb"], X, game, hierarchy=H).transform(X[:20])
        two = _fit(models["gb"], X, game, hierarchy=H, n_jobs=2).transform(X[:20])
        np.testing.assert_array_equal(one, two)


def test_order_factors():
    g = order_factors(5)
    # p before and q after one child among p + q + 1: p! q! / (p + q + 1)!
    assert g[0, 0] == 1.0
    assert g[1, 0] == 0.5
    np.testing.assert_allclose(g[2, 1], 2 / 24)
    np.testing.assert_allclose(g[1, 2], 2 / 24)


# -- many groups ------------------------------------------------------------------
@pytest.fixture(scope="module")
def wide():
    import xgboost

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 30))
    y = (X[:, 0] * X[:, 11] + np.sin(X[:, 3] * X[:, 22]) + X[:, 5] * X[:, 6] * X[:, 29]
         + X[:, 14] ** 2 - X[:, 17] * X[:, 8])
    model = xgboost.XGBRegressor(n_estimators=40, max_depth=5, n_jobs=1).fit(X, y)
    # three levels: 3 blocks of 2 to 4 sub-blocks
    blocks = [list(range(0, 10)), list(range(10, 22)), list(range(22, 30))]
    H = [[list(range(0, 3)), list(range(3, 7)), list(range(7, 10))],
         [list(range(10, 14)), list(range(14, 16)), [16], list(range(17, 22))],
         [list(range(22, 26)), list(range(26, 30))]]
    return X, model, blocks, H


@pytest.mark.parametrize("game", list(GAMES))
def test_thirty_groups(wide, game):
    X, model, blocks, H = wide
    rows = X[:15]
    owen = _fit(model, X, game, hierarchy=H)
    assert owen.n_groups_ == 30
    phi = owen.transform(rows)
    # efficiency
    np.testing.assert_allclose(phi.sum(axis=1) + owen.expected_value_,
                               model.predict(rows), rtol=0, atol=1e-5)
    # the block totals are the grouped Shapley values of the blocks
    kwargs = dict(GAMES[game])
    if game == "marginal":
        kwargs["background"] = X[:25]
    grouped = Explainer(model, groups=blocks, **kwargs).fit(X)
    assert grouped.game_.tree is not None
    totals = np.stack([phi[:, b].sum(axis=1) for b in blocks], axis=1)
    np.testing.assert_allclose(totals, grouped.transform(rows), rtol=0, atol=1e-10)
    # a flat hierarchy gives the tree path's Shapley values
    flat = _fit(model, X, game, hierarchy=list(range(30))).transform(rows)
    shapley = Explainer(model, **kwargs).fit(X).transform(rows)
    np.testing.assert_allclose(flat, shapley, rtol=0, atol=1e-10)


@pytest.mark.slow
def test_same_values_without_compilation(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(
        "import sys, numpy as np\n"
        "sys.path.insert(0, %r)\n"
        "from tests.test_tree_owen import _fit, target, HIERARCHIES\n"
        "from sklearn.ensemble import GradientBoostingRegressor\n"
        "X = np.random.default_rng(0).normal(size=(200, 8))\n"
        "m = GradientBoostingRegressor(n_estimators=5, max_depth=3, random_state=0)"
        ".fit(X, target(X))\n"
        "out = [_fit(m, X, g, hierarchy=HIERARCHIES['non-binary deep'])"
        ".transform(X[:5]) for g in ('marginal', 'path_dependent')]\n"
        "np.save(sys.argv[1], np.stack(out))\n"
        % os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    )
    results = []
    for jit in ("0", "1"):
        path = tmp_path / f"out{jit}.npy"
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit)
        subprocess.run([sys.executable, str(script), str(path)], check=True, env=env)
        results.append(np.load(path))
    np.testing.assert_allclose(results[0], results[1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("game", list(GAMES))
def test_histogram_boosting_and_catboost(data, game):
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = data
    fitted = [HistGradientBoostingRegressor(max_iter=10, max_depth=4).fit(X, y)]
    try:
        import catboost
    except ImportError:
        pass
    else:
        fitted.append(catboost.CatBoostRegressor(
            iterations=10, depth=4, verbose=0, thread_count=1).fit(X, y))
    for model in fitted:
        explainer = _fit(model, X, game, hierarchy=HIERARCHIES["non-binary deep"])
        assert explainer.game_.tree is not None
        rows = X[:8]
        np.testing.assert_allclose(explainer.transform(rows),
                                   components_route(explainer, rows), rtol=0,
                                   atol=1e-10)
