"""The coalition game: one place that calls the model and checks its output."""

import numpy as np
import pandas as pd
import pytest

from skdecomp import (
    AdaptiveGrouper,
    CoalitionGame,
    Explainer,
    PairwiseGrouper,
    inspection,
    metrics,
)
from skdecomp.interactions import arch_detect

from ._naive import powerset


def _nan_on_hybrids(X):
    """x0 + 2 x1 + x0 x2, but NaN where x0 = 1 and x1 = 0.

    The data below never has that combination, so the model is finite on
    every data row and NaN only on hybrids of rows with different x0, x1.
    """
    X = np.asarray(X, dtype=float)
    out = X[:, 0] + 2 * X[:, 1] + X[:, 0] * X[:, 2]
    out[(X[:, 0] == 1) & (X[:, 1] == 0)] = np.nan
    return out


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    x01 = rng.randint(0, 2, size=12).astype(float)
    return np.column_stack([x01, x01, rng.normal(size=12)])


@pytest.fixture
def explainer(data):
    return Explainer(_nan_on_hybrids, background=data[:6], random_state=0).fit(data)


def _raises_nan(fn):
    with pytest.raises(ValueError, match="NaN or infinity") as info:
        fn()
    return str(info.value)


def test_game_values_match_the_definition(data):
    """v_x(S) = mean_z f(x_S, z_-S), f(x) and E_B f without model calls."""
    f = lambda X: np.asarray(X)[:, 0] * np.asarray(X)[:, 1] + np.asarray(X)[:, 2]  # noqa: E731
    labels = np.array([0, 0, 1])
    bg = data[:5]
    game = CoalitionGame(f, bg, labels)
    X = data[5:9]
    masks = np.arange(4)
    values = game.values(X, masks)
    for i, x in enumerate(X):
        for m in masks:
            take = ((m >> labels) & 1).astype(bool)
            direct = f(np.where(take, x, bg)).mean()
            assert values[i, m, 0] == pytest.approx(direct, abs=1e-12)
    np.testing.assert_allclose(game.expected_value, [f(bg).mean()])
    assert game.n_groups == 2 and game.n_outputs == 1
    assert sorted(map(tuple, powerset(range(2)))) == [(), (0,), (0, 1), (1,)]


def test_game_checks_the_model_output(data):
    game = CoalitionGame(lambda X: np.ones((len(X), 2)), data[:3], np.arange(3))
    assert game.n_outputs == 2
    with pytest.raises(ValueError, match="shape"):
        CoalitionGame(lambda X: np.ones(len(X) + 1), data[:3], np.arange(3))
    with pytest.raises(ValueError, match="shape"):
        CoalitionGame(lambda X: np.ones((len(X), 2, 2)), data[:3], np.arange(3))
    with pytest.raises(ValueError, match="dtype"):
        CoalitionGame(lambda X: np.array(["a"] * len(X)), data[:3], np.arange(3))
    with pytest.raises(ValueError, match="NaN or infinity on rows \\[1\\]"):
        CoalitionGame(
            lambda X: np.where(np.arange(len(X)) == 1, np.inf, 0.0), data[:3], np.arange(3)
        )


def test_nan_on_hybrid_rows_names_the_rows(explainer, data):
    message = _raises_nan(lambda: explainer.transform(data[6:]))
    assert "explained row" in message and "background row" in message
    assert "impute or clip" in message


