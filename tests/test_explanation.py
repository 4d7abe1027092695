"""Explanation: attributions with their expected value, rows and names."""

import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdecomp import (
    AdaptiveGrouper,
    CorrelationGrouper,
    Explainer,
    Explanation,
    Explanations,
    FixedGrouper,
    metrics,
)

GROUPS = {"ab": ["a", "b"], "c": ["c"], "d": ["d"]}


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(80, 4)), columns=list("abcd"))
    X.index = [f"r{i}" for i in range(len(X))]
    y = X["a"] * X["b"] + np.sin(X["c"]) + X["d"]
    model = HistGradientBoostingRegressor(max_iter=20, random_state=0).fit(X, y)
    return X, model


@pytest.fixture(scope="module")
def explainer(frame):
    X, model = frame
    return Explainer(model, groups=GROUPS, background=20, random_state=0).fit(X)


@pytest.fixture(scope="module")
def classifier():
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(90, 3)), columns=["u", "v", "w"])
    y = np.digitize(X["u"] + X["v"] * X["w"], [-0.5, 0.5])
    model = LogisticRegression().fit(X, y)
    return X, model


def test_explain_returns_explanations(explainer, frame):
    X, _ = frame
    res = explainer.explain(X.iloc[:5], methods=["shapley", "arch"])
    assert isinstance(res, Explanations)
    assert list(res) == ["shapley", "arch"]
    assert res.shapley is res["shapley"]
    e = res["shapley"]
    assert isinstance(e, Explanation)
    assert e.method == "shapley" and e.output == "prediction"
    assert e.shape == (5, 3) and len(e) == 5 and e.ndim == 2
    assert e.feature_names == ["ab", "c", "d"]
    assert e.groups == [["a", "b"], ["c"], ["d"]]
    assert list(e.feature_names_in) == list("abcd")
    assert e.output_names == ["y"]
    assert "shapley" in repr(e)


def test_values_equal_transform(explainer, frame):
    X, _ = frame
    rows = X.iloc[:6]
    expected = explainer.transform(rows)
    e = Explanation.from_explainer(explainer, rows)
    assert e.method == explainer.method_
    np.testing.assert_array_equal(e.values, expected)
    np.testing.assert_array_equal(np.asarray(e), expected)
    np.testing.assert_array_equal(
        explainer.explain(rows, methods=["shapley"])["shapley"].values, expected
    )
    banzhaf = Explanation.from_explainer(explainer, rows, method="banzhaf")
    np.testing.assert_allclose(
        banzhaf.values, explainer.explain(rows, methods=["banzhaf"])["banzhaf"].values
    )


def test_shapley_values_add_up_to_the_prediction(explainer, frame):
    X, model = frame
    rows = X.iloc[10:16]
    e = explainer.explain(rows, methods=["shapley"])["shapley"]
    np.testing.assert_allclose(e.base_values, explainer.expected_value_)
    np.testing.assert_allclose(
        e.base_values + e.values.sum(axis=1), model.predict(rows), atol=1e-8
    )


def test_data_is_the_value_of_one_column_groups(explainer, frame):
    X, _ = frame
    rows = X.iloc[:4]
    e = explainer.explain(rows, methods=["shapley"])["shapley"]
    assert e.data.dtype == np.float64
    assert np.isnan(e.data[:, 0]).all()  # "ab" has two columns
    np.testing.assert_array_equal(e.data[:, 1:], rows[["c", "d"]].to_numpy())
    pd.testing.assert_frame_equal(e.raw_data, rows)


def test_select_rows_and_groups(explainer, frame):
    X, _ = frame
    e = explainer.explain(X.iloc[:6], methods=["shapley"])["shapley"]
    v = e.values

    np.testing.assert_array_equal(e[1:4].values, v[1:4])
    np.testing.assert_array_equal(e[[0, 5]].values, v[[0, 5]])
    np.testing.assert_array_equal(e[np.arange(6) % 2 == 0].values, v[::2])
    assert list(e[1:3].to_frame().index) == ["r1", "r2"]
    assert list(e[1:3].raw_data.index) == ["r1", "r2"]

    # groups by position or by name, alone or in lists
    np.testing.assert_array_equal(e[:, "c"].values, v[:, 1])
    np.testing.assert_array_equal(e[:, 1].values, v[:, 1])
    sub = e[:, ["d", "ab"]]
    assert sub.feature_names == ["d", "ab"] and sub.groups == [["d"], ["a", "b"]]
    np.testing.assert_array_equal(sub.values, v[:, [2, 0]])
    np.testing.assert_array_equal(e[:, [2, 0]].values, sub.values)
    np.testing.assert_array_equal(e[..., "d"].values, v[:, 2])

    one = e[0]
    assert one.shape == (3,) and one.ndim == 1
    assert isinstance(one.base_values, float)
    assert isinstance(one.raw_data, pd.Series) and one.raw_data.name == "r0"
    cell = e[0, "ab"]
    assert cell.shape == () and cell.feature_names == "ab"
    assert cell.groups == ["a", "b"]
    assert float(np.asarray(cell)) == v[0, 0]
    with pytest.raises(TypeError, match="len"):
        len(cell)
    # iterating gives one row at a time
    assert [r.shape for r in e][:2] == [(3,), (3,)]


