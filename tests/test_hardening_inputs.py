"""Hardening of inputs: polars rows everywhere, and clear messages.

Every public function that takes a table takes a polars DataFrame (text
columns included) and a polars LazyFrame (collected once per call), and
gives the result it gives on the same pandas rows; a model fitted on polars
rows is only ever called with polars rows; nothing the user passed is
changed. Then three messages that used to mislead: a linkage matrix of
booleans or complex numbers, a KMeans given as ``hierarchy=``, and
``at_level`` after a selection of groups.
"""

import functools
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.cluster import KMeans
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdecomp import (
    AdaptiveGrouper,
    CorrelationGrouper,
    Explainer,
    FDTree,
    FixedGrouper,
    IShapGrouper,
    PairwiseGrouper,
    RecursiveGrouper,
    inspection,
    metrics,
)
from skdecomp.inspection import _anchored_effects
from skdecomp.interactions import arch_detect

pl = pytest.importorskip("polars")


def _library(X):
    return type(X).__module__.split(".")[0]


class FrameModel(RegressorMixin, BaseEstimator):
    """``a + b * c`` (plus 1 where ``t == "x"``), read by column name.

    It refuses rows of another library than the rows it was fitted on, as a
    model that uses the polars API would: a model fitted on polars rows must
    only ever be called with polars rows.
    """

    def fit(self, X, y=None):
        self.library_ = _library(X)
        self.columns_ = list(X.columns)
        return self

    def predict(self, X):
        if _library(X) != self.library_:
            raise AssertionError(
                f"fitted on {self.library_} rows, called with {type(X).__name__}"
            )

        def col(name):
            return np.asarray(X[name].to_numpy(), dtype=np.float64)

        out = col("a") + col("b") * col("c")
        if "t" in self.columns_:
            out = out + np.asarray((X["t"] == "x").to_numpy(), dtype=np.float64)
        return out