def test_nan_from_the_model_is_an_error_everywhere(explainer, data):
    X = data[6:]
    phi = np.zeros((X.shape[0], 3))
    calls = {
        "transform": lambda: explainer.transform(X),
        "explain": lambda: explainer.explain(X),
        "explain_sampled": lambda: explainer.explain(
            X, methods=["kernel_shap", "permutation_shap", "lime", "rise"]
        ),
        "decompose": lambda: explainer.decompose(X),
        "score": lambda: explainer.score(data),
        "arch_detect": lambda: arch_detect(explainer, X),
        "h_statistic": lambda: inspection.h_statistic(explainer, data),
        "interaction_matrix": lambda: inspection.interaction_matrix(explainer, data),
        "agreed_loss": lambda: inspection.agreed_loss(explainer, data),
        "cost_of_exclusion": lambda: inspection.cost_of_exclusion(explainer, data),
        "adaptive": lambda: AdaptiveGrouper(_nan_on_hybrids, random_state=0).fit(data),
        "pairwise": lambda: PairwiseGrouper(_nan_on_hybrids, random_state=0).fit(data),
        "explainer_grouper": lambda: Explainer(
            _nan_on_hybrids, groups=AdaptiveGrouper(), background=6, random_state=0
        ).fit(data),
    }
    for name in (
        "sensitivity_n", "infidelity", "insertion_error", "deletion_error",
        "shapley_weighted_faithfulness", "faithfulness_correlation",
    ):
        fn = getattr(metrics, name)
        calls[name] = lambda fn=fn: fn(explainer, X, attributions=phi, random_state=0)
    for name, call in calls.items():
        try:
            _raises_nan(call)
        except BaseException as exc:  # pragma: no cover - names the failing entry
            raise AssertionError(f"{name} did not raise the NaN error") from exc


def test_nan_on_integrated_gradients_paths(data):
    def f(X):
        X = np.asarray(X, dtype=float)
        return np.where((X[:, 0] > 0) & (X[:, 0] < 1), np.nan, X.sum(axis=1))

    ex = Explainer(f, method="integrated_gradients", background=data[:6]).fit(data)
    message = _raises_nan(lambda: ex.transform(data[6:]))
    assert "path point" in message


def test_nan_at_the_explained_rows(data):
    def f(X):
        X = np.asarray(X, dtype=float)
        out = X.sum(axis=1)
        out[X[:, 2] > 1.0] = np.nan
        return out

    X = np.array([[0.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    ex = Explainer(f, background=np.zeros((2, 3))).fit(np.zeros((4, 3)))
    message = _raises_nan(lambda: ex.transform(X))
    assert "rows [0] of X" in message


def test_game_is_the_fitted_attribute(data):
    frame = pd.DataFrame(data, columns=["a", "b", "c"])
    ex = Explainer(lambda X: X["a"] + X["c"], background=4, random_state=0).fit(frame)
    game = ex.game_
    assert isinstance(game, CoalitionGame)
    assert game.frame and game.columns == ["a", "b", "c"]
    X = game.check_X(frame.iloc[:3].to_numpy())
    assert isinstance(X, pd.DataFrame) and list(X.columns) == ["a", "b", "c"]
    np.testing.assert_allclose(game.predict(X)[:, 0], frame["a"][:3] + frame["c"][:3])
    np.testing.assert_allclose(game.expected_value, np.atleast_1d(ex.expected_value_))
    with pytest.raises(ValueError, match="2 columns"):
        game.check_X(frame[["a", "b"]])


def test_failed_fit_leaves_the_explainer_as_it_was(data):
    f = lambda X: np.asarray(X, dtype=float).sum(axis=1)  # noqa: E731
    ex = Explainer(f, background=4, random_state=0)
    with pytest.raises(ValueError):
        ex.fit(np.full((5, 3), np.nan))  # the model cannot average NaN output
    assert not hasattr(ex, "game_") and not hasattr(ex, "n_features_in_")
    ex.fit(data)
    before = {k: v for k, v in vars(ex).items() if k.endswith("_")}
    with pytest.raises(ValueError):
        ex.set_params(background=np.zeros((2, 4))).fit(np.zeros((6, 5)))
    assert ex.n_features_in_ == 3 and ex.game_ is before["game_"]
    assert set(k for k in vars(ex) if k.endswith("_")) == set(before)


def test_refit_drops_attributes_of_the_earlier_fit(data):
    f = lambda X: np.asarray(X, dtype=float).sum(axis=1)  # noqa: E731
    ex = Explainer(f, groups=AdaptiveGrouper(max_samples=6), background=4,
                   random_state=0).fit(data)
    assert hasattr(ex, "grouper_")
    ex.set_params(groups=None).fit(data)
    assert not hasattr(ex, "grouper_")
    assert ex.n_groups_ == 3
