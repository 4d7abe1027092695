"""The additive output scale: log-odds by default for classifiers."""

import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.naive_bayes import GaussianNB
from sklearn.neural_network import MLPClassifier

from skdecomp import AdaptiveGrouper, Explainer, PairwiseGrouper
from skdecomp.datasets import make_block_function
from skdecomp._partition import group_labels

EPS = np.finfo(np.float64).eps


class LogitModel(ClassifierMixin, BaseEstimator):
    """A binary classifier whose logit is a given function."""

    def __init__(self, function, with_decision_function=True):
        self.function = function
        self.with_decision_function = with_decision_function

    def fit(self, X, y=None):
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        p = expit(self.function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        return (self.function(X) > 0).astype(int)

    def __getattr__(self, name):
        if name == "decision_function" and self.__dict__.get("with_decision_function"):
            return self.function
        raise AttributeError(name)


def _manual_log_odds(proba):
    logp = np.log(np.clip(proba, EPS, 1.0))
    if proba.shape[1] == 2:
        return logp[:, 1] - logp[:, 0]
    return logp - logp.mean(axis=1, keepdims=True)


def test_auto_is_the_log_odds_without_decision_function():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 4))
    for n_classes in (2, 3):
        y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-0.5, 0.5][: n_classes - 1])
        nb = GaussianNB().fit(X, y)
        assert not hasattr(nb, "decision_function")
        ex = Explainer(nb, background=X[:10]).fit(X)
        assert ex.response_method_ == "log_odds"
        lo = _manual_log_odds(nb.predict_proba(X[20:23]))
        lo_bg = _manual_log_odds(nb.predict_proba(X[:10])).mean(axis=0)
        phi = ex.transform(X[20:23])
        # efficiency: the attributions sum to the log-odds gap
        np.testing.assert_allclose(phi.sum(axis=1), lo - lo_bg, atol=1e-9)
        # a named class of a binary model: the negative log-odds
        if n_classes == 2:
            ex0 = Explainer(nb, background=X[:10], target=0).fit(X)
            np.testing.assert_allclose(ex0.transform(X[20:23]), -phi, atol=1e-12)
        else:
            ex2 = Explainer(nb, background=X[:10], target=2).fit(X)
            np.testing.assert_allclose(ex2.transform(X[20:23]), phi[:, :, 2], atol=1e-12)


def test_log_odds_stay_finite_where_a_probability_is_zero():
    def f(X):
        return np.where(X[:, 0] > 0, 1e6, -1e6) + X[:, 1]

    model = LogitModel(f, with_decision_function=False).fit(None)
    X = np.random.RandomState(1).normal(size=(30, 2))
    ex = Explainer(model, background=X[:5]).fit(X)
    phi = ex.transform(X[5:10])
    assert np.isfinite(phi).all()
    assert np.abs(phi).max() <= 2 * np.log(1 / EPS) + 1e-9


@pytest.mark.parametrize("with_decision_function", [True, False])
def test_grouping_block_logits_on_the_default_scale(with_decision_function):
    # 10 seeded block functions used as the logit of a classifier: the default
    # scale recovers the blocks every time, the probability scale does not
    exact = {"auto": 0, "predict_proba": 0}
    for seed in range(10):
        data = make_block_function(200, n_features=8, random_state=seed)
        model = LogitModel(data.function, with_decision_function).fit(data.data)
        truth = group_labels(data.groups, 8)
        for rm in exact:
            g = AdaptiveGrouper(model, max_samples=60, rel_tol=0.01, response_method=rm,
                                random_state=seed).fit(data.data)
            exact[rm] += adjusted_rand_score(truth, g.labels_) == 1.0
            if rm == "auto":
                assert g.response_method_ == (
                    "decision_function" if with_decision_function else "log_odds"
                )
    assert exact["auto"] == 10
    assert exact["predict_proba"] <= 2


def test_explainer_passes_its_response_to_the_grouper():
    data = make_block_function(100, n_features=5, random_state=0)
    model = LogitModel(data.function).fit(data.data)
    ex = Explainer(model, groups=AdaptiveGrouper(max_samples=20), background=10,
                   random_state=0).fit(data.data)
    assert ex.grouper_.response_method_ == ex.response_method_ == "decision_function"
    ex = Explainer(model, groups=PairwiseGrouper(max_samples=20),
                   response_method="predict_proba", background=10, random_state=0).fit(data.data)
    assert ex.grouper_.response_method_ == "predict_proba"
    # a grouper that sets its own keeps it
    ex = Explainer(model, groups=AdaptiveGrouper(max_samples=20, response_method="log_odds"),
                   background=10, random_state=0).fit(data.data)
    assert ex.grouper_.response_method_ == "log_odds"
    assert ex.response_method_ == "decision_function"


@pytest.mark.slow
def test_fitted_classifiers_default_scale_no_worse():
    # labels drawn from block logits; the fitted models group no worse on
    # their additive scale than on probabilities in at least 8 of 10 seeds
    wins = {"HGB": 0, "MLP": 0}
    for seed in range(10):
        data = make_block_function(3000, n_features=8, random_state=seed)
        rng = np.random.RandomState(seed)
        y = (rng.uniform(size=3000) < 1 / (1 + np.exp(-data.target))).astype(int)
        truth = group_labels(data.groups, 8)
        models = {
            "HGB": HistGradientBoostingClassifier(max_iter=100, random_state=seed),
            "MLP": MLPClassifier((32, 32), max_iter=200, random_state=seed),
        }
        for name, model in models.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(data.data, y)
            ari = [
                adjusted_rand_score(truth, AdaptiveGrouper(
                    model, max_samples=50, n_groups=len(data.groups), response_method=rm,
                    random_state=seed).fit(data.data).labels_)
                for rm in ("auto", "predict_proba")
            ]
            wins[name] += ari[0] >= ari[1] - 1e-12
    assert wins["HGB"] >= 8 and wins["MLP"] >= 8, wins