def _frame(n=24, text=True, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    if text:
        X["t"] = rng.choice(["x", "y", "z"], size=n)
    y = FrameModel().fit(X).predict(X) + 0.1 * rng.normal(size=n)
    return X, y


X_TEXT, Y_TEXT = _frame()
X_NUM, Y_NUM = _frame(n=40, text=False, seed=1)

#: how the same rows are passed: pandas, polars, or a polars LazyFrame
KINDS = {
    "pandas": lambda X: X,
    "polars": pl.from_pandas,
    "lazy": lambda X: pl.from_pandas(X).lazy(),
}


def _model(kind, X):
    """FrameModel fitted on the rows as the user has them (a LazyFrame collected)."""
    rows = KINDS[kind](X)
    return FrameModel().fit(rows.collect() if kind == "lazy" else rows)


def _explainer(kind, X, **params):
    params = {"background": 8, "random_state": 0, **params}
    return Explainer(_model(kind, X), **params).fit(KINDS[kind](X))


def _grouper_result(grouper, kind, X, y=None, transform=True):
    grouper.fit(KINDS[kind](X), y)
    out = {"groups": grouper.groups_, "names": list(grouper.group_names_)}
    if transform:
        out["transform"] = grouper.transform(KINDS[kind](X[:3]))
    return out


def _fdtree(kind):
    X = X_NUM
    tree = FDTree(_model(kind, X), max_depth=1, min_samples_leaf=8, max_samples=30,
                  random_state=0).fit(KINDS[kind](X))
    explanation = tree.explain(KINDS[kind](X[:4]), methods=["shapley"])["shapley"]
    return {"regions": tree.apply(KINDS[kind](X[:6])), "rules": tree.rules_,
            "values": explanation.values}


def _metric(name, kind):
    return getattr(metrics, name)(_explainer(kind, X_TEXT), KINDS[kind](X_TEXT[:3]),
                                  n_samples=16, random_state=0)


#: every public function that takes a table, on small rows with fast settings;
#: each takes the kind of rows and returns plain results
CASES = {
    # -- inspection ------------------------------------------------------------
    "agreed_loss": lambda k: inspection.agreed_loss(
        _explainer(k, X_TEXT), KINDS[k](X_TEXT[:8]), per_group=True),
    "cost_of_exclusion": lambda k: inspection.cost_of_exclusion(
        _explainer(k, X_TEXT), KINDS[k](X_TEXT[:8])),
    "h_statistic": lambda k: inspection.h_statistic(
        _explainer(k, X_TEXT), KINDS[k](X_TEXT[:8])),
    "interaction_matrix": lambda k: inspection.interaction_matrix(
        _explainer(k, X_TEXT), KINDS[k](X_TEXT[:8]), kind="pure"),
    "importance": lambda k: inspection.importance(
        _explainer(k, X_TEXT), KINDS[k](X_TEXT[:6])),
    "anchored_effects of a response function": lambda k: _anchored_effects(
        _model(k, X_TEXT).predict, KINDS[k](X_TEXT[:6]),
        groups=[["a", "t"], ["b", "c"]]),
    "permutation_importance": lambda k: inspection.permutation_importance(
        _model(k, X_TEXT), KINDS[k](X_TEXT), Y_TEXT,
        groups={"at": ["a", "t"], "b": ["b"]},
        n_repeats=3, random_state=0, max_samples=0.75),
    "permutation_importance conditional": lambda k: inspection.permutation_importance(
        _model(k, X_NUM), KINDS[k](X_NUM), Y_NUM, n_repeats=2, random_state=0,
        imputer="conditional"),
    "partial_dependence of a text column": lambda k: inspection.partial_dependence(
        _model(k, X_TEXT), KINDS[k](X_TEXT), ["a", "t"], grid_resolution=4,
        kind="both"),
    "partial_dependence of three columns": lambda k: inspection.partial_dependence(
        _model(k, X_TEXT), KINDS[k](X_TEXT), ["a", "b", "t"], grid_resolution=5,
        random_state=0),
    "partial_dependence conditional": lambda k: inspection.partial_dependence(
        _model(k, X_NUM), KINDS[k](X_NUM), "a", grid_resolution=3, random_state=0,
        imputer="conditional"),
    "disagreement_sources": lambda k: inspection.disagreement_sources(
        _model(k, X_NUM), KINDS[k](X_NUM), max_samples=20, random_state=0),
    "disagreement_sources of an explainer": lambda k: inspection.disagreement_sources(
        _explainer(k, X_NUM), KINDS[k](X_NUM), max_samples=20, random_state=0),
    # -- interactions ----------------------------------------------------------
    "arch_detect": lambda k: arch_detect(_explainer(k, X_TEXT), KINDS[k](X_TEXT[:3])),
    # -- metrics ---------------------------------------------------------------
    **{name: functools.partial(_metric, name) for name in [
        "deletion_error", "faithfulness_correlation", "infidelity", "insertion_error",
        "sensitivity_n", "shapley_weighted_faithfulness"]},
    "infidelity of an exact decomposition": lambda k: metrics.infidelity(
        _explainer(k, X_TEXT), KINDS[k](X_TEXT[:3]),
        decomposition=_explainer(k, X_TEXT).decompose(KINDS[k](X_TEXT[:3]))),
    "metric_disagreement": lambda k: metrics.metric_disagreement(
        _explainer(k, X_TEXT), KINDS[k](X_TEXT[:3]), n_samples=16, random_state=0),
    # -- groupers ----------------------------------------------------------------
    "AdaptiveGrouper": lambda k: _grouper_result(
        AdaptiveGrouper(_model(k, X_TEXT), n_groups=2, random_state=0), k, X_TEXT),
    "AdaptiveGrouper, n_groups='auto'": lambda k: _grouper_result(
        AdaptiveGrouper(_model(k, X_TEXT), random_state=0), k, X_TEXT),
    "AdaptiveGrouper of an unfitted model": lambda k: _grouper_result(
        AdaptiveGrouper(FrameModel(), n_groups=2, random_state=0), k, X_TEXT, Y_TEXT),
    "PairwiseGrouper": lambda k: _grouper_result(
        PairwiseGrouper(_model(k, X_TEXT), n_groups=2, random_state=0), k, X_TEXT),
    "RecursiveGrouper": lambda k: _grouper_result(
        RecursiveGrouper(_model(k, X_TEXT), random_state=0), k, X_TEXT),
    "IShapGrouper": lambda k: _grouper_result(
        IShapGrouper(_model(k, X_TEXT), random_state=0, test_samples=50), k, X_TEXT),
    "CorrelationGrouper": lambda k: _grouper_result(
        CorrelationGrouper(n_groups=2), k, X_NUM),
    "FixedGrouper": lambda k: _grouper_result(
        FixedGrouper([["a", "b"], ["c"]]), k, X_NUM),
    "FDTree": _fdtree,
    # -- the Explainer, which converted polars rows already ------------------------
    "Explainer.explain": lambda k: {
        m: e.values for m, e in _explainer(k, X_TEXT).explain(
            KINDS[k](X_TEXT[:3]), methods=["shapley", "banzhaf"]).items()},
    "Explainer with a grouper": lambda k: _explainer(
        k, X_TEXT, groups=FixedGrouper([["a", "t"], ["b", "c"]])).transform(
        KINDS[k](X_TEXT[:3])),
}


def _assert_same(a, b, where="result"):
    """The results of the pandas and the polars rows are the same."""
    if isinstance(a, Mapping):
        assert isinstance(b, Mapping) and list(a) == list(b), where
        for key in a:
            _assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (p, q) in enumerate(zip(a, b)):
            _assert_same(p, q, f"{where}[{i}]")
    elif a is None or isinstance(a, str):
        assert a == b, where
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, where
        if a.dtype == object or b.dtype == object:
            assert a.tolist() == b.tolist(), where
        else:
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12, err_msg=where)