def test_select_errors(explainer, frame):
    X, _ = frame
    e = explainer.explain(X.iloc[:3], methods=["shapley"])["shapley"]
    with pytest.raises(KeyError, match="unknown group 'zz'"):
        e[:, "zz"]
    with pytest.raises(TypeError, match="by position"):
        e["r0"]
    with pytest.raises(IndexError, match="out of range"):
        e[3]
    with pytest.raises(IndexError, match="too many indices"):
        e[0, 0, 0]


def test_to_frame(explainer, frame):
    X, _ = frame
    rows = X.iloc[3:8]
    res = explainer.explain(rows, methods=["shapley", "occlusion"])
    df = res["shapley"].to_frame()
    assert list(df.columns) == ["ab", "c", "d"]
    assert list(df.index) == list(rows.index)
    np.testing.assert_array_equal(df.to_numpy(), res["shapley"].values)
    both = res.to_frame()
    assert both.columns.names == ["method", None]
    assert list(both.columns.get_level_values(0).unique()) == ["shapley", "occlusion"]
    pd.testing.assert_frame_equal(both["occlusion"], res["occlusion"].to_frame())


def test_ndarray_and_dataframe_input_agree(frame):
    X, model = frame
    groups = [[0, 1], [2], [3]]
    on_frame = Explainer(model, groups=groups, background=20, random_state=0).fit(X)
    on_array = Explainer(
        lambda Z: model.predict(pd.DataFrame(Z, columns=X.columns)),
        groups=groups, background=20, random_state=0,
    ).fit(X.to_numpy())
    a = on_frame.explain(X.iloc[:4], methods=["shapley"])["shapley"]
    b = on_array.explain(X.to_numpy()[:4], methods=["shapley"])["shapley"]
    # the tree path (DataFrame) and model calls (array) agree to rounding
    np.testing.assert_allclose(a.values, b.values, atol=1e-10)
    np.testing.assert_allclose(a.base_values, b.base_values)
    np.testing.assert_array_equal(a.data, b.data)
    assert a.feature_names == ["a:b", "c", "d"]
    assert b.feature_names == ["x0:x1", "x2", "x3"]
    assert a.groups == [["a", "b"], ["c"], ["d"]]
    assert b.groups == [["x0", "x1"], ["x2"], ["x3"]]
    assert list(b.to_frame().index) == [0, 1, 2, 3]
    assert isinstance(b.raw_data, np.ndarray)


def test_categorical_column_data(frame):
    X, _ = frame
    X = X.assign(e=pd.Categorical(np.where(X["a"] > 0, "hi", "lo")))
    y = X["a"] + (X["e"] == "hi") * X["b"]
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["e"]), remainder="passthrough"),
        LinearRegression(),
    ).fit(X, y)
    e = Explainer(model, background=10, random_state=0).fit(X)
    expl = e.explain(X.iloc[:3], methods=["shapley"])["shapley"]
    assert expl.data.dtype == object
    assert list(expl.data[:, 4]) == list(X["e"].iloc[:3])
    np.testing.assert_allclose(
        expl.base_values + expl.values.sum(axis=1), model.predict(X.iloc[:3]), atol=1e-8
    )


def test_multi_output_classifier(classifier):
    X, model = classifier
    e = Explainer(model, background=20, random_state=0).fit(X)
    expl = e.explain(X.iloc[:5], methods=["shapley"])["shapley"]
    assert expl.shape == (5, 3, 3) and expl.output_names == ["0", "1", "2"]
    assert expl.base_values.shape == (5, 3)
    np.testing.assert_allclose(expl.base_values[0], e.expected_value_)
    prediction = model.decision_function(X.iloc[:5])
    np.testing.assert_allclose(
        expl.base_values + expl.values.sum(axis=1), prediction, atol=1e-8
    )
    assert "classes '0', '1', '2'" in expl.output

    df = expl.to_frame()
    assert df.columns.names == ["output", "group"]
    assert df.shape == (5, 9)
    np.testing.assert_array_equal(df["1"].to_numpy(), expl.values[:, :, 1])

    one = expl[:, :, "1"]
    assert one.shape == (5, 3) and one.output_names == ["1"]
    assert one.output.endswith("class '1'")
    np.testing.assert_array_equal(one.values, expl[..., 1].values)
    np.testing.assert_array_equal(one.base_values, expl.base_values[:, 1])
    assert list(one.to_frame().columns) == ["u", "v", "w"]
    assert expl[:, :, [0, 2]].shape == (5, 3, 2)

    with pytest.raises(ValueError, match=r"target=.*explanation\[\.\.\., 0\]"):
        expl.to_shap()


