"""Tree path of XGBoost, LightGBM and CatBoost models: their raw score ("margin")
recomputed from the flat trees, and explanations equal to model calls."""

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdecomp import Explainer
from skdecomp._model import auto_response, describe_response, resolve_response
from skdecomp._tree import extract_tree_model, tree_predict

GROUPS = [[0, 1], [2], [3, 4], [5]]
TASKS = ["regression", "binary", "multiclass"]


def _data(n=300, d=6, nan=0.08, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X0 = X.copy()
    if nan:
        X[rng.random(X.shape) < nan] = np.nan
    s = X0[:, 0] * X0[:, 1] + np.sin(2 * X0[:, 2]) + 0.5 * X0[:, 3] * (X0[:, 4] > 0)
    return X, {"regression": s, "binary": (s > 0).astype(int),
               "multiclass": np.digitize(s, [-0.5, 0.5])}


def _xgb(task, **kw):
    xgb = pytest.importorskip("xgboost")
    kw = {"n_estimators": 30, "max_depth": 3, **kw}
    return xgb.XGBRegressor(**kw) if task == "regression" else xgb.XGBClassifier(**kw)


def _lgb(task, **kw):
    lgb = pytest.importorskip("lightgbm")
    kw = {"n_estimators": 30, "num_leaves": 8, "min_child_samples": 5, "verbose": -1, **kw}
    return lgb.LGBMRegressor(**kw) if task == "regression" else lgb.LGBMClassifier(**kw)


def _cb(task, **kw):
    cb = pytest.importorskip("catboost")
    kw = {"iterations": 30, "depth": 3, "verbose": 0, "random_seed": 0,
          "thread_count": 1, "allow_writing_files": False, **kw}
    return cb.CatBoostRegressor(**kw) if task == "regression" else cb.CatBoostClassifier(**kw)


MAKERS = {"xgboost": _xgb, "lightgbm": _lgb, "catboost": _cb}


def _margin(model, X):
    """The library's own raw score, 2-D."""
    library = type(model).__module__.split(".")[0]
    if library == "xgboost":
        out = model.predict(X, output_margin=True)
    elif library == "lightgbm":
        out = model.predict(X, raw_score=True)
    else:
        out = model.predict(X, prediction_type="RawFormulaVal")
    out = np.asarray(out, dtype=np.float64)
    return out.reshape(out.shape[0], -1)


def _check_trees(model, X, method="margin"):
    """The flat trees reproduce the response to 1e-9; returns the response."""
    first = X.iloc[:1] if isinstance(X, pd.DataFrame) else X[:1]
    response, _ = resolve_response(model, method, None, first)
    tree_model = extract_tree_model(model, response)
    expected = response(X)
    np.testing.assert_allclose(tree_predict(tree_model, X), expected, rtol=1e-9,
                               atol=1e-9 * (1 + np.abs(expected).max()))
    return response


def _check_explainer(model, X, groups=GROUPS, rows=slice(0, 15)):
    """Default explainer: tree path on the margin, equal to model calls."""
    ex = Explainer(model, groups=groups, background=30, random_state=0).fit(X)
    assert (ex.algorithm_, ex.response_method_) == ("tree", "margin"), ex.algorithm_
    agnostic = Explainer(model, groups=groups, background=30, random_state=0,
                         algorithm="model_agnostic", response_method="margin").fit(X)
    assert agnostic.algorithm_ == "model_agnostic"
    assert agnostic.output_names_ == ex.output_names_
    Xr = X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]
    np.testing.assert_allclose(ex.transform(Xr), agnostic.transform(Xr), rtol=0, atol=1e-6)
    return ex


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("library", list(MAKERS))
def test_trees_reproduce_the_margin_and_explanations_match_model_calls(library, task):
    X, y = _data()
    model = MAKERS[library](task).fit(X, y[task])
    response = _check_trees(model, X)
    own = _margin(model, X)
    if library == "xgboost":
        # XGBoost adds its leaves in float32; the margin is the float64 sum
        np.testing.assert_allclose(response(X), own, rtol=0,
                                   atol=1e-5 * (1 + np.abs(own).max()))
    else:
        np.testing.assert_array_equal(response(X), own)
    ex = _check_explainer(model, X)
    expected_names = {"regression": ["y"], "binary": ["1"], "multiclass": ["0", "1", "2"]}
    assert ex.output_names_ == expected_names[task]
    text = ex.explain(X[:2], methods=["shapley"])["shapley"].output
    assert text.startswith("margin (raw score): the raw score before the link")


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_missing_values_follow_the_booster(library):
    X, y = _data(nan=0.2)
    model = MAKERS[library]("regression").fit(X, y["regression"])
    _check_trees(model, X)
    # rows missing everywhere, and a model trained without NaN shown NaN
    # (LightGBM's missing_type None reads NaN as 0)
    full = np.full((3, X.shape[1]), np.nan)
    _check_trees(model, np.vstack([X, full]))
    X_clean, _ = _data(nan=0.0)
    clean = MAKERS[library]("regression").fit(X_clean, y["regression"])
    _check_trees(clean, X)
    if library == "lightgbm":
        no_missing = MAKERS[library]("regression", use_missing=False).fit(X, y["regression"])
        _check_trees(no_missing, X)


