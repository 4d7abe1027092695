"""FDTree: regions of the rows in which the model is additive over groups."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression

from skdecomp import AdaptiveGrouper, Explainer, FDTree
from skdecomp._game import AnchoredStatistics, CoalitionGame
from skdecomp._model import resolve_response
from skdecomp._tree import select_algorithm

from ._naive import METHODS, game
from .conftest import random_function


def sign_function(X):
    """f = x0 sign(x1) + x2 + x3**2: additive on each side of x1 = 0."""
    X = np.asarray(X, dtype=float)
    return X[:, 0] * np.sign(X[:, 1]) + X[:, 2] + X[:, 3] ** 2


@pytest.fixture(scope="module")
def uniform():
    return np.random.default_rng(0).uniform(-1, 1, size=(1000, 4))


@pytest.fixture(scope="module")
def hgb(uniform):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(3000, 4))
    return HistGradientBoostingRegressor(max_iter=200, random_state=0).fit(X, sign_function(X))


@pytest.fixture(scope="module")
def callable_tree(uniform):
    return FDTree(sign_function, max_samples=150, random_state=0).fit(uniform)


@pytest.fixture(scope="module")
def hgb_tree(hgb, uniform):
    return FDTree(hgb, max_samples=150, random_state=0).fit(uniform)


# -- the tree ------------------------------------------------------------------
@pytest.mark.parametrize("which", ["callable", "hgb"])
def test_first_split_on_x1_near_zero(which, callable_tree, hgb_tree):
    tree = callable_tree if which == "callable" else hgb_tree
    root = tree.nodes_[0]
    assert root["feature"] == 1 and root["kind"] == "num"
    assert abs(root["value"]) < 0.1
    assert tree.n_regions_ == 2
    assert tree.algorithm_.startswith("tree" if which == "hgb" else "model_agnostic")
    # a small share of the root's loss is left
    # rows between the threshold and 0 keep a little interaction
    assert tree.remaining_share_ < (0.02 if which == "callable" else 0.1)
    assert tree.loss_ == pytest.approx(tree.remaining_share_ * tree.loss_root_)


def test_root_losses_match_closed_forms(uniform):
    # x0 sign(x1) is a pure interaction F_01 with E[F_01**2] = E[x0**2] = 1/3:
    # PDP-PFI counts it once per group (2/3), PDP-SHAP a quarter per group
    # (1/6), the cost of exclusion once (1/3); the sample estimates them
    expected = {"pdp_pfi": 2 / 3, "pdp_shap": 1 / 6, "coe": 1 / 3}
    for loss, value in expected.items():
        tree = FDTree(sign_function, loss=loss, max_samples=300, random_state=0).fit(uniform)
        assert tree.loss_root_ == pytest.approx(value, rel=0.15)
        assert tree.nodes_[0]["feature"] == 1
        assert tree.remaining_share_ < 0.02


def _naive_region_loss(f, rows, groups, loss):
    """Loss of a region from explicit coalition games over its own rows."""
    K = len(groups)
    total = 0.0
    fz = f(rows)
    for x in rows:
        v = game(f, x, rows, groups)
        pdp, pfi, shap = (METHODS[m](v, K) for m in ("arch", "occlusion", "shapley"))
        if loss == "pdp_pfi":
            total += np.sum((pdp - pfi) ** 2)
        elif loss == "pdp_shap":
            total += np.sum((shap - pdp) ** 2)
        else:
            total += (f(x[None, :])[0] - fz.mean() - pdp.sum()) ** 2
    return total / len(rows)


@pytest.mark.parametrize("loss", ["pdp_pfi", "pdp_shap", "coe"])
def test_region_losses_match_brute_force(loss):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(16, 4))
    f = random_function(5, 4)
    groups = [[0], [1, 2], [3]]
    tree = FDTree(f, groups=groups, loss=loss, max_depth=1, min_samples_leaf=4,
                  alpha=0.0, max_samples=16).fit(X)
    assert tree.n_regions_ == 2
    assert tree.loss_root_ == pytest.approx(_naive_region_loss(f, X, groups, loss), rel=1e-9)
    regions = tree.apply(X)
    for r in range(tree.n_regions_):
        rows = X[regions == r]
        assert tree.region_losses_[r] == pytest.approx(
            _naive_region_loss(f, rows, groups, loss), rel=1e-9, abs=1e-12
        )
    sizes = np.bincount(regions)
    assert tree.loss_ == pytest.approx((tree.region_losses_ * sizes).sum() / 16)


def test_grouping_interacting_columns_removes_the_split(uniform, hgb):
    tree = FDTree(sign_function, groups=[[0, 1], [2], [3]], max_samples=150,
                  random_state=0).fit(uniform)
    assert tree.n_regions_ == 1 and tree.loss_root_ < 1e-20
    tree = FDTree(hgb, groups={"x0:x1": [0, 1], "x2": [2], "x3": [3]}, max_samples=150,
                  random_state=0).fit(uniform)
    assert tree.n_regions_ == 1
    assert list(tree.group_names_) == ["x0:x1", "x2", "x3"]
    # the fitted model keeps small interactions (a few % of its variance)
    # that splits could follow
    var = np.var(hgb.predict(tree.background_))
    assert 0 < tree.loss_root_ < 0.05 * var
    assert FDTree(hgb, groups=[[0, 1], [2], [3]], max_samples=150, min_loss_share=0.0,
                  random_state=0).fit(uniform).n_regions_ > 1


def test_grouper_as_groups(uniform):
    tree = FDTree(sign_function, groups=AdaptiveGrouper(max_samples=60, rel_tol=0),
                  max_samples=150, random_state=0).fit(uniform)
    assert [0, 1] in tree.grouper_.groups_
    assert tree.n_regions_ == 1


def test_split_search_is_exhaustive_over_candidates():
    # the chosen split of the root is the best of all candidate thresholds,
    # each scored directly on its two sub-blocks
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(60, 3))
    f = random_function(2, 3)
    tree = FDTree(f, max_depth=1, min_samples_leaf=5, alpha=0.0, max_samples=60).fit(X)
    oracle = FDTree(f, max_depth=0, max_samples=60).fit(X)
    best = None
    qs = np.linspace(0, 1, 41)[1:-1]
    for j in range(3):
        for t in np.unique(np.quantile(X[:, j], qs, method="lower")):
            left = X[:, j] <= t
            if min(left.sum(), (~left).sum()) < 5:
                continue
            gain = sum(
                FDTree(f, max_depth=0, max_samples=60).fit(X[mask]).loss_root_ * mask.sum()
                for mask in (left, ~left)
            )
            if best is None or gain < best[0] - 1e-12:
                best = (gain, j, t)
    assert oracle.n_regions_ == 1
    assert tree.nodes_[0]["feature"] == best[1]
    assert tree.nodes_[0]["value"] == pytest.approx(best[2])
    assert tree.loss_ * 60 == pytest.approx(best[0])


def test_alpha_and_min_samples_leaf_limit_the_tree(uniform):
    big = FDTree(sign_function, alpha=10.0, max_samples=150, random_state=0).fit(uniform)
    assert big.n_regions_ == 1 and big.rules_ == ["all rows"]
    f = random_function(0, 4)
    tree = FDTree(f, alpha=0.0, max_depth=3, min_samples_leaf=30, max_samples=150,
                  random_state=0).fit(uniform)
    assert 2 <= tree.n_regions_ <= 8
    counts = np.bincount(tree.sample_regions_, minlength=tree.n_regions_)
    assert counts.min() >= 30


def test_ordinal_and_categorical_splits():
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({
        "x0": rng.uniform(-1, 1, n),
        "level": rng.integers(0, 5, n),
        "colour": rng.choice(["red", "green", "blue"], n),
        "flag": rng.random(n) < 0.5,
    })

    def f(X):
        red = (X["colour"] == "red").to_numpy()
        return X["x0"].to_numpy() * np.where(red, 2.0, -1.0) + X["level"].to_numpy()

    tree = FDTree(f, max_depth=1, max_samples=200, random_state=0).fit(df)
    root = tree.nodes_[0]
    assert root["kind"] == "cat" and root["value"] == "red"
    assert tree.rules_ == ["colour == 'red'", "colour != 'red'"]
    regions = tree.apply(df)
    assert np.array_equal(regions == 0, (df["colour"] == "red").to_numpy())

    def g(X):
        X = np.asarray(X, dtype=float)
        return X[:, 0] * (X[:, 1] >= 2) + X[:, 2]

    Xo = np.column_stack([df["x0"], df["level"], df["flag"]]).astype(float)
    tree = FDTree(g, max_depth=1, max_samples=200, random_state=0).fit(Xo)
    assert tree.rules_ == ["x1 <= 1", "x1 >  1"]

    def h(X):
        X = np.asarray(X, dtype=float)
        return X[:, 0] * X[:, 2] + X[:, 1]

    tree = FDTree(h, max_depth=1, max_samples=200, random_state=0).fit(Xo)
    assert tree.rules_ == ["x2 <= 0", "x2 >  0"]


def test_apply_and_export_text(callable_tree, uniform):
    tree = callable_tree
    regions = tree.apply(uniform)
    t = tree.nodes_[0]["value"]
    assert np.array_equal(regions, (uniform[:, 1] > t).astype(int))
    assert np.array_equal(tree.apply(tree.background_), tree.sample_regions_)
    assert tree.region_sizes_.tolist() == np.bincount(regions).tolist()
    text = tree.export_text(decimals=3)
    lines = text.splitlines()
    assert lines[0] == f"|--- x1 <= {t:.3f}"
    assert lines[1].startswith("|   |--- region 0 (n=") and lines[3].startswith("|   |--- region 1")
    n0 = int(np.sum(regions == 0))
    assert f"n={n0}, {100 * n0 / len(uniform):.1f}%" in lines[1]
    assert "of root" in tree.export_text(show_loss=True)
    names = FDTree(sign_function, max_samples=100, random_state=0).fit(
        pd.DataFrame(uniform, columns=["a", "b", "c", "d"])
    )
    assert names.rules_[0].startswith("b <= ")


# -- regional explanations -----------------------------------------------------
def _clean(tree, X):
    """Rows on the side of x1 = 0 of their region (none lie between t and 0)."""
    t = tree.nodes_[0]["value"]
    return ~((X[:, 1] > min(t, 0)) & (X[:, 1] <= max(t, 0)))


def test_regional_explanations_agree_and_match_closed_forms(callable_tree, uniform):
    tree = callable_tree
    assert tree.loss_ < 1e-20  # no sample row lies between the threshold and 0
    X = uniform[:200]
    expl = tree.explain(X)
    regions = tree.apply(X)
    clean = _clean(tree, X)
    occ, arch, shap = (np.asarray(expl[m]) for m in ("occlusion", "arch", "shapley"))
    np.testing.assert_allclose(occ[clean], arch[clean], atol=1e-10)
    np.testing.assert_allclose(shap[clean], arch[clean], atol=1e-10)
    f = sign_function(X)
    np.testing.assert_allclose(expl["shapley"].base_values + shap.sum(axis=1), f, atol=1e-10)
    for r in range(tree.n_regions_):
        bg = tree.explainer(r).background_
        rows = (regions == r) & clean
        sign = -1.0 if r == 0 else 1.0
        # in a region f = sign * x0 + x2 + x3**2: phi_0 = sign (x0 - mean_B x0)
        np.testing.assert_allclose(shap[rows, 0], sign * (X[rows, 0] - bg[:, 0].mean()),
                                   atol=1e-10)
        np.testing.assert_allclose(expl["shapley"].base_values[regions == r],
                                   sign_function(bg).mean(), atol=1e-12)
    # one background for all rows: the methods disagree
    glob = Explainer(sign_function, background=150, random_state=0).fit(uniform).explain(X)
    gap = np.mean((np.asarray(glob["occlusion"]) - np.asarray(glob["arch"])) ** 2)
    assert gap > 0.1


def test_regional_explanations_on_the_tree_path(hgb_tree, uniform):
    tree = hgb_tree
    X = uniform[:80]
    expl = tree.explain(X, methods=["shapley", "occlusion", "arch"])
    regions = tree.apply(X)
    clean = _clean(tree, X)
    occ, arch, shap = (np.asarray(expl[m]) for m in ("occlusion", "arch", "shapley"))
    var = np.var(sign_function(X))
    assert np.mean((occ - arch) ** 2) < 0.02 * var
    glob = Explainer(tree.estimator_, background=tree.background_[:60]).fit(uniform).explain(
        X, methods=["occlusion", "arch"])
    assert np.mean((np.asarray(glob["occlusion"]) - np.asarray(glob["arch"])) ** 2) > 0.1 * var
    for r in range(tree.n_regions_):
        bg = tree.explainer(r).background_
        rows = (regions == r) & clean
        sign = -1.0 if r == 0 else 1.0
        closed = sign * (X[rows, 0] - bg[:, 0].mean())
        # the boosted model approximates f (RMSE about 0.1)
        assert np.sqrt(np.mean((shap[rows, 0] - closed) ** 2)) < 0.15
        assert np.corrcoef(shap[rows, 0], closed)[0, 1] > 0.98
    assert tree.explainer(0).algorithm_ == "tree"


def test_explain_keeps_rows_in_order(callable_tree, uniform):
    X = uniform[:50]
    expl = callable_tree.explain(X, methods="shapley")
    assert list(expl) == ["shapley"]
    regions = callable_tree.apply(X)
    for r in range(callable_tree.n_regions_):
        direct = callable_tree.explainer(r).explain(X[regions == r], methods=["shapley"])
        np.testing.assert_allclose(np.asarray(expl["shapley"])[regions == r],
                                   np.asarray(direct["shapley"]))
    assert expl["shapley"].raw_data is X or np.array_equal(expl["shapley"].raw_data, X)
    assert expl["shapley"].standard_errors is None


def test_explain_carries_the_standard_errors_of_sampled_methods(callable_tree, uniform):
    X = uniform[:30]
    expl = callable_tree.explain(X, methods=["permutation_shap"])["permutation_shap"]
    regions = callable_tree.apply(X)
    assert expl.standard_errors.shape == np.shape(expl.values)
    for r in range(callable_tree.n_regions_):
        direct = callable_tree.explainer(r).explain(X[regions == r],
                                                    methods=["permutation_shap"])
        np.testing.assert_array_equal(expl.standard_errors[regions == r],
                                      direct["permutation_shap"].standard_errors)


# -- the anchored engine -------------------------------------------------------
def _stats(model, S, tree=True):
    response, _ = resolve_response(model, "auto", None, S[:1])
    flat, _ = select_algorithm("auto" if tree else "model_agnostic", model, response, S)
    g = CoalitionGame(response, S, np.arange(S.shape[1]), tree=flat)
    return AnchoredStatistics(g, S)


def test_group_matrices_tree_and_model_calls_agree():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(500, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.nan_to_num(sign_function(X))
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    S = X[:25]
    groups = [[0, 2], [1], [3]]
    tree, calls = _stats(model, S), _stats(model, S, tree=False)
    assert tree.tree is not None and calls.tree is None
    G = tree.group_matrices(groups)
    np.testing.assert_allclose(G, calls.group_matrices(groups), atol=1e-12)
    # the means of the full matrices are the engine's means
    rows, cols = tree.group_means(groups)
    np.testing.assert_allclose(G.mean(axis=3), rows, atol=1e-12)
    np.testing.assert_allclose(G.mean(axis=2), cols, atol=1e-12)
    np.testing.assert_allclose(
        tree.shapley_matrices(groups), calls.shapley_matrices(groups), atol=1e-12
    )


def test_group_matrices_of_a_forest_with_several_outputs():
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    S = X[::10]
    tree, calls = _stats(model, S), _stats(model, S, tree=False)
    assert tree.tree is not None and tree.n_outputs == 3
    groups = [[0, 1], [2], [3]]
    np.testing.assert_allclose(tree.group_matrices(groups), calls.group_matrices(groups),
                               atol=1e-12)


def test_group_matrices_with_categorical_splits():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 4, 300), rng.uniform(-1, 1, (300, 2))])
    y = X[:, 1] * (X[:, 0] == 2) + X[:, 2]
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features=[0],
                                          random_state=0).fit(X, y)
    S = X[:15]
    G = _stats(model, S).group_matrices([[0], [1], [2]])
    np.testing.assert_allclose(G, _stats(model, S, tree=False).group_matrices(
        [[0], [1], [2]]), atol=1e-12)


# -- input checks --------------------------------------------------------------
def test_bad_input(callable_tree, uniform):
    with pytest.raises(ValueError, match="region must be an int from 0 to 1"):
        callable_tree.explainer(5)
    with pytest.raises(ValueError, match="loss"):
        FDTree(sign_function, loss="gini").fit(uniform)
    with pytest.raises(ValueError, match="at least 2 rows"):
        FDTree(sign_function).fit(uniform[:1])
    with pytest.raises(TypeError, match="is a model, not a grouper"):
        FDTree(sign_function, groups=LinearRegression()).fit(uniform)
    with pytest.raises(ValueError, match=r"2\.62e\+07 hybrid rows .* limit of 4194304"):
        FDTree(random_function(0, 14), loss="pdp_shap", max_samples=40).fit(
            np.random.default_rng(0).normal(size=(50, 14)))
    with pytest.raises(ValueError, match="4 features"):
        callable_tree.apply(uniform[:, :3])


def test_n_jobs_gives_the_same_tree(hgb, uniform):
    one = FDTree(hgb, max_samples=80, random_state=0, n_jobs=1).fit(uniform)
    two = FDTree(hgb, max_samples=80, random_state=0, n_jobs=2).fit(uniform)
    assert one.rules_ == two.rules_ and one.loss_ == pytest.approx(two.loss_)


# -- the Display ---------------------------------------------------------------
@pytest.fixture
def pyplot():
    plt = pytest.importorskip("matplotlib.pyplot")
    plt.close("all")
    yield plt
    plt.close("all")


def test_region_display(pyplot, callable_tree, uniform):
    from skdecomp.plot import RegionDisplay

    X = uniform[:200]
    disp = RegionDisplay.from_estimator(callable_tree, X, grid_resolution=11)
    assert disp.group == "x1"  # the column of the first split
    disp = RegionDisplay.from_estimator(callable_tree, X, group="x0", grid_resolution=11)
    regions = callable_tree.apply(X)
    shap = np.asarray(callable_tree.explain(X, methods="shapley")["shapley"])
    for r in range(2):
        heights = [p.get_width() for p in disp.bars_[r]]
        np.testing.assert_allclose(heights, np.abs(shap[regions == r]).mean(axis=0))
        # partial dependence by hand over the region's rows
        grid = disp.lines_[r].get_xdata()
        rows = X[regions == r]
        manual = []
        for g in grid:
            Z = rows.copy()
            Z[:, 0] = g
            manual.append(sign_function(Z).mean())
        np.testing.assert_allclose(disp.lines_[r].get_ydata(), manual, atol=1e-12)
    # opposite slopes on the two sides of x1 = 0
    slopes = [np.polyfit(line.get_xdata(), line.get_ydata(), 1)[0] for line in disp.lines_]
    assert slopes[0] < -0.9 and slopes[1] > 0.9
    assert len(disp.ax_) == 2 and disp.figure_ is disp.ax_[0].figure
    with pytest.raises(ValueError, match="not among the groups"):
        RegionDisplay.from_estimator(callable_tree, X, group="z")
    _, axes = pyplot.subplots(1, 2)
    disp = RegionDisplay.from_estimator(callable_tree, X, group=0, ax=list(axes))
    assert disp.ax_[0] is axes[0]
    again = RegionDisplay.from_result(disp.rules, disp.sizes, disp.importances,
                                      disp.group_names, disp.grid, disp.pdp, disp.group)
    np.testing.assert_allclose(again.lines_[1].get_ydata(), disp.lines_[1].get_ydata())
    with pytest.raises(ValueError, match="one row per region"):
        RegionDisplay.from_result(disp.rules, disp.sizes, disp.importances[:1],
                                  disp.group_names, disp.grid, disp.pdp, disp.group)


def test_a_function_that_handles_nan_is_taken_as_by_the_explainer():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    X[3, 1] = np.nan

    def f(Z):
        Z = np.nan_to_num(np.asarray(Z, dtype=float))
        return Z[:, 0] * (Z[:, 1] > 0) + Z[:, 2]

    tree = FDTree(f, max_depth=1, random_state=0).fit(X)
    assert tree.n_regions_ >= 1
    # a function that gives NaN for a missing value is refused with the reason
    with pytest.raises(ValueError, match="NaN or infinity"):
        FDTree(lambda Z: Z[:, 0] * Z[:, 1], max_depth=1, random_state=0).fit(X)
