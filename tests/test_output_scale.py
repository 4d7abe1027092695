"""The additive output scale: "auto" takes, per model, the scale on which it is a
sum over trees or terms (probabilities of forests and trees, decision functions,
else log-odds)."""

import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import (
    AdaBoostClassifier,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import adjusted_rand_score
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

from skdecomp import AdaptiveGrouper, Explainer, PairwiseGrouper
from skdecomp.datasets import make_block_function
from skdecomp._model import auto_response, describe_response
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


def _forest():
    return RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0)


# (model, the scale "auto" takes, whether it has the exact tree path there)
FAMILIES = {
    "RandomForest": (_forest, "predict_proba", True),
    "ExtraTrees": (lambda: ExtraTreesClassifier(n_estimators=10, max_depth=4,
                                                random_state=0), "predict_proba", True),
    "DecisionTree": (lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
                     "predict_proba", True),
    "ExtraTree": (lambda: ExtraTreeClassifier(max_depth=4, random_state=0),
                  "predict_proba", True),
    "Pipeline(RandomForest)": (lambda: make_pipeline(StandardScaler(), _forest()),
                               "predict_proba", True),
    "GradientBoosting": (lambda: GradientBoostingClassifier(n_estimators=10, random_state=0),
                         "decision_function", True),
    "HistGradientBoosting": (lambda: HistGradientBoostingClassifier(max_iter=10,
                                                                    random_state=0),
                             "decision_function", True),
    "LogisticRegression": (LogisticRegression, "decision_function", False),
    "Pipeline(LogisticRegression)": (
        lambda: make_pipeline(StandardScaler(), LogisticRegression()),
        "decision_function", False),
    "SVC": (SVC, "decision_function", False),
    "AdaBoost": (lambda: AdaBoostClassifier(n_estimators=5, random_state=0),
                 "decision_function", False),
    "MLP": (lambda: MLPClassifier((8,), max_iter=50, random_state=0), "log_odds", False),
    "KNN": (KNeighborsClassifier, "log_odds", False),
    "GaussianNB": (GaussianNB, "log_odds", False),
    "RandomForestRegressor": (lambda: RandomForestRegressor(n_estimators=5, max_depth=4,
                                                            random_state=0), "predict", True),
}


def _classification(n_classes, n=120, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 4))
    y = np.digitize(X[:, 0] + X[:, 1] * X[:, 2], [-0.5, 0.5][: n_classes - 1])
    return X, y


@pytest.mark.parametrize("frozen", [False, True], ids=["fitted", "frozen"])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_auto_takes_each_family_s_additive_scale(family, frozen):
    make, expected, tree = FAMILIES[family]
    X, y = _classification(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = make().fit(X, y)
    if frozen:
        model = FrozenEstimator(model)
    assert auto_response(model)[0] == expected
    ex = Explainer(model, background=10).fit(X)
    assert ex.response_method_ == expected
    assert (ex.algorithm_ == "tree") == tree, ex.algorithm_


@pytest.mark.parametrize("n_classes", [2, 3])
def test_forest_default_is_the_probability_on_the_tree_path(n_classes):
    X, y = _classification(n_classes)
    rf = _forest().fit(X, y)
    ex = Explainer(rf, background=30, random_state=0).fit(X)
    assert (ex.response_method_, ex.algorithm_) == ("predict_proba", "tree")
    # binary: the positive class only, as for response_method="predict_proba"
    assert ex.output_names_ == (["1"] if n_classes == 2 else ["0", "1", "2"])
    agnostic = Explainer(rf, response_method="predict_proba", algorithm="model_agnostic",
                         background=30, random_state=0).fit(X)
    assert agnostic.output_names_ == ex.output_names_
    rows = X[60:70]
    for method in ("shapley", "banzhaf", "occlusion"):
        np.testing.assert_allclose(
            ex.set_params(method=method).transform(rows),
            agnostic.set_params(method=method).transform(rows), atol=1e-12,
        )
    # efficiency against the forest's own probabilities
    proba = rf.predict_proba(rows)
    base = rf.predict_proba(ex.background_).mean(axis=0)
    gap = (proba - base)[:, 1] if n_classes == 2 else proba - base
    np.testing.assert_allclose(ex.set_params(method="shapley").transform(rows).sum(axis=1),
                               gap, atol=1e-12)
    expl = ex.explain(rows, methods=["shapley"])["shapley"]
    assert expl.output.startswith("probability (predict_proba): a forest's probability")
    assert "mean of its trees'" in expl.output

    g = AdaptiveGrouper(rf, max_samples=40, random_state=0).fit(X)
    assert (g.response_method_, g.algorithm_) == ("predict_proba", "tree")
    g_agnostic = AdaptiveGrouper(rf, max_samples=40, response_method="predict_proba",
                                 algorithm="model_agnostic", random_state=0).fit(X)
    np.testing.assert_array_equal(g.labels_, g_agnostic.labels_)


def test_explicit_log_odds_of_a_forest_still_work():
    X, y = _classification(2)
    rf = _forest().fit(X, y)
    ex = Explainer(rf, response_method="log_odds", background=10).fit(X)
    assert ex.response_method_ == "log_odds"
    assert ex.algorithm_.startswith("model_agnostic (the log-odds of predict_proba")
    lo = _manual_log_odds(rf.predict_proba(X[20:23]))
    lo_bg = _manual_log_odds(rf.predict_proba(ex.background_)).mean(axis=0)
    np.testing.assert_allclose(ex.transform(X[20:23]).sum(axis=1), lo - lo_bg, atol=1e-9)
    # asked for, not chosen: the scale without a reason
    assert describe_response("log_odds", ["1"], rf) == "log-odds of predict_proba, class '1'"


def test_describe_response_says_which_scale_and_why():
    X, y = _classification(2)
    rf = _forest().fit(X, y)
    text = describe_response("predict_proba", ["1"], rf)
    assert text.startswith("probability (predict_proba): a forest's probability is the "
                           "mean of its trees', so it is additive over trees")
    assert text.endswith("; class '1'")
    assert "probability" in describe_response(
        "predict_proba", ["1"], make_pipeline(StandardScaler(), rf))
    gb = GradientBoostingClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert describe_response("decision_function", ["1"], gb).startswith(
        "decision function: the raw score (log-odds)")
    assert describe_response("predict_proba", ["1"], gb) == (
        "probability (predict_proba), class '1'")
    lr = LogisticRegression().fit(X, y)
    assert describe_response("decision_function", ["1"], lr).startswith(
        "decision function: the raw score before any sigmoid or softmax")
    nb = GaussianNB().fit(X, y)
    assert describe_response("log_odds", ["0", "1"], nb).startswith(
        "log-odds of predict_proba: the model has no decision function")
    assert describe_response("predict", ["y"], RandomForestRegressor(n_estimators=2).fit(
        X, y)) == "prediction"