def _run(name, kind):
    with warnings.catch_warnings():
        # the same warnings on both kinds of rows (e.g. a noisy estimate) are
        # not the subject here; a feature-name warning would be an error
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message=".*feature names.*")
        return CASES[name](kind)


@pytest.mark.parametrize("kind", ["polars", "lazy"])
@pytest.mark.parametrize("name", list(CASES))
def test_polars_rows_give_the_results_of_the_same_pandas_rows(name, kind):
    """Property: for every public function that takes a table, the result on
    polars rows (a DataFrame with a text column, or a LazyFrame) is the result
    on the same pandas rows; the model fitted on polars rows is only called
    with polars rows (FrameModel raises otherwise)."""
    _assert_same(_run(name, "pandas"), _run(name, kind), name)


def test_the_rows_passed_are_not_changed():
    X = pl.from_pandas(X_TEXT)
    before = X.clone()
    X_pd = X_TEXT.copy()
    model = FrameModel().fit(X)
    inspection.permutation_importance(model, X, Y_TEXT, n_repeats=2, random_state=0)
    inspection.partial_dependence(model, X, ["a", "t"], grid_resolution=3)
    AdaptiveGrouper(model, n_groups=2, random_state=0).fit(X).transform(X)
    assert X.equals(before)
    pd_model = FrameModel().fit(X_TEXT)
    inspection.permutation_importance(pd_model, X_TEXT, Y_TEXT, n_repeats=2,
                                      random_state=0, max_samples=10)
    inspection.partial_dependence(pd_model, X_TEXT, ["a", "t"], grid_resolution=3)
    pd.testing.assert_frame_equal(X_TEXT, X_pd)


