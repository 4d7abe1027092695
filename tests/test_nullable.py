"""pandas nullable dtypes with pd.NA, integer column names and repeated CSV headers."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression

from skdecomp import Explainer
from skdecomp._table import (
    csv_header,
    duplicate_columns_note,
    renamed_duplicate_columns,
)

from . import _naive


@pytest.fixture(scope="module")
def nullable():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({
        "a": rng.normal(size=60),
        "b": pd.array(rng.integers(0, 4, 60), dtype="Int64"),
        "c": pd.array(rng.random(60) > 0.5, dtype="boolean"),
    })
    X.loc[[1, 7, 20], "b"] = pd.NA
    X.loc[[1, 4, 30], "c"] = pd.NA
    y = X["a"].to_numpy() + X["b"].fillna(2).to_numpy(dtype=float) * (
        X["c"].fillna(False).to_numpy(dtype=float) + 1)
    model = HistGradientBoostingRegressor(max_iter=15, random_state=0).fit(X, y)
    return X, model


def _as_model_input(rows, like):
    """Float rows (NaN for missing) back in the nullable dtypes of ``like``."""
    frame = pd.DataFrame(rows, columns=like.columns)
    return frame.astype(dict(like.dtypes))


@pytest.mark.parametrize("algorithm", ["auto", "model_agnostic"])
def test_nullable_columns_with_na_match_brute_force(nullable, algorithm):
    X, model = nullable
    e = Explainer(model, background=X.iloc[[0, 1, 4, 9]], algorithm=algorithm).fit(X)
    rows = X.iloc[[1, 2, 7, 30]]  # rows with pd.NA in b, in c, in both
    got = e.transform(rows)

    def f(Z):
        return model.predict(_as_model_input(Z, X))

    xs = rows.astype("float64").to_numpy()
    zs = X.iloc[[0, 1, 4, 9]].astype("float64").to_numpy()
    groups = [[0], [1], [2]]
    for x, phi in zip(xs, got):
        v = _naive.game(f, x, zs, groups)
        np.testing.assert_allclose(phi, _naive.shapley(v, 3), atol=1e-9)


def test_integer_column_names_select_columns_by_label():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=[10, 20, 30])
    model = LinearRegression().fit(X, X.sum(axis=1))
    e = Explainer(model, groups={"first": [10, 20], "last": [30]}, background=5).fit(X)
    assert [list(g) for g in e.groups_] == [[0, 1], [2]]
    with pytest.raises(ValueError, match=r"unknown column 40; the DataFrame's columns are"):
        Explainer(model, groups=[[10, 40], [30]], background=5).fit(X)
    # positions still work where they are not labels
    e = Explainer(model, groups=[[0, 1], [2]], background=5).fit(X)
    assert [list(g) for g in e.groups_] == [[0, 1], [2]]


def test_repeated_csv_header_is_reported(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,a,c,b,a\n1,2,3,4,5,6\n")
    columns = list(pd.read_csv(path).columns)
    header = csv_header(path)
    assert header == ["a", "b", "a", "c", "b", "a"]
    renamed = renamed_duplicate_columns(header, columns)
    assert renamed == {"a": ["a", "a.1", "a.2"], "b": ["b", "b.1"]}
    note = duplicate_columns_note(renamed)
    assert "'a' 3 times (read as 'a', 'a.1', 'a.2')" in note and "'b' 2 times" in note
    clean = tmp_path / "u.csv"
    clean.write_text("a,b,a.1\n1,2,3\n")  # a real column named a.1 is not a copy
    assert renamed_duplicate_columns(csv_header(clean), pd.read_csv(clean).columns) == {}
    assert duplicate_columns_note({}) is None
    with pytest.raises(ValueError, match="the header has 2 names but 3 columns"):
        renamed_duplicate_columns(["a", "b"], ["a", "b", "c"])
