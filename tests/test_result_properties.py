"""Property tests of the result objects, and the warnings of the second hardening round.

Hypothesis draws Explanations (rows, groups, one or several outputs, names
that are distinct strings) and InteractionExplanations, and checks the round
trips: selecting rows, groups and outputs equals selecting the same entries
of the arrays; ``to_frame`` holds the values, named by group (and output),
and selections commute with it; ``to_shap`` carries the values, base values,
data and names unchanged; building an Explanation again from what one shows
gives the same object.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression

from skdecomp import (
    AdaptiveGrouper,
    CorrelationGrouper,
    Explainer,
    Explanation,
    Explanations,
    InteractionExplanation,
)
from skdecomp._model import ClippedLogOddsWarning

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def explanations(draw):
    n = draw(st.integers(1, 5))
    K = draw(st.integers(1, 4))
    several = draw(st.booleans())
    O = draw(st.integers(1, 3)) if several else 1
    shape = (n, K, O) if several else (n, K)
    values = draw(hnp.arrays(np.float64, shape, elements=FLOATS))
    base = draw(hnp.arrays(np.float64, (n, O) if several else (n,), elements=FLOATS))
    names = draw(st.lists(st.text("abcxyz:_ 0123", min_size=1, max_size=4),
                          min_size=K, max_size=K, unique=True))
    outputs = [f"class {o}" for o in range(O)]
    return Explanation(values, base, feature_names=names, output_names=outputs,
                       method="shapley"), values, base


@SETTINGS
@given(explanations(), st.data())
def test_selections_are_the_selected_arrays(case, data):
    e, values, base = case
    n, K = values.shape[:2]
    rows = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n))
    groups = data.draw(st.lists(st.integers(0, K - 1), min_size=1, max_size=K,
                                unique=True))
    sel = e[rows][:, groups]
    np.testing.assert_array_equal(sel.values, values[rows][:, groups])
    np.testing.assert_array_equal(sel.base_values, base[rows])
    assert sel.feature_names == [e.feature_names[g] for g in groups]
    # by name equals by position
    by_name = e[rows][:, [e.feature_names[g] for g in groups]]
    np.testing.assert_array_equal(by_name.values, sel.values)
    # a single position drops the axis; a slice of all keeps everything
    np.testing.assert_array_equal(e[rows[0]].values, values[rows[0]])
    np.testing.assert_array_equal(e[:].values, values)
    mask = np.zeros(n, dtype=bool)
    mask[rows] = True
    np.testing.assert_array_equal(e[mask].values, values[mask])


@SETTINGS
@given(explanations())
def test_to_frame_round_trip(case):
    e, values, _ = case
    frame = e.to_frame()
    if values.ndim == 2:
        assert list(frame.columns) == e.feature_names
        np.testing.assert_array_equal(frame.to_numpy(), values)
    else:
        for o, name in enumerate(e.output_names):
            np.testing.assert_array_equal(frame[name].to_numpy(), values[:, :, o])
            assert list(frame[name].columns) == e.feature_names
            one = e[..., o]
            # (a level of a MultiIndex may come back with pandas' string dtype)
            pd.testing.assert_frame_equal(one.to_frame(), frame[name],
                                          check_names=False, check_column_type=False)
    # rows selected before or after to_frame agree
    pd.testing.assert_frame_equal(e[::-1].to_frame(), frame.iloc[::-1])
    # rebuilt from what it shows, it is the same explanation
    again = Explanation(e.values, e.base_values if values.ndim == 2 else e.base_values,
                        e.data, feature_names=e.feature_names,
                        output_names=e.output_names)
    pd.testing.assert_frame_equal(again.to_frame(), frame)
    both = Explanations(shapley=e, arch=again)
    assert both.to_frame().shape == (values.shape[0], 2 * frame.shape[1])


@SETTINGS
@given(explanations())
def test_to_shap_round_trip(case):
    pytest.importorskip("shap")
    e, values, base = case
    o = 0
    one = e if values.ndim == 2 else e[..., o]
    s = one.to_shap()
    np.testing.assert_array_equal(s.values, values if values.ndim == 2 else values[:, :, o])
    np.testing.assert_array_equal(s.base_values, base if base.ndim == 1 else base[:, o])
    assert list(s.feature_names) == e.feature_names
    # shap's own row selection gives the same numbers as ours
    np.testing.assert_array_equal(s[0].values, one[0].values)


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 3), st.data())
def test_interaction_selection_round_trip(n, K, data):
    from itertools import combinations

    terms = [()] + [t for k in (1, 2) for t in combinations(range(K), k)]
    values = data.draw(hnp.arrays(np.float64, (n, len(terms)), elements=FLOATS))
    base = data.draw(hnp.arrays(np.float64, (n,), elements=FLOATS))
    names = [f"g{k}" for k in range(K)]
    e = InteractionExplanation(values, terms, base, names, "k-SII", 2, ["y"])
    rows = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n))
    sel = e[rows]
    np.testing.assert_array_equal(sel.values, values[rows])
    np.testing.assert_array_equal(sel.base_values, base[rows])
    frame = e.to_frame()
    assert list(frame.columns) == e.term_names[1:]
    np.testing.assert_array_equal(frame.to_numpy(), values[:, 1:])
    m = e.matrix()
    for j, t in enumerate(terms):
        if len(t) == 2:
            np.testing.assert_array_equal(m[:, t[0], t[1]], values[:, j])
            np.testing.assert_array_equal(m[:, t[1], t[0]], values[:, j])


# -- warnings --------------------------------------------------------------------------
def test_log_odds_of_saturated_forest_warn_with_the_clipped_share():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] > 0
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    background = X[:10]
    with pytest.warns(ClippedLogOddsWarning) as record:
        Explainer(forest, response_method="log_odds", background=background).fit(X)
    proba = forest.predict_proba(background)
    share = (proba == 0).any(axis=1).mean()
    assert share > 0
    message = str(record[0].message)
    assert f"on {int(share * 10)} of 10 rows ({share:.0%})" in message
    assert "not by the model" in message
    # the probabilities themselves (the forests' default) do not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippedLogOddsWarning)
        Explainer(forest, background=background).fit(X).transform(X[:3])


@pytest.mark.parametrize("grouper", [
    AdaptiveGrouper(n_groups=2, max_group_size=2, max_samples=20),
    CorrelationGrouper(n_groups=2, max_group_size=2),
], ids=["adaptive", "correlation"])
def test_unreachable_n_groups_warns(grouper):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    model = LinearRegression().fit(X, X.sum(axis=1))
    if "estimator" in grouper.get_params():
        grouper.set_params(estimator=model)
    with pytest.warns(UserWarning, match=r"cannot hold the 5 columns.*returned 3 groups"):
        grouper.fit(X)
    assert grouper.n_groups_ == 3 and max(len(g) for g in grouper.groups_) <= 2
    # a bound that allows n_groups does not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grouper.set_params(max_group_size=3).fit(X)
    assert grouper.n_groups_ == 2