def test_sklearn_pipeline_with_a_text_column_fitted_on_polars_warns_nothing():
    X = pl.from_pandas(X_TEXT)

    def model():
        return make_pipeline(
            make_column_transformer((OneHotEncoder(), ["t"]), remainder="passthrough"),
            LinearRegression(),
        )

    on_polars, on_pandas = model().fit(X, Y_TEXT), model().fit(X_TEXT, Y_TEXT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [
            inspection.permutation_importance(on_polars, X, Y_TEXT, n_repeats=2,
                                              random_state=0).importances,
            inspection.partial_dependence(on_polars, X, "t")["average"],
            AdaptiveGrouper(on_polars, n_groups=2, random_state=0).fit(X).transform(
                X[:3]),
        ]
    want = [
        inspection.permutation_importance(on_pandas, X_TEXT, Y_TEXT, n_repeats=2,
                                          random_state=0).importances,
        inspection.partial_dependence(on_pandas, X_TEXT, "t")["average"],
        AdaptiveGrouper(on_pandas, n_groups=2, random_state=0).fit(X_TEXT).transform(
            X_TEXT[:3]),
    ]
    _assert_same(want, got)


def test_a_grouper_fitted_on_polars_is_called_with_polars_after_pickling():
    import pickle

    X = pl.from_pandas(X_TEXT)
    grouper = AdaptiveGrouper(FrameModel().fit(X), n_groups=2, random_state=0).fit(X)
    again = pickle.loads(pickle.dumps(grouper))
    np.testing.assert_allclose(again.transform(X[:3]), grouper.transform(X_TEXT[:3]))


def test_a_lazy_frame_is_collected_once_per_call():
    X = pl.from_pandas(X_NUM)
    calls = []

    def count(frame):
        calls.append(len(frame))
        return frame

    lazy = X.lazy().map_batches(count, schema=X.schema)
    model = FrameModel().fit(X)
    inspection.partial_dependence(model, lazy, "a", grid_resolution=3)
    assert len(calls) == 1


# -- clear messages -------------------------------------------------------------------
@pytest.fixture(scope="module")
def owen():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    model = LinearRegression().fit(X, X[:, 0] * X[:, 1] + X[:, 2])
    return model, X


@pytest.mark.parametrize("dtype", [bool, complex])
def test_a_linkage_of_booleans_or_complex_numbers_names_the_float_linkage(owen, dtype):
    from scipy.cluster.hierarchy import linkage

    model, X = owen
    Z = linkage(X.T).astype(dtype)
    with pytest.raises(TypeError) as err:
        Explainer(model, method="owen", hierarchy=Z).fit(X)
    message = str(err.value)
    assert "linkage matrix is a float array of shape (3, 4)" in message
    assert np.dtype(dtype).name in message
    assert "nested lists" in message  # the other way to give it


@pytest.mark.parametrize("fitted", [True, False])
def test_kmeans_as_hierarchy_says_it_has_no_merge_tree(owen, fitted):
    model, X = owen
    kmeans = KMeans(2, n_init=1, random_state=0)
    if fitted:
        kmeans.fit(X.T)
    with pytest.raises(ValueError) as err:
        Explainer(model, method="owen", hierarchy=kmeans).fit(X)
    message = str(err.value)
    assert "KMeans has no merge tree" in message
    assert "not fitted" not in message
    for works in ["FeatureAgglomeration", "AgglomerativeClustering", "linkage",
                  "nested lists", "AdaptiveGrouper"]:
        assert works in message


def test_an_unfitted_agglomerative_clustering_is_fitted_on_the_columns(owen):
    from sklearn.cluster import AgglomerativeClustering

    model, X = owen
    ex = Explainer(model, method="owen", hierarchy=AgglomerativeClustering()).fit(X)
    fitted = AgglomerativeClustering().fit(np.asarray(X, dtype=float).T)
    ref = Explainer(model, method="owen", hierarchy=fitted).fit(X)
    assert ex.hierarchy_.children == ref.hierarchy_.children


def test_at_level_after_a_selection_of_groups_says_to_cut_first(owen):
    model, X = owen
    explanation = Explainer(model, method="owen", hierarchy=[[0, 1], [2, 3]]).fit(
        X).explain(X[:2], methods=["owen"])["owen"]
    assert explanation.at_level(2).shape == (2, 2)
    assert explanation[:1].at_level(2).shape == (1, 2)  # rows keep the hierarchy
    for selected in (explanation[:, [0, 2]], explanation[:, 0]):
        with pytest.raises(ValueError) as err:
            selected.at_level(1)
        message = str(err.value)
        assert "selecting some of its groups" in message
        assert "Call at_level before selecting" in message
        assert "explain with method='owen'" not in message
    # cutting first, then selecting, works
    assert explanation.at_level(2)[:, [0]].shape == (2, 1)


def test_at_level_of_a_method_without_hierarchy_still_says_to_use_owen(owen):
    model, X = owen
    explanation = Explainer(model).fit(X).explain(X[:2], methods=["shapley"])["shapley"]
    with pytest.raises(ValueError, match="explain with method='owen'"):
        explanation.at_level(1)


def test_explainer_grouper_calls_a_model_fitted_on_polars_with_polars_rows():
    X = pl.from_pandas(X_TEXT)
    Explainer(FrameModel().fit(X), groups=AdaptiveGrouper(n_groups=2), background=8,
              random_state=0).fit(X)