def _categorical_frame(n=400, seed=1):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "a": rng.normal(size=n),
        "b": pd.Categorical(rng.choice(list("pqrstuvw"), n)),
        "c": rng.normal(size=n),
        "d": pd.Categorical(rng.choice(["x", "y", "z"], n)),
    })
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    X.loc[rng.random(n) < 0.1, "b"] = np.nan
    X.loc[rng.random(n) < 0.1, "d"] = np.nan
    y = (np.nan_to_num(X["a"]) + (X["b"].cat.codes % 3) - 1.5 * (X["d"].cat.codes == 1)
         + X["c"] * (X["b"].cat.codes > 4))
    return X, y.to_numpy()


@pytest.mark.parametrize("max_cat_to_onehot", [1, 64])
def test_xgboost_categorical_splits(max_cat_to_onehot):
    X, y = _categorical_frame()
    model = _xgb("regression", enable_categorical=True,
                 max_cat_to_onehot=max_cat_to_onehot).fit(X, y)
    response = _check_trees(model, X)
    tree_model = extract_tree_model(model, response)
    assert (tree_model.node_int[:, 4] >= 0).any()
    # XGBoost codes categories by value, whatever the order of the frame's
    reordered = X.assign(b=X["b"].cat.reorder_categories(list("wvutsrqp")))
    np.testing.assert_allclose(tree_predict(tree_model, reordered), response(X), atol=1e-12)
    _check_explainer(model, X, groups=[[0], [1], [2, 3]])

    # codes in a numeric array: negative or large codes go left, like XGBoost
    codes = X.apply(lambda c: c.cat.codes.where(c.cat.codes >= 0) if c.dtype == "category"
                    else c).to_numpy(dtype=float)
    numeric = _xgb("regression", enable_categorical=True,
                   feature_types=["q", "c", "q", "c"]).fit(codes, y)
    odd = codes[:6].copy()
    odd[:, 1] = [-1, 300, -0.5, 2.5, 7, 1e6]
    _check_trees(numeric, np.vstack([codes, odd]))