def test_multi_output_one_target(classifier):
    X, model = classifier
    e = Explainer(model, target=2, background=20, random_state=0).fit(X)
    expl = Explanation.from_explainer(e, X.iloc[:4])
    assert expl.shape == (4, 3) and expl.output_names == ["2"]
    np.testing.assert_array_equal(expl.values, e.transform(X.iloc[:4]))


def test_explanations_feed_metrics_and_plots(explainer, frame):
    X, _ = frame
    res = explainer.explain(X.iloc[:8], methods=["shapley", "arch"])
    d = metrics.disagreement(res)
    plain = metrics.disagreement({m: e.values for m, e in res.items()})
    assert d.score == plain.score


def test_built_directly():
    e = Explanation(np.ones((2, 3)), 0.5)
    assert e.feature_names == ["g0", "g1", "g2"] and e.output_names == ["y"]
    np.testing.assert_array_equal(e.base_values, [0.5, 0.5])
    assert np.isnan(e.data).all() and e.groups is None
    multi = Explanation(np.zeros((4, 2, 3)), [[1.0, 2.0, 3.0]])
    assert multi.base_values.shape == (4, 3)
    np.testing.assert_array_equal(multi.base_values[2], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"one value per output is given as shape \(1, 3\)"):
        Explanation(np.zeros((4, 2, 3)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="values have shape"):
        Explanation(np.ones(3))
    with pytest.raises(ValueError, match="feature_names"):
        Explanation(np.ones((2, 3)), feature_names=["a"])


@pytest.mark.parametrize(
    "grouper",
    [FixedGrouper(), CorrelationGrouper(), AdaptiveGrouper(n_groups=2)],
    ids=["fixed", "correlation", "adaptive"],
)
def test_group_features(grouper, frame):
    X, model = frame
    e = Explainer(model, groups=grouper, background=20, random_state=0).fit(X)
    names = np.asarray(X.columns)
    for fitted in (e, e.grouper_):
        assert fitted.group_features_ == [list(names[g]) for g in fitted.groups_]
    assert e.group_features_ == e.grouper_.group_features_
    on_array = type(grouper)(**grouper.get_params())
    if "estimator" in on_array.get_params():
        on_array.set_params(
            estimator=lambda Z: model.predict(pd.DataFrame(Z, columns=X.columns))
        )
    on_array.fit(X.to_numpy())
    assert on_array.group_features_ == [[f"x{j}" for j in g] for g in on_array.groups_]
    assert not hasattr(type(grouper)(), "group_features_")
    assert not hasattr(Explainer(model), "group_features_")


# shap's beeswarm takes quantiles of the all-NaN data of a multi-column group
@pytest.mark.filterwarnings("ignore:All-NaN slice:RuntimeWarning")
def test_to_shap_plots(explainer, frame):
    shap = pytest.importorskip("shap")
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    X, model = frame
    expl = explainer.explain(X.iloc[:20], methods=["shapley"])["shapley"]
    e = expl.to_shap()
    assert isinstance(e, shap.Explanation)
    assert list(e.feature_names) == ["ab", "c", "d"]
    np.testing.assert_array_equal(e.values, expl.values)
    np.testing.assert_allclose(
        e.base_values + e.values.sum(axis=1), model.predict(X.iloc[:20]), atol=1e-8
    )
    try:
        shap.plots.waterfall(e[0], show=False)
        plt.close("all")
        shap.plots.beeswarm(e, show=False)
        plt.close("all")
        shap.plots.waterfall(expl[3].to_shap(), show=False)
    finally:
        plt.close("all")


def test_to_shap_without_shap(explainer, frame, monkeypatch):
    X, _ = frame
    expl = explainer.explain(X.iloc[:2], methods=["shapley"])["shapley"]
    monkeypatch.setitem(sys.modules, "shap", None)
    with pytest.raises(ImportError, match="pip install shap"):
        expl.to_shap()
