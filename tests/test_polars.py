"""Models fitted on polars DataFrames are explained on polars rows."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from skdecomp import Explainer

pl = pytest.importorskip("polars")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    X["t"] = rng.choice(["x", "y", "z"], size=40)
    y = (X["a"] + X["b"] * X["c"] + (X["t"] == "x")).to_numpy()
    return X, pl.from_pandas(X), y


def _explain(model, X):
    return Explainer(model, background=15, random_state=0).fit(X[:15]).explain(
        X[:3], methods=["shapley", "banzhaf"]
    )


def _assert_same(polars_result, pandas_result):
    assert set(polars_result) == set(pandas_result)
    for name in pandas_result:
        np.testing.assert_allclose(
            polars_result[name].values, pandas_result[name].values, atol=1e-12
        )


def test_tree_model_fitted_on_polars_raises_no_warning(data):
    X, Xp, y = data
    num = ["a", "b", "c"]
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0)
    on_polars = model.fit(Xp.select(num), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = _explain(on_polars, Xp.select(num))
    from sklearn.base import clone

    on_pandas = clone(model).fit(X[num], y)
    _assert_same(result, _explain(on_pandas, X[num]))


def test_pipeline_with_text_column_fitted_on_polars(data):
    X, Xp, y = data

    def model():
        return make_pipeline(
            make_column_transformer((OneHotEncoder(), ["t"]), remainder="passthrough"),
            MLPRegressor(hidden_layer_sizes=(4,), max_iter=50, random_state=0),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the MLP's convergence
        on_polars, on_pandas = model().fit(Xp, y), model().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = _explain(on_polars, Xp)
    _assert_same(result, _explain(on_pandas, X))


def test_function_is_called_with_polars_rows_of_the_fit_types():
    X = pl.DataFrame({
        "a": np.arange(6.0),
        "b": np.arange(6.0) ** 2,
        "c": pl.Series(list("pqpqpq"), dtype=pl.Enum(["p", "q"])),
    })
    seen = []

    def f(rows):
        seen.append((type(rows), rows.schema["c"]))
        return (rows["a"] * rows["b"]).to_numpy()

    values = Explainer(f).fit(X).explain(X[:2], methods=["shapley"])["shapley"].values
    assert {s for s in seen} == {(pl.DataFrame, pl.Enum(["p", "q"]))}
    np.testing.assert_allclose(values[:, 2], 0.0)