@pytest.mark.parametrize("how", ["pandas", "indices"])
def test_lightgbm_categorical_splits(how):
    X, y = _categorical_frame()
    kw = {"min_data_per_group": 5, "cat_smooth": 1}
    if how == "pandas":
        model = _lgb("regression", **kw).fit(X, y)
        data = X
    else:
        data = X.apply(lambda c: c.cat.codes.where(c.cat.codes >= 0)
                       if c.dtype == "category" else c).to_numpy(dtype=float)
        model = _lgb("regression", **kw).fit(data, y, categorical_feature=[1, 3])
    response = _check_trees(model, data)
    tree_model = extract_tree_model(model, response)
    assert (tree_model.node_int[:, 4] >= 0).any()
    if how == "pandas":
        reordered = X.assign(b=X["b"].cat.reorder_categories(list("wvutsrqp")))
        np.testing.assert_allclose(tree_predict(tree_model, reordered), response(X), atol=1e-12)
    else:
        # NaN, negative and unseen codes go right; fractions are truncated
        odd = data[:7].copy()
        odd[:, 1] = [-1, 300, -0.5, 2.5, 7, np.nan, 0.7]
        _check_trees(model, np.vstack([data, odd]))
    _check_explainer(model, data, groups=[[0], [1], [2, 3]])


def test_raw_boosters():
    xgb = pytest.importorskip("xgboost")
    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 3},
                        xgb.DMatrix(X, y["binary"]), 20)
    ex = _check_explainer(booster, X)
    assert ex.output_names_ == ["1"]
    booster = xgb.train({"objective": "multi:softprob", "num_class": 3, "max_depth": 3},
                        xgb.DMatrix(X, y["multiclass"]), 10)
    assert _check_explainer(booster, X).output_names_ == ["0", "1", "2"]
    booster = xgb.train({"max_depth": 3}, xgb.DMatrix(X, y["regression"]), 20)
    assert _check_explainer(booster, X).output_names_ == ["y"]

    params = {"num_leaves": 8, "min_data_in_leaf": 5, "verbose": -1}
    booster = lgb.train({**params, "objective": "multiclass", "num_class": 3},
                        lgb.Dataset(X, y["multiclass"]), 10)
    assert _check_explainer(booster, X).output_names_ == ["0", "1", "2"]
    ex = Explainer(booster, groups=GROUPS, target=2, background=30, random_state=0).fit(X)
    assert ex.output_names_ == ["2"] and ex.algorithm_ == "tree"
    booster = lgb.train({**params, "objective": "regression"},
                        lgb.Dataset(X, y["regression"]), 20)
    assert _check_explainer(booster, X).output_names_ == ["y"]
    # a raw regression Booster's prediction is its raw score
    ex = Explainer(booster, groups=GROUPS, response_method="predict", background=30).fit(X)
    assert ex.algorithm_ == "tree"


def test_pipeline_ending_in_xgboost():
    X, y = _data()
    pipe = make_pipeline(StandardScaler(), _xgb("regression")).fit(X, y["regression"])
    _check_trees(pipe, X)
    _check_explainer(pipe, X)
    _check_explainer(FrozenEstimator(make_pipeline(StandardScaler(), _lgb("binary")).fit(
        X, y["binary"])), X)


def test_xgboost_random_forests():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    forest = xgb.XGBRFRegressor(n_estimators=10, max_depth=4).fit(X, y["regression"])
    _check_trees(forest, X)
    forest = xgb.XGBRFClassifier(n_estimators=5, max_depth=3).fit(X, y["multiclass"])
    _check_explainer(forest, X)


def test_dart_weights_and_early_stopping():
    X, y = _data(n=400)
    dart = _xgb("regression", booster="dart", rate_drop=0.5, skip_drop=0.0).fit(
        X, y["regression"])
    _check_trees(dart, X)
    _check_explainer(dart, X)
    _check_trees(_lgb("regression", boosting_type="dart").fit(X, y["regression"]), X)

    lgb = pytest.importorskip("lightgbm")
    fit, val = slice(0, 300), slice(300, 400)
    model = _xgb("regression", n_estimators=200, learning_rate=0.5,
                 early_stopping_rounds=3).fit(
        X[fit], y["regression"][fit], eval_set=[(X[val], y["regression"][val])],
        verbose=False)
    assert model.best_iteration + 1 < model.get_booster().num_boosted_rounds()
    response = _check_trees(model, X)
    assert extract_tree_model(model, response).roots.shape[0] == model.best_iteration + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eval_set is deprecated in LightGBM >= 4.7
        model = _lgb("regression", n_estimators=200, learning_rate=0.5).fit(
            X[fit], y["regression"][fit], eval_set=[(X[val], y["regression"][val])],
            callbacks=[lgb.early_stopping(3, verbose=False)])
    assert model.best_iteration_ < 200
    _check_trees(model, X)


def test_lightgbm_random_forest_mode():
    X, y = _data()
    model = _lgb("regression", boosting_type="rf", n_estimators=10, bagging_freq=1,
                 bagging_fraction=0.7).fit(X, y["regression"])
    # LightGBM's raw score of a forest is the sum of its trees, predict the mean
    _check_trees(model, X)
    _check_trees(model, X, method="predict")
    # "auto" explains the forest's prediction (the mean), on the tree path
    explainer = Explainer(model, background=20, random_state=0).fit(X)
    assert explainer.response_method_ == "predict" and explainer.algorithm_ == "tree"
    phi = explainer.transform(X[:4])
    np.testing.assert_allclose(
        phi.sum(axis=1), model.predict(X[:4]) - model.predict(explainer.background_).mean(),
        atol=1e-10)


def test_xgboost_missing_value_parameter():
    X, y = _data(nan=0.0)
    X[np.random.default_rng(0).random(X.shape) < 0.1] = -999.0
    model = _xgb("regression", missing=-999.0).fit(X, y["regression"])
    _check_trees(model, X)


def test_unsupported_models_fall_back_with_a_reason():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    Xz = np.nan_to_num(X)
    cases = [
        (xgb.XGBRegressor(booster="gblinear", n_estimators=5), X, "auto", "gblinear"),
        (_lgb("regression", zero_as_missing=True), Xz, "auto", "zero_as_missing"),
        (_lgb("regression", linear_tree=True), Xz, "auto", "linear_tree"),
        (_xgb("regression"), X, "predict", "float32"),
        (_xgb("binary"), X, "predict_proba", "response_method='margin'"),
        (_xgb("binary"), X, "log_odds", "response_method='margin' has a tree path"),
        (_lgb("regression", objective="poisson"), X, "predict", "'poisson'"),
    ]
    for model, data, method, reason in cases:
        target = np.exp(y["regression"] / 3) if "poisson" in reason else (
            y["binary"] if isinstance(model, xgb.XGBClassifier) else y["regression"])
        model.fit(data, target)
        ex = Explainer(model, groups=GROUPS, response_method=method, background=10).fit(data)
        assert ex.algorithm_.startswith("model_agnostic ("), ex.algorithm_
        assert reason in ex.algorithm_, ex.algorithm_
        with pytest.raises(ValueError, match="algorithm='tree' cannot be used"):
            Explainer(model, groups=GROUPS, response_method=method, algorithm="tree",
                      background=10).fit(data)
    # the auto scale of a Poisson model is its margin, on the tree path
    poisson = cases[-1][0]
    assert auto_response(poisson)[0] == "margin"
    assert Explainer(poisson, groups=GROUPS, background=10).fit(X).algorithm_ == "tree"


def test_catboost_categorical_features_fall_back():
    pytest.importorskip("catboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.choice(list("abc"), 200)})
    y = X["a"] + (X["b"] == "a")
    model = _cb("regression", iterations=5, cat_features=[1]).fit(X, y)
    ex = Explainer(model, background=10).fit(X)
    assert ex.response_method_ == "margin"
    assert ex.algorithm_.startswith("model_agnostic (") and "categorical" in ex.algorithm_


def test_margin_needs_a_boosting_model():
    X, y = _data(nan=0.0)
    forest = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y["regression"])
    with pytest.raises(ValueError, match="has no margin.*XGBoost, LightGBM and CatBoost"):
        Explainer(forest, response_method="margin", background=10).fit(X)


def test_auto_scale_and_its_description():
    X, y = _data()
    model = _lgb("regression").fit(X, y["regression"])
    method, reason = auto_response(model)
    assert method == "margin" and "without a link it equals predict" in reason
    assert describe_response("margin", ["y"], model).startswith("margin (raw score): ")
    clf = _xgb("binary").fit(X, y["binary"])
    assert auto_response(make_pipeline(StandardScaler(), clf))[0] == "margin"
    assert describe_response("margin", ["1"], clf).endswith("; class '1'")
    assert describe_response("predict_proba", ["1"], clf) == (
        "probability (predict_proba), class '1'")


def test_pickled_explainer_keeps_the_tree_path():
    X, y = _data()
    ex = Explainer(_xgb("multiclass").fit(X, y["multiclass"]), groups=GROUPS,
                   background=20, random_state=0).fit(X)
    again = pickle.loads(pickle.dumps(ex))
    np.testing.assert_array_equal(again.transform(X[:5]), ex.transform(X[:5]))


def test_import_does_not_load_the_boosting_libraries():
    code = (
        "import sys, numpy as np, skdecomp, skdecomp._tree._boosters\n"
        "from sklearn.ensemble import RandomForestRegressor\n"
        "X = np.random.default_rng(0).normal(size=(50, 3))\n"
        "m = RandomForestRegressor(n_estimators=2).fit(X, X[:, 0])\n"
        "skdecomp.Explainer(m, background=5).fit(X)\n"
        "print([m for m in ('xgboost', 'lightgbm', 'catboost') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("n_classes", [2, 3])
def test_lightgbm_decision_function_is_its_raw_score_on_the_tree_path(n_classes):
    lightgbm = pytest.importorskip("lightgbm")
    if not callable(getattr(lightgbm.LGBMClassifier, "decision_function", None)):
        pytest.skip("LightGBM before 4.7 has no decision_function")
    X, targets = _data(200, nan=0.0)
    target = targets["binary" if n_classes == 2 else "multiclass"]
    model = lightgbm.LGBMClassifier(n_estimators=10, num_leaves=8, verbose=-1,
                                    n_jobs=1).fit(X, target)
    kw = dict(response_method="decision_function", background=20, random_state=0)
    tree = Explainer(model, **kw).fit(X)
    calls = Explainer(model, algorithm="model_agnostic", **kw).fit(X)
    assert tree.algorithm_ == "tree"
    np.testing.assert_allclose(tree.transform(X[:5]), calls.transform(X[:5]), atol=1e-9)
    np.testing.assert_allclose(tree.transform(X[:5]).sum(axis=1) + tree.expected_value_,
                               model.decision_function(X[:5]), atol=1e-9)


def test_xgboost_vector_leaves_and_linear_boosters_explained_through_their_margin():
    xgb = pytest.importorskip("xgboost")
    X, targets = _data(200, nan=0.0)
    Y = np.column_stack([targets["regression"], X[:, 2]])
    vector = xgb.XGBRegressor(n_estimators=5, tree_method="hist", n_jobs=1,
                              multi_strategy="multi_output_tree").fit(X, Y)
    linear = xgb.train({"booster": "gblinear", "nthread": 1},
                       xgb.DMatrix(X, label=targets["regression"]), 5)
    for model, pred in ((vector, vector.predict(X[:5])),
                        (linear, linear.predict(xgb.DMatrix(X[:5])))):
        explainer = Explainer(model, background=20, random_state=0).fit(X)
        assert explainer.algorithm_.startswith("model_agnostic")
        phi = explainer.transform(X[:5])
        np.testing.assert_allclose(phi.sum(axis=1) + explainer.expected_value_, pred,
                                   rtol=1e-6, atol=1e-6)
