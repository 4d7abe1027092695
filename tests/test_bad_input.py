"""A catalogue of bad input across the public API and the command line.

Every case gives bad input to one public entry point and asserts the type of
the error (ValueError or TypeError, including scikit-learn's
InvalidParameterError and NotFittedError, which subclass ValueError; KeyError
for Decomposition subsets; ImportError for a missing optional dependency) and
a fragment of the message that names the problem or its fix: never a silent
wrong number, a hang, or a raw error from deep inside NumPy or pandas.

The grouper cases include findings of this catalogue that were fixed in the
grouper modules (a single sample row, text columns, a patch size of three
values), so a regression there fails here. The command line is
covered in depth by ``tests/test_cli_hardening.py`` (e.g.
``test_bad_groups_file_refused_before_model_work``,
``test_target_checked_before_fitting``,
``test_other_options_are_usage_errors``) and ``tests/test_cli.py``
(``test_report_errors``, ``test_empty_and_missing_files``); the few command
line cases here are ones those files do not have.
"""

import copy
import functools
import importlib.util
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from skdecomp import (
    AdaptiveGrouper,
    CorrelationGrouper,
    Decomposition,
    Explainer,
    FixedGrouper,
    IShapGrouper,
    PairwiseGrouper,
    PatchGrouper,
    RecursiveGrouper,
    SuperpixelGrouper,
    column_transformer_groups,
    datasets,
    inspection,
    metrics,
)
from skdecomp.__main__ import main
from skdecomp.interactions import arch_detect

HAS_SKIMAGE = importlib.util.find_spec("skimage") is not None


# -- shared data, built once ----------------------------------------------------------
@functools.cache
def data():
    """30 rows, 3 numeric columns, a linear target."""
    X = np.random.default_rng(0).normal(size=(30, 3))
    return X, X @ np.array([1.0, 2.0, 3.0])


def X():
    return data()[0].copy()


def y():
    return data()[1].copy()


def frame():
    return pd.DataFrame(X(), columns=list("abc"))


@functools.cache
def lin():
    return LinearRegression().fit(*data())


@functools.cache
def lin_df():
    return LinearRegression().fit(frame(), y())


@functools.cache
def clf():
    X_, y_ = data()
    return LogisticRegression().fit(X_, y_ > 0)


@functools.cache
def _ex():
    return Explainer(lin(), background=10, random_state=0).fit(X())


def ex():
    """A fitted explainer (a fresh copy, so no case can change another's)."""
    return copy.deepcopy(_ex())


@functools.cache
def _dec():
    return _ex().decompose(X()[:4])


def dec():
    return copy.deepcopy(_dec())


def phi():
    return _ex().transform(X()[:4])


def with_text(kind):
    """``frame()`` with a column ``c`` of text, categories or dates."""
    rng = np.random.default_rng(1)
    values = {
        "str": rng.choice(["u", "v"], 30),
        "category": pd.Categorical(rng.choice(["u", "v"], 30)),
        "datetime": pd.date_range("2020-01-01", periods=30),
    }[kind]
    return frame().assign(c=values)


def E(**params):
    """An unfitted explainer of the linear model."""
    return Explainer(lin(), **params)


def fit_E(**params):
    return lambda: E(**params).fit(X())


def callable_model(output):
    """A plain callable model whose output is ``output(Z)``."""
    return Explainer(output, background=2, random_state=0)


def images():
    return np.random.default_rng(0).random((2, 4, 4))


def many_columns(n=17):
    return np.random.default_rng(0).normal(size=(5, n))


def run_cli(args, ctx):
    """Run ``python -m skdecomp`` in this process: (exit code, last stderr line)."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    _, err = ctx.capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    return code, lines[-1] if lines else ""


def small_csv(ctx, columns=("a", "b", "y")):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(30, len(columns))), columns=list(columns))
    path = ctx.tmp_path / "t.csv"
    df.to_csv(path, index=False)
    return path


def cli(build):
    """A command-line case: ``build(ctx)`` gives the arguments."""

    def call(ctx):
        return run_cli(build(ctx), ctx)

    call.is_cli = True
    return call


def bad_json(ctx):
    path = ctx.tmp_path / "groups.json"
    path.write_text("{not json")
    return path


IPE = InvalidParameterError
MUST_RETURN = "it must return one value (shape (n,))"
NON_NUMERIC = "has non-numeric columns ['c']"
# a grouper needs two rows to compare: the parameter check or a message naming it
AT_LEAST_2 = ("'max_samples' parameter", "at least 2 rows")

# Each case: (call, expected, fragment). ``expected`` is an exception type, or an
# exit code for command-line cases; ``fragment`` is a piece of the message (of
# the last stderr line for the command line).
CASES = [
    # -- Explainer: every parameter --------------------------------------------------
    pytest.param(fit_E(method="foo"), IPE, "'method' parameter", id="method-unknown"),
    pytest.param(fit_E(groups=3), IPE, "'groups' parameter", id="groups-int"),
    pytest.param(fit_E(groups=[[0, 1], [1, 2]]), ValueError,
                 "put each column in one group", id="groups-overlap"),
    pytest.param(fit_E(groups=[[0, 1]]), ValueError,
                 "every column must be in exactly one group", id="groups-miss-column"),
    pytest.param(fit_E(groups=[[0, 1], [5]]), ValueError,
                 "position 5 is out of range", id="groups-position-out-of-range"),
    pytest.param(fit_E(groups=[]), ValueError, "groups is empty", id="groups-empty"),
    pytest.param(fit_E(groups=[[0, 1, 2], []]), ValueError,
                 "every group needs a column", id="groups-empty-group"),
    pytest.param(fit_E(groups=[["a"], [1, 2]]), ValueError,
                 "pass a pandas DataFrame or use integer positions",
                 id="groups-name-without-frame"),
    pytest.param(lambda: Explainer(lin_df(), groups=[["a", "zz"], ["b", "c"]]).fit(frame()),
                 ValueError, "unknown column 'zz'", id="groups-unknown-name"),
    pytest.param(fit_E(groups=[[0.0, 1], [2]]), TypeError,
                 "must be an integer position or a column name", id="groups-float-column"),
    pytest.param(fit_E(groups=[[True, 1], [2]]), TypeError, "is a bool",
                 id="groups-bool-column"),
    pytest.param(fit_E(groups={"a": None, "b": [0, 1, 2]}), TypeError,
                 "expected a list of columns", id="groups-dict-none"),
    pytest.param(fit_E(groups=[[[0, 1]], [2]]), TypeError,
                 "must be an integer position or a column name", id="groups-nested"),
    pytest.param(fit_E(groups=LinearRegression()), TypeError,
                 "is a model, not a grouper", id="groups-model"),
    pytest.param(lambda: Explainer(lambda Z: Z.sum(axis=1), method="shapley")
                 .fit(many_columns()),
                 ValueError, "Merge columns into fewer groups", id="groups-too-many-exact"),
    pytest.param(fit_E(background=0), IPE, "'background' parameter", id="background-0"),
    pytest.param(fit_E(background=True), TypeError, ("is not rows", "'background' parameter"),
                 id="background-bool"),
    pytest.param(fit_E(background={"a": 1}), TypeError, "is not rows",
                 id="background-dict"),
    pytest.param(fit_E(background=np.zeros((4, 2))), ValueError,
                 "it needs 3 columns like X", id="background-wrong-columns"),
    pytest.param(fit_E(background=np.zeros((0, 3))), ValueError,
                 "background has 0 rows", id="background-no-rows"),
    pytest.param(fit_E(background=np.array([["a", "b", "c"]])), ValueError,
                 "background has non-numeric values", id="background-strings"),
    pytest.param(fit_E(background=np.array([[1, "b", 3]], dtype=object)), ValueError,
                 "give background rows of numbers like X", id="background-object"),
    pytest.param(fit_E(background=[[1, 2, 3], [1]]), ValueError,
                 "background is not a table of rows", id="background-ragged"),
    pytest.param(fit_E(background=np.full((2, 3), np.nan)), ValueError,
                 "the background contains NaN or infinity", id="background-nan"),
    pytest.param(
        lambda: Explainer(lin_df(), background=pd.DataFrame(
            np.zeros((2, 3)), columns=list("xyz"))).fit(frame()),
        ValueError, "give background rows with the columns of X",
        id="background-frame-wrong-columns"),
    pytest.param(
        lambda: Explainer(lin_df(), background=pd.DataFrame(
            [["a", "b", "c"]], columns=list("abc"))).fit(frame()),
        ValueError, "background cannot take the column types of X",
        id="background-frame-strings"),
    pytest.param(fit_E(baseline="foo"), IPE, "'baseline' parameter", id="baseline-unknown"),
    pytest.param(fit_E(baseline=np.zeros(5)), ValueError, "give one image of that shape",
                 id="baseline-wrong-shape"),
    pytest.param(fit_E(baseline=np.full(3, np.nan)), ValueError,
                 "baseline contains NaN or infinity", id="baseline-nan"),
    pytest.param(fit_E(baseline="blur"), ValueError, "needs the image shape",
                 id="baseline-blur-without-shape"),
    pytest.param(fit_E(baseline=np.array(["a", "b", "c"])), ValueError,
                 "baseline must be an image of numbers", id="baseline-strings"),
    pytest.param(fit_E(response_method="predict_log"), IPE, "'response_method' parameter",
                 id="response-method-unknown"),
    pytest.param(fit_E(response_method="predict_proba"), ValueError,
                 "has no method 'predict_proba'", id="response-method-missing"),
    pytest.param(fit_E(target=5), ValueError, "give an output index in [0, 0]",
                 id="target-regressor"),
    pytest.param(lambda: Explainer(clf(), target="cat").fit(X()), ValueError,
                 "is not a class of LogisticRegression", id="target-classifier"),
    pytest.param(fit_E(batch_size=0), IPE, "'batch_size' parameter", id="batch-size-0"),
    pytest.param(fit_E(n_jobs="2"), IPE, "'n_jobs' parameter", id="n-jobs-str"),
    pytest.param(fit_E(n_jobs=0), ValueError, "n_jobs=0 runs no worker", id="n-jobs-0"),
    pytest.param(fit_E(method="kernel_shap", n_samples=0), IPE, "'n_samples' parameter",
                 id="n-samples-0"),
    pytest.param(fit_E(method="kernel_shap", n_samples=2), ValueError,
                 "it needs at least n_samples=6", id="n-samples-too-small"),
    pytest.param(fit_E(method="lime", method_params=[1]), IPE,
                 "'method_params' parameter", id="method-params-list"),
    pytest.param(fit_E(method="lime", method_params={"q": 1}), ValueError,
                 "allowed keys: ['alpha', 'kernel', 'kernel_width', 'p']",
                 id="method-params-unknown-key"),
    pytest.param(fit_E(method="rise", method_params={"p": 1.5}), ValueError,
                 "strictly between 0 and 1", id="method-params-p"),
    pytest.param(fit_E(method="lime", method_params={"kernel": "rbf"}), ValueError,
                 "choose 'constant' or 'distance'", id="method-params-kernel"),
    pytest.param(fit_E(method="integrated_gradients", method_params={"n_steps": 0}),
                 ValueError, "must be an integer >= 1", id="method-params-n-steps"),
    pytest.param(fit_E(method="integrated_gradients", method_params={"scheme": "left"}),
                 ValueError, "choose 'path'", id="method-params-scheme"),
    pytest.param(fit_E(method="shapley", method_params={"p": 0.5}), ValueError,
                 "allowed keys: none", id="method-params-exact-method"),
    pytest.param(fit_E(algorithm="fast"), IPE, "'algorithm' parameter",
                 id="algorithm-unknown"),
    pytest.param(fit_E(algorithm="tree"), ValueError,
                 "Use algorithm='auto' or 'model_agnostic'", id="algorithm-tree-not-a-tree"),
    pytest.param(fit_E(group_penalty=-1), IPE, "'group_penalty' parameter",
                 id="group-penalty-negative"),
    pytest.param(lambda: Explainer(None).fit(X()), IPE, "'estimator' parameter",
                 id="estimator-none"),
    pytest.param(lambda: Explainer(LinearRegression()).fit(X()), ValueError,
                 "Pass y, or pass a fitted model", id="unfitted-model-without-y"),
    # -- Explainer.fit: the data ----------------------------------------------------------
    pytest.param(lambda: E().fit(np.zeros((0, 3))), ValueError, "0 sample(s)",
                 id="fit-empty"),
    pytest.param(lambda: E().fit(X()[0]), ValueError, "Reshape your data", id="fit-1d"),
    pytest.param(lambda: E().fit(np.full((3, 3), np.nan)), ValueError,
                 "contains NaN or infinity", id="fit-nan"),
    pytest.param(lambda: E().fit(X().astype(str)), ValueError,
                 "has non-numeric columns [0, 1, 2]", id="fit-strings-array"),
    pytest.param(lambda: Explainer(LinearRegression()).fit(with_text("str"), y()),
                 ValueError, NON_NUMERIC, id="fit-text-column-unfitted-model"),
    pytest.param(lambda: Explainer(lin_df()).fit(with_text("str")), ValueError,
                 NON_NUMERIC, id="fit-text-column-fitted-model"),
    # the type is the model's own (its TypeError stays a TypeError), the message ours
    pytest.param(lambda: Explainer(lin_df()).fit(with_text("category")),
                 (ValueError, TypeError), NON_NUMERIC, id="fit-category-column"),
    pytest.param(lambda: Explainer(LinearRegression()).fit(with_text("datetime"), y()),
                 (ValueError, TypeError), NON_NUMERIC, id="fit-datetime-column"),
    pytest.param(lambda: Explainer(lambda Z: np.asarray(Z, dtype=float).sum(axis=1))
                 .fit(with_text("str")), ValueError, "Encode them inside the model",
                 id="fit-text-column-callable"),
    # -- a callable model with a bad output -------------------------------------------
    pytest.param(lambda: callable_model(lambda Z: np.zeros(27)).fit(X()), ValueError,
                 MUST_RETURN, id="callable-fixed-length"),
    pytest.param(lambda: callable_model(lambda Z: 1.0).fit(X()), ValueError,
                 MUST_RETURN, id="callable-scalar"),
    pytest.param(lambda: callable_model(lambda Z: None).fit(X()), ValueError,
                 MUST_RETURN, id="callable-none"),
    pytest.param(lambda: callable_model(lambda Z: np.zeros(len(Z) + 1)).fit(X()),
                 ValueError, MUST_RETURN, id="callable-one-too-many"),
    pytest.param(lambda: callable_model(lambda Z: np.zeros((len(Z), 2, 2))).fit(X()),
                 ValueError, MUST_RETURN, id="callable-3d"),
    pytest.param(lambda: callable_model(lambda Z: np.full(len(Z), np.nan)).fit(X()),
                 ValueError, "returned NaN or infinity on rows [0, 1] of the background",
                 id="callable-nan"),
    pytest.param(lambda: callable_model(lambda Z: np.array(["a"] * len(Z))).fit(X()),
                 ValueError, "which cannot be averaged", id="callable-strings"),
    pytest.param(
        lambda: callable_model(lambda Z: np.where(Z[:, 0] > 1.5, np.nan, 0.0))
        .fit(X()[:2]).transform(X()),
        ValueError, "make the model return finite values", id="callable-nan-at-transform"),
    # -- transform, explain, decompose, score ----------------------------------------
    pytest.param(lambda: ex().transform(X()[:, :2]), ValueError,
                 "is expecting 3 features", id="transform-wrong-columns"),
    pytest.param(lambda: ex().transform(X()[0]), ValueError, "Reshape your data",
                 id="transform-1d"),
    pytest.param(lambda: ex().transform(np.zeros((0, 3))), ValueError, "0 sample(s)",
                 id="transform-empty"),
    pytest.param(lambda: Explainer(lambda Z: Z.sum(axis=(1, 2)), groups=PatchGrouper(2),
                                   baseline="zeros").fit(np.zeros((1, 2, 4, 4, 3))),
                 ValueError, "takes 2-D rows, or images of shape", id="fit-images-5d"),
    pytest.param(lambda: ex().transform(np.full((2, 3), np.nan)), ValueError,
                 "Impute or drop those values", id="transform-nan"),
    pytest.param(lambda: ex().transform(np.full((2, 3), "a")), ValueError,
                 "give numeric rows like the data passed to fit", id="transform-strings"),
    pytest.param(
        lambda: Explainer(lin_df(), background=5).fit(frame()).transform(
            frame().assign(a="x")),
        ValueError, "give rows with the column types of that data",
        id="transform-frame-text-column"),
    pytest.param(
        lambda: Explainer(lin_df(), background=5).fit(frame()).transform(
            frame()[["a", "b"]]),
        ValueError, "seen at fit time, yet now missing", id="transform-frame-missing-column"),
    pytest.param(lambda: E().transform(X()), NotFittedError, "not fitted yet",
                 id="transform-unfitted"),
    pytest.param(
        lambda: Explainer(LogisticRegression().fit(X(), np.digitize(X()[:, 0], [-0.5, 0.5])),
                          background=2).set_output(transform="pandas").fit(X()).transform(X()),
        ValueError, "pick one output with target=", id="transform-pandas-multi-output"),
    pytest.param(lambda: ex().explain(X()[:2], methods=["foo"]), ValueError,
                 "Unknown method 'foo'", id="explain-unknown-method"),
    pytest.param(lambda: ex().explain(X()[:2], methods=3), TypeError,
                 "methods must be a method name", id="explain-methods-int"),
    pytest.param(lambda: ex().explain(X()[:2], methods=[]), ValueError, "methods is empty",
                 id="explain-methods-empty"),
    pytest.param(lambda: ex().decompose(X()[:2, :2]), ValueError,
                 "is expecting 3 features", id="decompose-wrong-columns"),
    pytest.param(
        lambda: Explainer(lambda Z: Z.sum(axis=1), method="occlusion", background=2)
        .fit(many_columns()).decompose(many_columns()[:1]),
        ValueError, "'decompose' enumerates all 2**K coalitions", id="decompose-too-many-groups"),
    pytest.param(lambda: ex().score(X()[:1]), ValueError, "needs at least 2 rows",
                 id="score-one-row"),
    pytest.param(lambda: ex().score(X()[:, :2]), ValueError, "is expecting 3 features",
                 id="score-wrong-columns"),
    # -- Decomposition ------------------------------------------------------------------
    pytest.param(lambda: dec()["zz"], KeyError, "Unknown group 'zz'",
                 id="decomposition-unknown-group"),
    pytest.param(lambda: dec()[7], KeyError, "out of range for 3 groups",
                 id="decomposition-group-out-of-range"),
    pytest.param(lambda: dec()[1.5], KeyError, "A subset holds group indices or names",
                 id="decomposition-float-subset"),
    pytest.param(lambda: dec().attributions("kernel_shap"), ValueError,
                 "Unknown exact method 'kernel_shap'", id="decomposition-sampled-method"),
    pytest.param(lambda: dec().order(-1), ValueError, "give a number of groups >= 0",
                 id="decomposition-order-negative"),
    pytest.param(lambda: dec().order("a"), TypeError, "must be an int",
                 id="decomposition-order-str"),
    pytest.param(lambda: dec().to_frame(max_order=-1), ValueError,
                 "give a number of groups >= 0", id="decomposition-to-frame-negative"),
    pytest.param(lambda: Decomposition(np.zeros((2, 1, 3)), ["a", "b"], ["y"],
                                       np.zeros((2, 1))),
                 ValueError, "expected 2**n_groups", id="decomposition-not-power-of-two"),
    pytest.param(lambda: Decomposition(np.zeros((2, 4)), ["a", "b"], ["y"], np.zeros((2, 1))),
                 ValueError, "expected (n_samples, n_outputs, 2**n_groups)",
                 id="decomposition-2d"),
    pytest.param(lambda: Decomposition(np.zeros((2, 1, 4)), ["a"], ["y"], np.zeros((2, 1))),
                 ValueError, "give one name per group", id="decomposition-names"),
    pytest.param(lambda: Decomposition(np.zeros((2, 1, 4)), ["a", "b"], ["y"],
                                       np.zeros((3, 1))),
                 ValueError, "prediction has shape (3, 1); expected (2, 1)",
                 id="decomposition-prediction"),
    # -- metrics -------------------------------------------------------------------------
    *[
        pytest.param(
            functools.partial(
                lambda name: getattr(metrics, name)(ex(), X()[:4], attributions=phi()[:, :2]),
                name),
            ValueError, "expected (4, 3): one row per explained row",
            id=f"{name}-attributions-shape")
        for name in ["sensitivity_n", "infidelity", "insertion_error", "deletion_error",
                     "shapley_weighted_faithfulness", "faithfulness_correlation"]
    ],
    pytest.param(lambda: metrics.sensitivity_n(ex(), X()[:4], attributions=np.full((4, 3), "a")),
                 ValueError, "attributions must be an array of numbers",
                 id="sensitivity_n-attributions-strings"),
    pytest.param(lambda: metrics.infidelity(ex(), X()[:4],
                                            attributions=np.full((4, 3), np.nan)),
                 ValueError, "attributions contain NaN or infinity",
                 id="infidelity-attributions-nan"),
    pytest.param(lambda: metrics.insertion_error(None, X()[:4]), ValueError,
                 "Pass a fitted explainer and the rows X", id="insertion_error-no-explainer"),
    pytest.param(lambda: metrics.deletion_error(ex(), X()[:3], decomposition=dec()),
                 ValueError, "pass the decomposition of the rows X",
                 id="deletion_error-decomposition-rows"),
    pytest.param(lambda: metrics.shapley_weighted_faithfulness(ex(), X()[:4], n_samples=0),
                 IPE, "'n_samples' parameter", id="shapley_weighted_faithfulness-n-samples"),
    pytest.param(lambda: metrics.faithfulness_correlation(ex(), X()[:4], p=1), IPE,
                 "'p' parameter", id="faithfulness_correlation-p"),
    pytest.param(lambda: metrics.sensitivity_n(ex(), X()[:4], n=5), ValueError,
                 "larger than the number of groups", id="sensitivity_n-n-too-large"),
    pytest.param(lambda: metrics.infidelity(ex(), X()[:4, :2]), ValueError,
                 "it needs 3 columns", id="infidelity-X-wrong-columns"),
    pytest.param(lambda: metrics.disagreement([phi()]), ValueError,
                 "needs at least two attribution arrays", id="disagreement-one"),
    pytest.param(lambda: metrics.disagreement(phi()), IPE, "'attributions' parameter",
                 id="disagreement-array"),
    pytest.param(lambda: metrics.disagreement([phi(), phi()[:, :2]]), ValueError,
                 "must share one shape", id="disagreement-shapes"),
    pytest.param(lambda: metrics.disagreement([phi(), np.full((4, 3), np.nan)]), ValueError,
                 "contain NaN or infinity", id="disagreement-nan"),
    pytest.param(lambda: metrics.disagreement([phi(), phi()], top_k=5), ValueError,
                 "larger than the number of groups", id="disagreement-top-k"),
    pytest.param(lambda: metrics.disagreement([phi()[:, :, None]] * 2), ValueError,
                 "selecting one output", id="disagreement-3d"),
    pytest.param(lambda: metrics.disagreement([phi(), [[1, 2], [3]]]), ValueError,
                 "must be an array of numbers", id="disagreement-ragged"),
    pytest.param(lambda: metrics.disagreement([np.zeros((4, 0))] * 2), ValueError,
                 "give one column per group", id="disagreement-no-groups"),
    pytest.param(lambda: metrics.metric_disagreement(ex(), X()[:4], metrics=["foo"]),
                 ValueError, "choose among", id="metric_disagreement-unknown-metric"),
    pytest.param(lambda: metrics.metric_disagreement(
        ex(), X()[:4], metric_params={"infidelity": 3}), TypeError,
        "must be a dict of keyword arguments", id="metric_disagreement-params-not-dict"),
    pytest.param(lambda: metrics.metric_disagreement(
        ex(), X()[:4], metric_params={"infidelity": {"q": 1}}), TypeError,
        "allowed keys: ['p']", id="metric_disagreement-params-unknown-key"),
    pytest.param(lambda: metrics.metric_disagreement(ex(), X()[:4], attributions={"a": phi()}),
                 ValueError, "needs at least two explainers",
                 id="metric_disagreement-one-explainer"),
    pytest.param(
        lambda: metrics.metric_disagreement(
            Explainer(lin(), groups=[[0, 1], [2]], background=5).fit(X()), X()[:4],
            decomposition=dec()),
        ValueError, "pass the decomposition of the same explainer",
        id="metric_disagreement-other-decomposition"),
    # -- inspection ----------------------------------------------------------------------
    *[
        pytest.param(functools.partial(
            lambda name: getattr(inspection, name)(ex(), X()[:1]), name),
            ValueError, "need at least 2 rows", id=f"{name}-one-row")
        for name in ["agreed_loss", "cost_of_exclusion", "h_statistic", "interaction_matrix"]
    ],
    pytest.param(lambda: inspection.agreed_loss(lin(), X()), IPE, "'explainer' parameter",
                 id="agreed_loss-model"),
    pytest.param(lambda: inspection.h_statistic(ex(), np.full((3, 3), "a")), ValueError,
                 "give numeric rows", id="h_statistic-strings"),
    pytest.param(lambda: inspection.cost_of_exclusion(ex(), np.full((3, 3), np.nan)),
                 ValueError, "Impute or drop those values", id="cost_of_exclusion-nan"),
    pytest.param(lambda: inspection.interaction_matrix(ex(), X(), kind="foo"), IPE,
                 "'kind' parameter", id="interaction_matrix-kind"),
    pytest.param(lambda: inspection.importance(), ValueError,
                 "Pass a fitted explainer or a decomposition", id="importance-nothing"),
    pytest.param(lambda: inspection.permutation_importance(lin(), X(), y(), groups=[None]),
                 TypeError, "expected a list of columns",
                 id="permutation_importance-group-none"),
    pytest.param(lambda: inspection.permutation_importance(lin(), X(), y(), groups=[[]]),
                 ValueError, "every group needs a column",
                 id="permutation_importance-empty-group"),
    pytest.param(lambda: inspection.permutation_importance(lin(), X(), y(), max_samples=100),
                 ValueError, "give at most that many",
                 id="permutation_importance-max-samples"),
    pytest.param(lambda: inspection.partial_dependence(lin(), X(), 5), ValueError,
                 "out of range", id="partial_dependence-group-out-of-range"),
    pytest.param(lambda: inspection.partial_dependence(lin(), X(), [0, 0]), ValueError,
                 "repeats a column", id="partial_dependence-group-repeats"),
    pytest.param(lambda: inspection.partial_dependence(lin(), X(), 0, percentiles=(0.9, 0.1)),
                 ValueError, "0 <= low < high <= 1", id="partial_dependence-percentiles"),
    pytest.param(lambda: inspection.partial_dependence(lin(), X(), [0, 1],
                                                       grid=np.zeros((3, 3))),
                 ValueError, "expected (n_points, 2)", id="partial_dependence-grid-shape"),
    pytest.param(lambda: inspection.partial_dependence(lin(), X(), 0, grid=["a", "b"]),
                 ValueError, "grid has non-numeric values", id="partial_dependence-grid-strings"),
    pytest.param(lambda: inspection.partial_dependence(lin(), X(), 0, grid=[np.nan, 1.0]),
                 ValueError, "give finite grid points", id="partial_dependence-grid-nan"),
    pytest.param(lambda: inspection.partial_dependence(lin(), X(), 0,
                                                       sample_weight=np.zeros(30)),
                 ValueError, "sample_weight sums to 0", id="partial_dependence-zero-weights"),
    # -- interactions.arch_detect -------------------------------------------------------
    pytest.param(lambda: arch_detect(lin(), X()), IPE, "'explainer' parameter",
                 id="arch_detect-model"),
    pytest.param(lambda: arch_detect(E(), X()), NotFittedError, "not fitted yet",
                 id="arch_detect-unfitted"),
    pytest.param(lambda: arch_detect(ex(), X()[:, :2]), ValueError, "it needs 3 columns",
                 id="arch_detect-wrong-columns"),
    pytest.param(lambda: arch_detect(ex(), np.full((2, 3), "a")), ValueError,
                 "give numeric rows", id="arch_detect-strings"),
    # -- groupers ------------------------------------------------------------------------
    pytest.param(lambda: AdaptiveGrouper().fit(X()), ValueError, "pass estimator=",
                 id="AdaptiveGrouper-no-model"),
    pytest.param(lambda: AdaptiveGrouper(lin(), rel_tol=2).fit(X()), IPE,
                 "'rel_tol' parameter", id="AdaptiveGrouper-rel-tol"),
    pytest.param(lambda: AdaptiveGrouper(lin(), initial_groups=[[0, 1]]).fit(X()),
                 ValueError, "every column must be in exactly one group",
                 id="AdaptiveGrouper-initial-groups"),
    pytest.param(lambda: AdaptiveGrouper(lin(), max_samples=1).fit(X()), ValueError,
                 AT_LEAST_2, id="AdaptiveGrouper-max-samples-1"),
    pytest.param(lambda: AdaptiveGrouper(lin()).fit(X()[:1]), ValueError,
                 AT_LEAST_2, id="AdaptiveGrouper-one-row"),
    pytest.param(lambda: Explainer(lin(), groups=AdaptiveGrouper(max_samples=1)).fit(X()),
                 ValueError, AT_LEAST_2, id="Explainer-AdaptiveGrouper-max-samples-1"),
    pytest.param(
        lambda: AdaptiveGrouper(LinearRegression(), max_samples=5).fit(with_text("str"), y()),
        ValueError, NON_NUMERIC, id="AdaptiveGrouper-text-column-unfitted-model"),
    pytest.param(lambda: PairwiseGrouper(lin(), max_samples=1).fit(X()), ValueError,
                 AT_LEAST_2, id="PairwiseGrouper-max-samples-1"),
    pytest.param(lambda: PairwiseGrouper(lin()).fit(X()[:1]), ValueError,
                 AT_LEAST_2, id="PairwiseGrouper-one-row"),
    pytest.param(lambda: PairwiseGrouper(lin(), min_interaction=0).fit(X()), IPE,
                 "'min_interaction' parameter", id="PairwiseGrouper-min-interaction"),
    pytest.param(lambda: PairwiseGrouper(lin(), target=3).fit(X()), ValueError,
                 "give an output index", id="PairwiseGrouper-target"),
    pytest.param(lambda: RecursiveGrouper().fit(X()), ValueError, "pass estimator=",
                 id="RecursiveGrouper-no-model"),
    pytest.param(lambda: RecursiveGrouper(lin(), max_samples=1).fit(X()), ValueError,
                 AT_LEAST_2, id="RecursiveGrouper-max-samples-1"),
    pytest.param(lambda: RecursiveGrouper(lin()).fit(X()[:1]), ValueError,
                 AT_LEAST_2, id="RecursiveGrouper-one-row"),
    pytest.param(lambda: RecursiveGrouper(lin(), tol=0).fit(X()), IPE,
                 "'tol' parameter", id="RecursiveGrouper-tol"),
    pytest.param(lambda: RecursiveGrouper(lin(), max_group_size=0).fit(X()), IPE,
                 "'max_group_size' parameter", id="RecursiveGrouper-max-group-size"),
    pytest.param(lambda: IShapGrouper().fit(X()), ValueError, "pass estimator=",
                 id="IShapGrouper-no-model"),
    pytest.param(lambda: IShapGrouper(lin()).fit(X()[:1]), ValueError,
                 AT_LEAST_2, id="IShapGrouper-one-row"),
    pytest.param(lambda: IShapGrouper(lin(), significance=1.5).fit(X()), IPE,
                 "'significance' parameter", id="IShapGrouper-significance"),
    pytest.param(lambda: IShapGrouper(lin(), test_samples=1).fit(X()), IPE,
                 "'test_samples' parameter", id="IShapGrouper-test-samples"),
    pytest.param(lambda: IShapGrouper(lin(), size_penalty=-1).fit(X()), IPE,
                 "'size_penalty' parameter", id="IShapGrouper-size-penalty"),
    pytest.param(lambda: IShapGrouper(lin(), target=3).fit(X()), ValueError,
                 "give an output index", id="IShapGrouper-target"),
    pytest.param(lambda: CorrelationGrouper().fit(X()[:1]), ValueError, AT_LEAST_2,
                 id="CorrelationGrouper-one-row"),
    pytest.param(lambda: CorrelationGrouper().fit(with_text("str")), ValueError,
                 "non-numeric columns ['c']", id="CorrelationGrouper-text-column"),
    pytest.param(lambda: CorrelationGrouper(correlation="kendall").fit(X()), IPE,
                 "'correlation' parameter", id="CorrelationGrouper-correlation"),
    pytest.param(lambda: FixedGrouper([[0, 1], [1, 2]]).fit(X()), ValueError,
                 "put each column in one group", id="FixedGrouper-overlap"),
    pytest.param(lambda: FixedGrouper(make_column_transformer((StandardScaler(), [0])))
                 .fit(X()), ValueError, "fit it first", id="FixedGrouper-unfitted-transformer"),
    pytest.param(lambda: PatchGrouper(patch_size=(2, 2, 2)).fit(images()), ValueError,
                 "patch_size=(2, 2, 2) must be an int or a pair",
                 id="PatchGrouper-patch-size-3"),
    pytest.param(lambda: PatchGrouper(patch_size=("a", 2)).fit(images()), ValueError,
                 "patch_size=('a', 2) must be an int or a pair",
                 id="PatchGrouper-patch-size-str"),
    pytest.param(lambda: PatchGrouper(patch_size=(0, 2)).fit(images()), ValueError,
                 "patch_size=(0, 2) must be", id="PatchGrouper-patch-size-0"),
    pytest.param(lambda: PatchGrouper(3, remainder="error").fit(images()), ValueError,
                 "pick a patch size that divides the image", id="PatchGrouper-remainder"),
    pytest.param(lambda: PatchGrouper(2).fit(np.zeros((1, 4, 4, 1, 1))), ValueError,
                 "height, width", id="PatchGrouper-5d"),
    pytest.param(lambda: PatchGrouper(2).fit(np.zeros((1, 16))), ValueError,
                 "flattened images need image_shape=", id="PatchGrouper-no-image-shape"),
    pytest.param(lambda: PatchGrouper(2, image_shape=(3, 3)).fit(np.zeros((1, 16))),
                 ValueError, "has 9 values per image, but X has 16 columns",
                 id="PatchGrouper-image-shape"),
    pytest.param(lambda: SuperpixelGrouper().fit(images()), ImportError,
                 "pip install", id="SuperpixelGrouper-without-scikit-image",
                 marks=pytest.mark.skipif(HAS_SKIMAGE, reason="scikit-image is installed")),
    pytest.param(lambda: SuperpixelGrouper("watershed").fit(images()), IPE,
                 "'segmentation' parameter", id="SuperpixelGrouper-segmentation"),
    pytest.param(lambda: column_transformer_groups(
        make_column_transformer((StandardScaler(), [0]))), ValueError, "fit it first",
        id="column_transformer_groups-unfitted"),
    pytest.param(lambda: column_transformer_groups(lin()), ValueError,
                 "is not a fitted ColumnTransformer", id="column_transformer_groups-model"),
    # -- datasets ------------------------------------------------------------------------
    pytest.param(lambda: datasets.make_agreed_example(0), IPE, "'n_samples' parameter",
                 id="make_agreed_example-n-samples"),
    pytest.param(lambda: datasets.make_agreed_example(10, noise=-1), IPE,
                 "'noise' parameter", id="make_agreed_example-noise"),
    pytest.param(lambda: datasets.make_agreed_example(10).function(np.zeros((2, 4))),
                 ValueError, "X must have shape (n_samples, 6)",
                 id="make_agreed_example-function-columns"),
    pytest.param(lambda: datasets.make_block_function(10, n_features=0), IPE,
                 "'n_features' parameter", id="make_block_function-n-features"),
    pytest.param(lambda: datasets.make_block_function(10, n_features=3).function(
        np.zeros((2, 4))), ValueError, "X must have shape (n_samples, 3)",
        id="make_block_function-function-columns"),
    pytest.param(lambda: datasets.load_digit_images(model="cnn"), IPE, "'model' parameter",
                 id="load_digit_images-model"),
    pytest.param(lambda: datasets.make_shape_images(10, image_size=8), IPE,
                 "'image_size' parameter", id="make_shape_images-image-size"),
    # -- the command line (more in test_cli_hardening.py and test_cli.py) ----------------
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y", "--model",
                                  ctx.tmp_path / "absent.skops", "--out", ctx.tmp_path / "r"]),
                 1, "no such model file; check the path given to --model",
                 id="cli-missing-model-file"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y", "--groups",
                                  ctx.tmp_path / "absent.json", "--out", ctx.tmp_path / "r"]),
                 1, "use auto, columns or a JSON file", id="cli-missing-groups-file"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y", "--groups",
                                  bad_json(ctx), "--out", ctx.tmp_path / "r"]),
                 1, "is not valid JSON", id="cli-groups-not-json"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx, ("y",)), "--target", "y",
                                  "--out", ctx.tmp_path / "r"]),
                 1, "has no columns besides the target 'y'", id="cli-only-target-column"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y",
                                  "--n-jobs", "x"]),
                 2, "argument --n-jobs: 'x' is not a whole number", id="cli-n-jobs-text"),
    pytest.param(cli(lambda ctx: ["explain"]), 2, "invalid choice: 'explain'",
                 id="cli-unknown-command"),
]


# -- second round: what result objects, output scales, parameters, pandas and --------
# -- Displays accept (each case failed before: a silent result or a crash) ------------
def V(n=3, K=2):
    return np.arange(n * K, dtype=float).reshape(n, K)


def expl(values=None, *args, **kwargs):
    """Build an Explanation of ``values`` (default: 3 rows, 2 groups)."""
    from skdecomp import Explanation

    return lambda: Explanation(V() if values is None else values, *args, **kwargs)


def explanations(*args, **kwargs):
    from skdecomp import Explanations

    return lambda: Explanations(*args, **kwargs)


def E_(n=3, K=2, **kwargs):
    from skdecomp import Explanation

    return Explanation(V(n, K), **kwargs)


def iexpl(values=None, terms=((), (0,), (1,), (0, 1)), base=None, names=("a", "b"),
          index="k-SII", max_order=2, outputs=None):
    from skdecomp import InteractionExplanation

    return lambda: InteractionExplanation(
        np.zeros((3, len(terms))) if values is None else values, list(terms),
        np.zeros(3) if base is None else base, None if names is None else list(names),
        index, max_order, outputs)


def proba_model(scale=1.0, shift=0.0):
    """A logistic model whose predict_proba is scaled and shifted (not probabilities)."""

    class Scaled(LogisticRegression):
        def predict_proba(self, X):
            return super().predict_proba(X) * scale + shift

    X_, y_ = data()
    return Scaled().fit(X_, y_ > 0)


def display(kind, *args, **kwargs):
    """``<kind>Display(*args, **kwargs).plot()`` on the Agg backend."""

    def call():
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from skdecomp import plot

        try:
            getattr(plot, kind + "Display")(*args, **kwargs).plot()
        finally:
            plt.close("all")

    return call


def display_from_explanation(explanation):
    def call():
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from skdecomp.plot import AttributionDisplay

        try:
            AttributionDisplay.from_explanation(explanation())
        finally:
            plt.close("all")

    return call


def skops_file(ctx, obj):
    import skops.io as sio

    path = ctx.tmp_path / "m.skops"
    sio.dump(obj, path)
    return path


def int_named_frame():
    return pd.DataFrame(X(), columns=[10, 20, 30])


NAN_ROW = np.array([[1.0, np.nan], [2.0, 3.0]])
INF_ROW = np.array([[1.0, np.inf], [2.0, 3.0]])
REAL = "must be real numbers"
UNIQUE = "must be unique"
AS_STRINGS = "are the same as strings"
NOT_PROBA = "these are not probabilities"
BOOL_RANGE = "must be an int in the range"
NOTHING = "nothing to draw"
NON_FINITE = "NaN or infinite value(s)"

SECOND_ROUND = [
    # -- Explanation: values --------------------------------------------------------------
    pytest.param(expl(np.array([["a", "b"], ["c", "d"]])), TypeError, REAL,
                 id="Explanation-values-strings"),
    pytest.param(expl(np.array([[1, "b"], [2, 3]], dtype=object)), TypeError,
                 "holds 'b' (str)", id="Explanation-values-object-text"),
    pytest.param(expl(np.array([[None, 1.0], [2.0, 3.0]], dtype=object)), TypeError,
                 "holds None", id="Explanation-values-object-none"),
    pytest.param(expl(np.ones((2, 2)) + 1j), TypeError, "complex numbers",
                 id="Explanation-values-complex"),
    pytest.param(expl(np.ones((2, 2), dtype=bool)), TypeError, "got booleans",
                 id="Explanation-values-bool"),
    pytest.param(expl(np.array([["2020-01-01"]], dtype="datetime64[D]")), TypeError,
                 "got dates", id="Explanation-values-dates"),
    pytest.param(expl([[1.0, 2.0], [3.0]]), ValueError, "is not a regular array",
                 id="Explanation-values-ragged"),
    pytest.param(expl("abc"), TypeError, "got the text 'abc'", id="Explanation-values-str"),
    pytest.param(expl(np.float64(3.0)), ValueError, "values have shape ()",
                 id="Explanation-values-scalar"),
    pytest.param(expl(np.zeros((2, 2, 2, 2))), ValueError, "values have shape (2, 2, 2, 2)",
                 id="Explanation-values-4d"),
    # -- Explanation: names ---------------------------------------------------------------
    pytest.param(expl(feature_names=["a", "a"]), ValueError, UNIQUE,
                 id="Explanation-feature-names-duplicate"),
    pytest.param(expl(feature_names=[1, "1"]), ValueError, AS_STRINGS,
                 id="Explanation-feature-names-equal-as-strings"),
    pytest.param(expl(feature_names=["a", None]), ValueError, "feature_names[1] is None",
                 id="Explanation-feature-names-none"),
    pytest.param(expl(feature_names=["a", np.nan]), ValueError, "feature_names[1] is nan",
                 id="Explanation-feature-names-nan"),
    pytest.param(expl(feature_names="ab"), TypeError, "got the single string 'ab'",
                 id="Explanation-feature-names-string"),
    pytest.param(expl(feature_names=["a", "b", "c"]), ValueError, "3 feature_names for 2",
                 id="Explanation-feature-names-too-many"),
    pytest.param(expl(feature_names=5), TypeError, "must be a list of names",
                 id="Explanation-feature-names-int"),
    pytest.param(expl(np.zeros((3, 2, 2)), output_names=["p", "p"]), ValueError, UNIQUE,
                 id="Explanation-output-names-duplicate"),
    pytest.param(expl(np.zeros((3, 2, 2)), output_names=[0, "0"]), ValueError, AS_STRINGS,
                 id="Explanation-output-names-equal-as-strings"),
    pytest.param(expl(np.zeros((3, 2, 2)), output_names=["p"]), ValueError,
                 "1 output_names for 2 outputs", id="Explanation-output-names-count"),
    pytest.param(expl(np.zeros((3, 2, 2)), output_names=["p", None]), ValueError,
                 "output_names[1] is None", id="Explanation-output-names-none"),
    pytest.param(expl(raw_data=np.zeros((3, 3)), feature_names_in=["a", "b"]), ValueError,
                 "2 feature_names_in for 3 columns", id="Explanation-names-in-length"),
    pytest.param(expl(raw_data=np.zeros((3, 2)), feature_names_in=["a", "a"]), ValueError,
                 UNIQUE, id="Explanation-names-in-duplicate"),
    pytest.param(expl(raw_data=pd.DataFrame(np.zeros((3, 2)), columns=[None, "b"])),
                 ValueError, ("feature_names_in[0] is None", "feature_names_in[0] is nan"),
                 id="Explanation-raw-column-none"),
    pytest.param(expl(raw_data=pd.DataFrame(np.zeros((3, 2)), columns=[1, "1"])),
                 ValueError, AS_STRINGS, id="Explanation-raw-columns-equal-as-strings"),
    pytest.param(expl(raw_data=np.zeros(3)), ValueError, "expected (n_rows, n_features)",
                 id="Explanation-raw-data-1d"),
    pytest.param(expl(groups=[["a", "a"], ["b"]]), ValueError, UNIQUE,
                 id="Explanation-groups-duplicate-column"),
    pytest.param(expl(groups=[["a", None], ["b"]]), ValueError, "is None",
                 id="Explanation-groups-none-column"),
    pytest.param(expl(groups="ab"), TypeError, "groups must be a list of column lists",
                 id="Explanation-groups-string"),
    # -- Explanation: base values, never guessed ------------------------------------------
    pytest.param(expl(np.zeros((3, 2, 3)), [1.0, 2.0, 3.0]), ValueError,
                 "one value per output is given as shape (1, 3)",
                 id="Explanation-base-per-output-as-rows"),
    pytest.param(expl(np.zeros((4, 2, 3)), [1.0, 2.0, 3.0]), ValueError,
                 "expected a scalar or (4, 3)", id="Explanation-base-per-output-1d"),
    pytest.param(expl(V(), [1.0, 2.0]), ValueError, "expected a scalar, (3,) or (3, 1)",
                 id="Explanation-base-wrong-length"),
    pytest.param(expl(V(), "0.5"), TypeError, "got the text '0.5'",
                 id="Explanation-base-text"),
    pytest.param(expl(V(), np.array([1 + 1j, 2, 3])), TypeError, "complex numbers",
                 id="Explanation-base-complex"),
    pytest.param(expl(V(), np.zeros((3, 2))), ValueError, "for values of 3 rows and 1 output",
                 id="Explanation-base-extra-outputs"),
    # -- Explanations ---------------------------------------------------------------------
    pytest.param(explanations(np.ones((3, 2))), TypeError,
                 "holds Explanation objects keyed by method name",
                 id="Explanations-bare-array"),
    pytest.param(explanations(shapley=np.ones((3, 2))), TypeError,
                 "wrap an array of attributions in Explanation(values)",
                 id="Explanations-array-value"),
    pytest.param(explanations({1: E_()}), TypeError, "keyed by method name (a str)",
                 id="Explanations-int-key"),
    pytest.param(lambda: explanations(shapley=E_(3), arch=E_(4))(), ValueError,
                 "has 4 rows but", id="Explanations-different-rows"),
    pytest.param(lambda: explanations(shapley=E_(3))().__setitem__("arch", E_(5)),
                 ValueError, "has 5 rows but", id="Explanations-setitem-different-rows"),
    pytest.param(lambda: setattr(explanations(shapley=E_(3))(), "arch", "x"), TypeError,
                 "must be an Explanation", id="Explanations-setattr-text"),
    pytest.param(lambda: explanations(shapley=E_(3))().update(arch=E_(2)), ValueError,
                 "has 2 rows but", id="Explanations-update-different-rows"),
    # -- InteractionExplanation -----------------------------------------------------------
    pytest.param(iexpl(names=("a", "a")), ValueError, UNIQUE,
                 id="InteractionExplanation-names-duplicate"),
    pytest.param(iexpl(names=(0, "0")), ValueError, AS_STRINGS,
                 id="InteractionExplanation-names-equal-as-strings"),
    pytest.param(iexpl(names=None), TypeError, "got None",
                 id="InteractionExplanation-names-none"),
    pytest.param(iexpl(values=np.full((3, 4), "x")), TypeError, REAL,
                 id="InteractionExplanation-values-strings"),
    pytest.param(iexpl(values=np.zeros((3, 4)) * 1j), TypeError, "complex numbers",
                 id="InteractionExplanation-values-complex"),
    pytest.param(iexpl(terms=((), (0,), (0,), (0, 1))), ValueError, "is listed twice",
                 id="InteractionExplanation-term-twice"),
    pytest.param(iexpl(terms=((), (0,), (1,), (0, 5))), ValueError, "names group 5",
                 id="InteractionExplanation-term-out-of-range"),
    pytest.param(iexpl(terms=((), (0,), (1,), (1, 0))), ValueError,
                 "distinct groups in increasing order", id="InteractionExplanation-term-order"),
    pytest.param(iexpl(terms=((), (0,), (1,), (0, 1.5))), TypeError,
                 "give group positions (ints)", id="InteractionExplanation-term-float"),
    pytest.param(iexpl(max_order=1), ValueError, "more than max_order=1",
                 id="InteractionExplanation-max-order-small"),
    pytest.param(iexpl(max_order=True), TypeError, "max_order must be a non-negative int",
                 id="InteractionExplanation-max-order-bool"),
    pytest.param(iexpl(base=np.zeros(4)), ValueError, "base_values have shape (4,)",
                 id="InteractionExplanation-base-length"),
    pytest.param(iexpl(outputs=["y", "y2"]), ValueError, "2 output_names for 1 outputs",
                 id="InteractionExplanation-outputs-count"),
    pytest.param(iexpl(index=3), TypeError, "index must be the name of the index",
                 id="InteractionExplanation-index-int"),
    pytest.param(lambda: iexpl()()[True], TypeError, "cannot select rows with a bool",
                 id="InteractionExplanation-select-bool"),
    # -- probabilities are checked on every path ------------------------------------------
    pytest.param(lambda: Explainer(proba_model(1.5), response_method="predict_proba",
                                   background=5).fit(X()), ValueError, NOT_PROBA,
                 id="predict_proba-above-1"),
    pytest.param(lambda: Explainer(proba_model(1.0, -1.0), response_method="predict_proba",
                                   background=5).fit(X()), ValueError, "outside [0, 1]",
                 id="predict_proba-negative"),
    pytest.param(lambda: Explainer(proba_model(0.5), response_method="predict_proba",
                                   background=5).fit(X()), ValueError,
                 "rows that do not sum to 1", id="predict_proba-rows-sum-half"),
    pytest.param(lambda: Explainer(proba_model(0.5), response_method="log_odds",
                                   background=5).fit(X()), ValueError, NOT_PROBA,
                 id="log_odds-of-non-probabilities"),
    pytest.param(lambda: Explainer(proba_model(0.5), response_method="predict_proba",
                                   target=True, background=5).fit(X()), ValueError,
                 NOT_PROBA, id="predict_proba-one-class-still-checked"),
    pytest.param(lambda: AdaptiveGrouper(proba_model(2.0), response_method="predict_proba",
                                         max_samples=10).fit(X()), ValueError, NOT_PROBA,
                 id="AdaptiveGrouper-predict_proba-invalid"),
    pytest.param(lambda: PairwiseGrouper(proba_model(2.0), response_method="predict_proba",
                                         max_samples=10).fit(X()), ValueError, NOT_PROBA,
                 id="PairwiseGrouper-predict_proba-invalid"),
    pytest.param(lambda: Explainer(proba_model(1.5), response_method="predict_proba",
                                   background=5).fit(X()).transform(X()[:3]),
                 ValueError, "sklearn.calibration.CalibratedClassifierCV",
                 id="predict_proba-error-names-the-fix"),
    # -- booleans are not numbers ---------------------------------------------------------
    pytest.param(lambda: AdaptiveGrouper(lin(), max_group_size=True).fit(X()), IPE,
                 BOOL_RANGE, id="AdaptiveGrouper-max-group-size-bool"),
    pytest.param(lambda: AdaptiveGrouper(lin(), n_groups=True).fit(X()), IPE,
                 "'n_groups' parameter", id="AdaptiveGrouper-n-groups-bool"),
    pytest.param(lambda: AdaptiveGrouper(lin(), group_penalty=True).fit(X()), IPE,
                 "'group_penalty' parameter", id="AdaptiveGrouper-group-penalty-bool"),
    pytest.param(lambda: AdaptiveGrouper(lin(), max_samples=np.bool_(True)).fit(X()), IPE,
                 "'max_samples' parameter", id="AdaptiveGrouper-max-samples-numpy-bool"),
    pytest.param(lambda: CorrelationGrouper(n_groups=True).fit(X()), IPE,
                 "'n_groups' parameter", id="CorrelationGrouper-n-groups-bool"),
    pytest.param(lambda: CorrelationGrouper(max_group_size=False).fit(X()), IPE,
                 "'max_group_size' parameter", id="CorrelationGrouper-max-group-size-false"),
    pytest.param(lambda: PairwiseGrouper(lin(), max_group_size=True).fit(X()), IPE,
                 "'max_group_size' parameter", id="PairwiseGrouper-max-group-size-bool"),
    pytest.param(lambda: IShapGrouper(lin(), n_groups=True).fit(X()), IPE,
                 "'n_groups' parameter", id="IShapGrouper-n-groups-bool"),
    pytest.param(lambda: RecursiveGrouper(lin(), max_group_size=True).fit(X()), IPE,
                 "'max_group_size' parameter", id="RecursiveGrouper-max-group-size-bool"),
    pytest.param(fit_E(background=10, n_samples=True, method="kernel_shap"), IPE,
                 "'n_samples' parameter", id="Explainer-n-samples-bool"),
    pytest.param(fit_E(background=10, group_penalty=True), IPE,
                 "'group_penalty' parameter", id="Explainer-group-penalty-bool"),
    # -- pandas ---------------------------------------------------------------------------
    pytest.param(lambda: Explainer(LinearRegression().fit(int_named_frame(), y()),
                                   groups=[[10, 40], [30]]).fit(int_named_frame()),
                 ValueError, "unknown column 40; the DataFrame's columns are [10, 20, 30]",
                 id="groups-int-labels-unknown"),
    pytest.param(lambda: Explainer(LinearRegression().fit(int_named_frame(), y()),
                                   groups=[[10, "b"], [20, 30]]).fit(int_named_frame()),
                 ValueError, "unknown column 'b'; the DataFrame's columns are",
                 id="groups-int-labels-text-name"),
    # -- Displays -------------------------------------------------------------------------
    pytest.param(display("Attribution", {"shapley": NAN_ROW}, ["a", "b"]), ValueError,
                 NON_FINITE, id="AttributionDisplay-nan"),
    pytest.param(display("Attribution", {"shapley": INF_ROW}, ["a", "b"]), ValueError,
                 NON_FINITE, id="AttributionDisplay-inf"),
    pytest.param(display("Attribution", {"shapley": V()}, ["a", "b"],
                         expected_value=np.nan), ValueError,
                 "in the expected_value values", id="AttributionDisplay-nan-expected-value"),
    pytest.param(display("Attribution", {}, ["a", "b"]), ValueError,
                 "no attributions to draw", id="AttributionDisplay-no-methods"),
    pytest.param(display("Attribution", {"shapley": np.zeros((0, 2))}, ["a", "b"]),
                 ValueError, NOTHING, id="AttributionDisplay-no-rows"),
    pytest.param(display_from_explanation(lambda: E_(3)[:0]), ValueError,
                 "the explanation has 0 rows", id="AttributionDisplay-empty-explanation"),
    pytest.param(display_from_explanation(lambda: E_(3, 0)), ValueError,
                 "and 0 groups", id="AttributionDisplay-no-groups"),
    pytest.param(display_from_explanation(lambda: __import__("skdecomp").Explanation(
        NAN_ROW)), ValueError, NON_FINITE, id="AttributionDisplay-nan-explanation"),
    pytest.param(display("Disagreement", np.array([[0.0, np.inf], [1.0, 0.0]]), ["a", "b"]),
                 ValueError, "infinite value(s)", id="DisagreementDisplay-inf"),
    pytest.param(display("Disagreement", np.zeros((0, 0)), []), ValueError, NOTHING,
                 id="DisagreementDisplay-empty"),
    pytest.param(display("Interaction", {"h": np.array([[0.0, -np.inf], [1.0, 0.0]])},
                         ["a", "b"]), ValueError, "infinite value(s)",
                 id="InteractionDisplay-inf"),
    pytest.param(display("Interaction", {}, []), ValueError, "no interaction matrices",
                 id="InteractionDisplay-empty"),
    pytest.param(display("Saliency", np.zeros((2, 2)), np.array([[0, 0], [1, 1]]),
                         {"shapley": np.array([1.0, np.nan])}), ValueError, NON_FINITE,
                 id="SaliencyDisplay-nan"),
    pytest.param(display("Saliency", np.full((2, 2), np.inf), np.array([[0, 0], [1, 1]]),
                         {"shapley": np.array([1.0, 2.0])}), ValueError,
                 "in the image pixels", id="SaliencyDisplay-inf-image"),
    pytest.param(display("Saliency", np.zeros((2, 2)), np.array([[0, 0], [1, 1]]), {}),
                 ValueError, "no attributions to draw", id="SaliencyDisplay-no-methods"),
    pytest.param(display("Grouping", [], [], []), ValueError, "no steps to draw",
                 id="GroupingDisplay-empty"),
    pytest.param(display("PartialDependence", [], [], []), ValueError,
                 "no partial dependence to draw", id="PartialDependenceDisplay-empty"),
    # -- the command line: model files, budgets -------------------------------------------
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y", "--model",
                                  skops_file(ctx, {"a": [1, 2]}), "--out", ctx.tmp_path / "r"]),
                 1, "holds a dict with keys ['a'], not a fitted model",
                 id="cli-model-file-dict"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y", "--model",
                                  skops_file(ctx, np.arange(3.0)), "--out", ctx.tmp_path / "r"]),
                 1, "holds a NumPy array of shape (3,)", id="cli-model-file-array"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y", "--model",
                                  skops_file(ctx, StandardScaler().fit(X())),
                                  "--out", ctx.tmp_path / "r"]),
                 1, "save the whole Pipeline that ends in the model",
                 id="cli-model-file-transformer"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y", "--model",
                                  skops_file(ctx, LinearRegression()),
                                  "--out", ctx.tmp_path / "r"]),
                 1, "holds an unfitted LinearRegression", id="cli-model-file-unfitted"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y",
                                  "--budget", "soon"]),
                 2, "argument --budget: 'soon' is not a number", id="cli-budget-text"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y",
                                  "--budget", "0"]),
                 2, "must be a positive number or 'none'", id="cli-budget-zero"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y",
                                  "--max-memory", "-5"]),
                 2, "must be a positive number or 'none'", id="cli-max-memory-negative"),
    pytest.param(cli(lambda ctx: ["report", small_csv(ctx), "--target", "y", "--n-rows",
                                  "30", "--groups", "auto", "--estimator", "mlp",
                                  "--budget", "0.5", "--out", ctx.tmp_path / "r"]),
                 1, "more than the budget of 0.5 s", id="cli-budget-too-small"),
]


def _explanation(**kw):
    from skdecomp import Explanation

    return lambda: Explanation(np.ones((2, 3)), **kw)


def _nan_interaction_display():
    import matplotlib

    matplotlib.use("Agg")
    from skdecomp.plot import InteractionDisplay

    InteractionDisplay({"h2": np.full((3, 3), np.nan)}, ["a", "b", "c"]).plot()


# -- third round: the result objects, metrics and displays -------------------------------
THIRD_ROUND = [
    pytest.param(_explanation(n_samples=2.7), ValueError, "whole number of at least 1",
                 id="explanation-n-samples-fraction"),
    pytest.param(_explanation(n_samples="many"), TypeError, "whole number of at least 1",
                 id="explanation-n-samples-text"),
    pytest.param(lambda: metrics.disagreement({"a": np.ones((0, 3)), "b": np.ones((0, 3))}),
                 ValueError, "have no row", id="disagreement-no-rows"),
    pytest.param(_nan_interaction_display, ValueError, "NaN everywhere off its diagonal",
                 id="interaction-display-nan-matrix"),
]


def _explanations(**kw):
    from skdecomp._explanation import Explanations

    return lambda: Explanations(**kw).to_frame()


def _interactions_index_list():
    X = np.random.default_rng(0).normal(size=(30, 3))
    Explainer(lambda Z: Z.sum(axis=1), background=5).fit(X).interactions(
        X[:2], index=["SII"])


def _fdtree_decimals():
    from skdecomp import FDTree

    X = np.random.default_rng(0).normal(size=(60, 3))
    tree = FDTree(lambda Z: Z[:, 0] * (Z[:, 1] > 0), max_depth=1, random_state=0).fit(X)
    tree.export_text(decimals=-1)


def _xgboost_other_width(width):
    def call():
        xgb = pytest.importorskip("xgboost")
        X = np.random.default_rng(0).normal(size=(60, 4))
        model = xgb.XGBRegressor(n_estimators=3, n_jobs=1).fit(X, X[:, 0])
        Z = X[:, :3] if width == 3 else np.column_stack([X, X[:, :1]])
        Explainer(model, background=10).fit(Z)

    return call


def _dup_target_csv(ctx):
    path = ctx.tmp_path / "dup.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.normal(size=(30, 4)), columns=["a", "y", "b", "y"]).to_csv(
        path, index=False)
    return path


def _permutation_nan_target():
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = X.sum(axis=1)
    y[3] = np.nan
    inspection.permutation_importance(LinearRegression().fit(X, X.sum(axis=1)), X, y)


def _image_groups_missing_columns():
    X = np.zeros((3, 224 * 224 * 3))
    Explainer(lambda Z: Z.sum(axis=1), groups=[[0, 1]], background=2).fit(X)


def _region_display(kind):
    def call():
        import matplotlib

        matplotlib.use("Agg")
        from skdecomp import FDTree
        from skdecomp.plot import RegionDisplay

        X = np.random.default_rng(0).normal(size=(60, 3))
        if kind == "explainer":
            RegionDisplay.from_estimator(Explainer(lambda Z: Z.sum(axis=1)).fit(X), X)
        tree = FDTree(lambda Z: Z[:, 0] * (Z[:, 1] > 0), max_depth=1,
                      random_state=0).fit(X)
        RegionDisplay.from_estimator(tree, X, **{kind: "x"})

    return call


def _catboost_other_width():
    catboost = pytest.importorskip("catboost")
    X = np.random.default_rng(0).normal(size=(60, 3))
    model = catboost.CatBoostRegressor(iterations=3, verbose=0, thread_count=1,
                                       allow_writing_files=False).fit(X, X.sum(axis=1))
    Explainer(model, background=5).fit(X[:, :2])


def _multi_output_classifier():
    from sklearn.ensemble import RandomForestClassifier

    X = np.random.default_rng(0).normal(size=(60, 3))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    model = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, Y)
    Explainer(model, background=5).fit(X)


def _ufunc_model(ctx):
    import skops.io as sio
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = np.abs(np.random.default_rng(0).normal(size=(30, 2)))
    model = make_pipeline(FunctionTransformer(np.sqrt), LinearRegression()).fit(X, X.sum(1))
    path = ctx.tmp_path / "ufunc.skops"
    sio.dump(model, path)
    pd.DataFrame(np.column_stack([X, X.sum(1)]), columns=["a", "b", "y"]).to_csv(
        ctx.tmp_path / "t.csv", index=False)
    return path


def _xgboost_huge_value():
    xgb = pytest.importorskip("xgboost")
    X = np.random.default_rng(0).normal(size=(60, 3))
    model = xgb.XGBRegressor(n_estimators=3, n_jobs=1).fit(X, X.sum(axis=1))
    explainer = Explainer(model, background=5, algorithm="model_agnostic").fit(X)
    X[0, 0] = 1e39
    explainer.transform(X[:2])


def _lightgbm_category_as_text():
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    D = pd.DataFrame({"a": rng.normal(size=60),
                      "c": pd.Categorical(rng.choice(["u", "v"], 60))})
    model = lightgbm.LGBMRegressor(n_estimators=3, verbose=-1, n_jobs=1).fit(D, D["a"])
    Explainer(model, background=5).fit(D.assign(c=D["c"].astype(str)))


THIRD_ROUND += [
    pytest.param(_lightgbm_category_as_text, ValueError,
                 "was fitted with them as pandas categories",
                 id="lightgbm-category-passed-as-text"),
    pytest.param(_xgboost_huge_value, ValueError, "beyond float32's range",
                 id="xgboost-value-beyond-float32"),
    pytest.param(cli(lambda ctx: ["report", ctx.tmp_path / "t.csv", "--target", "y",
                                  "--model", _ufunc_model(ctx), "--out", ctx.tmp_path / "r"]),
                 1, "does not load: ['numpy.sqrt']", id="cli-model-file-ufunc"),
    pytest.param(_catboost_other_width, ValueError, "was fitted on 3 columns, but X has 2",
                 id="catboost-other-width"),
    pytest.param(_multi_output_classifier, ValueError, "explain one output at a time",
                 id="multi-output-classifier"),
    pytest.param(lambda: Explainer(lambda Z: Z, groups=[[0], [1]]).set_params(
        groups__n_groups=2), ValueError, "which has no parameters of its own",
        id="set-params-nested-on-list-groups"),
    pytest.param(_region_display("output"), ValueError, "is not one of the model's 1 output",
                 id="region-display-bad-output"),
    pytest.param(_region_display("ax"), TypeError, "ax must be a matplotlib Axes",
                 id="region-display-bad-ax"),
    pytest.param(_region_display("explainer"), TypeError, "draws the regions of a fitted FDTree",
                 id="region-display-explainer"),
    pytest.param(_permutation_nan_target, ValueError, "y holds NaN in 1 of its 40 rows",
                 id="permutation-importance-nan-target"),
    pytest.param(_image_groups_missing_columns, ValueError, "and 150,518 more]",
                 id="groups-miss-many-columns-short-message"),
    pytest.param(cli(lambda ctx: ["report", _dup_target_csv(ctx), "--target", "y",
                                  "--out", ctx.tmp_path / "r"]),
                 1, "holds the target's name 'y' 2 times", id="cli-target-twice"),
    pytest.param(_xgboost_other_width(3), ValueError, "was fitted on 4 columns, but X has 3",
                 id="xgboost-fewer-columns"),
    pytest.param(_xgboost_other_width(5), ValueError, "was fitted on 4 columns, but X has 5",
                 id="xgboost-more-columns"),
    pytest.param(_explanations(), ValueError, "hold no method",
                 id="explanations-empty-to-frame"),
    pytest.param(_explanations(a=_explanation()(),
                               b=__import__("skdecomp").Explanation(np.ones((2, 3, 2)))),
                 ValueError, "mix one output", id="explanations-mixed-outputs-to-frame"),
    pytest.param(_interactions_index_list, TypeError, "the name of one interaction index",
                 id="interactions-index-list"),
    pytest.param(_fdtree_decimals, ValueError, "decimals must be a whole number",
                 id="fdtree-export-text-negative-decimals"),
]
CASES = CASES + SECOND_ROUND + THIRD_ROUND


def test_group_named_like_a_pair_term_keeps_term_names_apart():
    X = np.random.default_rng(0).normal(size=(40, 3))
    explainer = Explainer(lambda Z: Z[:, 0] * Z[:, 1] + Z[:, 2],
                          groups={"a": [0], "b": [1], "a x b": [2]}, background=10).fit(X)
    res = explainer.interactions(X[:3], index="k-SII", max_order=2)
    assert len(set(res.term_names)) == len(res.term_names)
    assert "[a x b]" in res.term_names and "a x b" in res.term_names
    assert res.to_frame()["a x b"].abs().max() > 0  # the pair term of a and b
    np.testing.assert_allclose(res.to_frame()["[a x b]"], res.values[:, 3])
    assert list(res.summary().index) != [] and res.summary().index.is_unique


class _Context:
    def __init__(self, tmp_path, capsys):
        self.tmp_path = tmp_path
        self.capsys = capsys


def _pattern(fragment):
    """Regex of a fragment, or of any of a tuple of fragments."""
    fragments = (fragment,) if isinstance(fragment, str) else fragment
    return "|".join(re.escape(f) for f in fragments)


def test_catalogue_is_large():
    assert len(CASES) >= 80
    assert len(SECOND_ROUND) >= 60


@pytest.mark.parametrize("call, expected, fragment", CASES)
def test_bad_input(call, expected, fragment, tmp_path, capsys):
    if getattr(call, "is_cli", False):
        code, line = call(_Context(tmp_path, capsys))
        assert code == expected, line
        assert "Traceback" not in line
        assert re.search(_pattern(fragment), line), line
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(expected, match=_pattern(fragment)):
            call()


# -- nothing the user passed is modified in place -----------------------------------------
def _snapshot(obj):
    return copy.deepcopy(obj)


def _assert_same(before, after):
    if isinstance(before, pd.DataFrame):
        pd.testing.assert_frame_equal(before, after)
    elif isinstance(before, np.ndarray):
        np.testing.assert_array_equal(before, after)
        assert before.dtype == after.dtype
    else:
        assert before == after


@pytest.mark.parametrize("as_frame", [False, True])
def test_inputs_are_never_modified_in_place(as_frame):
    rng = np.random.default_rng(0)
    Xa = rng.normal(size=(30, 4))
    ya = Xa[:, 0] * Xa[:, 1] + Xa[:, 2] - Xa[:, 3]
    Xd = pd.DataFrame(Xa, columns=list("abcd")) if as_frame else Xa
    model = LinearRegression().fit(Xd, ya)
    background = Xd.iloc[:5].copy() if as_frame else Xa[:5].copy()
    group_lists = [["a", "b"], ["c"], ["d"]] if as_frame else [[0, 1], [2], [3]]
    groups_dict = {"ab": group_lists[0], "c": group_lists[1], "d": group_lists[2]}
    method_params = {"p": 0.4}
    inputs = [Xd, background, group_lists, groups_dict, method_params]
    before = [_snapshot(v) for v in inputs]

    for groups in (group_lists, groups_dict):
        e = Explainer(model, groups=groups, background=background, method="lime",
                      method_params=method_params, n_samples=40, random_state=0).fit(Xd)
        e.transform(Xd)
        e.explain(Xd, methods=["shapley", "occlusion", "rise", "kernel_shap"])
        e.decompose(Xd)
        e.score(Xd)
    e = Explainer(model, groups=groups_dict, background=4, random_state=0).fit(Xd)
    dec_ = e.decompose(Xd[:5] if not as_frame else Xd.iloc[:5])
    rows = Xd[:5] if not as_frame else Xd.iloc[:5]
    attributions = e.transform(rows)
    attributions_before = attributions.copy()
    for name in metrics.METRICS:
        getattr(metrics, name)(e, rows, attributions=attributions, n_samples=16,
                               random_state=0)
        getattr(metrics, name)(None, None, attributions=attributions, decomposition=dec_)
    named = {"shapley": attributions, "arch": dec_.attributions("arch")}
    named_before = {k: v.copy() for k, v in named.items()}
    metrics.disagreement(named, measure="spearman")
    metrics.disagreement(list(named.values()), measure="sign_agreement", top_k=2)
    metrics.metric_disagreement(e, rows, attributions=named, n_samples=16, random_state=0)
    inspection.agreed_loss(e, Xd)
    inspection.h_statistic(e, Xd)
    inspection.permutation_importance(model, Xd, ya, groups=group_lists, n_repeats=2,
                                      random_state=0)
    inspection.partial_dependence(model, Xd, group_lists[0], grid_resolution=3)
    arch_detect(e, rows)

    for b, v in zip(before, inputs):
        _assert_same(b, v)
    np.testing.assert_array_equal(attributions, attributions_before)
    for k in named:
        np.testing.assert_array_equal(named[k], named_before[k])


# -- conditional samplers: one contract, checked on every conditional path -----
class _Means:
    """A user sampler: the absent columns at their means (well behaved)."""

    def fit(self, X):
        self.mean_ = np.asarray(X).mean(axis=0)
        return self

    def sample(self, X, known, n_draws, random_state=None):
        out = np.broadcast_to(self.mean_, (X.shape[0], n_draws, X.shape[1])).copy()
        return np.where(known[:, None, :], X[:, None, :], out)


class _NaNDraws(_Means):
    def sample(self, X, known, n_draws, random_state=None):
        return np.full((X.shape[0], n_draws, X.shape[1]), np.nan)


class _InfDraws(_Means):
    def sample(self, X, known, n_draws, random_state=None):
        draws = super().sample(X, known, n_draws)
        draws[..., -1] = np.inf
        return draws


class _OneDraw(_Means):
    def sample(self, X, known, n_draws, random_state=None):
        return super().sample(X, known, 1)


class _TwoDimensional(_Means):
    def sample(self, X, known, n_draws, random_state=None):
        return super().sample(X, known, n_draws)[:, 0]


class _ColumnShort(_Means):
    def sample(self, X, known, n_draws, random_state=None):
        return super().sample(X, known, n_draws)[:, :, 1:]


class _Strings(_Means):
    def sample(self, X, known, n_draws, random_state=None):
        return super().sample(X, known, n_draws).astype(str)


@functools.cache
def _sampler_data():
    rng = np.random.default_rng(0)
    Xs = rng.normal(size=(40, 3))
    ys = Xs @ np.array([1.0, 2.0, -1.0]) + Xs[:, 0] * Xs[:, 1]
    from sklearn.ensemble import HistGradientBoostingRegressor

    hgb = HistGradientBoostingRegressor(max_iter=5, min_samples_leaf=5).fit(Xs, ys)
    return Xs, ys, LinearRegression().fit(Xs, ys), hgb


def _on_path(path, sampler, nan_model=False):
    """Run one conditional path with a sampler (a model that accepts NaN, or not)."""
    Xs, ys, linear, hgb = _sampler_data()
    model = hgb if nan_model else linear

    def call():
        if path == "explainer":
            Explainer(model, imputer=sampler, background=4, random_state=0).fit(
                Xs).transform(Xs[:2])
        elif path == "permutation_importance":
            inspection.permutation_importance(model, Xs, ys, imputer=sampler,
                                              n_repeats=2, random_state=0)
        elif path == "partial_dependence":
            inspection.partial_dependence(model, Xs, 0, grid=[[0.5]], imputer=sampler,
                                          random_state=0)
        elif path == "disagreement_sources":
            inspection.disagreement_sources(model, Xs, sampler=sampler, max_samples=20,
                                            random_state=0)
        else:
            AdaptiveGrouper(model, imputer=sampler, max_samples=20,
                            random_state=0).fit(Xs)

    return call


SAMPLER_PATHS = ["explainer", "permutation_importance", "partial_dependence",
                 "disagreement_sources", "grouper"]
SAMPLER_CASES = [
    # (sampler, model accepts NaN, error, fragment)
    pytest.param(_NaNDraws, True, ValueError, "_NaNDraws.sample returned",
                 id="nan-draws-model-takes-nan"),
    pytest.param(_NaNDraws, False, ValueError, "must draw finite values",
                 id="nan-draws-model-refuses-nan"),
    pytest.param(_InfDraws, False, ValueError, "NaN or infinite draws",
                 id="inf-draws"),
    pytest.param(_OneDraw, False, ValueError, "returned 1 draw per row, but n_draws=",
                 id="too-few-draws"),
    pytest.param(_TwoDimensional, False, ValueError, "returned draws of shape",
                 id="two-dimensional-draws"),
    pytest.param(_ColumnShort, False, ValueError, "(n_rows, n_draws, n_features)",
                 id="draws-missing-a-column"),
    pytest.param(_Strings, False, TypeError, "not numbers", id="string-draws"),
    pytest.param(lambda: __import__("skdecomp").GaussianCopulaSampler, False, TypeError,
                 "pass an instance, e.g. GaussianCopulaSampler()", id="copula-class"),
    pytest.param(lambda: __import__("skdecomp").KNeighborsSampler, False, TypeError,
                 "pass an instance, e.g. KNeighborsSampler()", id="kneighbors-class"),
]


@pytest.mark.parametrize("path", SAMPLER_PATHS)
@pytest.mark.parametrize("make, nan_model, expected, fragment", SAMPLER_CASES)
def test_sampler_contract_on_every_path(path, make, nan_model, expected, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(expected, match=re.escape(fragment)):
            _on_path(path, make(), nan_model)()


def test_pandas_bool_column_is_numeric_under_the_conditional_game():
    rng = np.random.default_rng(1)
    ints = pd.DataFrame({"a": rng.normal(size=60),
                         "b": (rng.random(60) > 0.5).astype(int)})
    bools = ints.assign(b=ints["b"].astype(bool))

    def f(D):
        return D["a"].to_numpy() + 2.0 * D["b"].to_numpy(dtype=float)

    kw = {"imputer": "conditional", "background": 8, "random_state": 0}
    as_bool = Explainer(f, **kw).fit(bools)
    as_int = Explainer(f, **kw).fit(ints)
    np.testing.assert_allclose(as_bool.transform(bools.iloc[:5]),
                               as_int.transform(ints.iloc[:5]))
    y_ = f(ints)
    model = LinearRegression().fit(ints, y_)
    pfi = {"imputer": "conditional", "n_repeats": 2, "random_state": 0}
    np.testing.assert_allclose(
        inspection.permutation_importance(model, bools, y_, **pfi).importances,
        inspection.permutation_importance(model, ints, y_, **pfi).importances)
    assert bools["b"].dtype == bool  # the user's frame keeps its dtype


# -- an Explainer's grouper in GroupingDisplay; LightGBM categories given as text ---------
def test_grouping_display_draws_an_explainers_pairwise_grouper():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from skdecomp.plot import GroupingDisplay

    X, y = data()[:2]
    model = LinearRegression().fit(X, y)
    explainer = Explainer(model, groups=PairwiseGrouper(n_groups=2), background=10).fit(X)
    disp = GroupingDisplay.from_estimator(explainer, X)
    assert isinstance(disp, GroupingDisplay)
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("fitted, fragment", [
    (False, "This Explainer is not fitted"),
    (True, "fitted without a grouper (groups=None)"),
])
def test_grouping_display_of_an_explainer_without_a_grouper(fitted, fragment):
    pytest.importorskip("matplotlib")
    from skdecomp.plot import GroupingDisplay

    X, y = data()[:2]
    explainer = Explainer(LinearRegression().fit(X, y), background=10)
    if fitted:
        explainer.fit(X)
    with pytest.raises(ValueError, match=re.escape(fragment)):
        GroupingDisplay.from_estimator(explainer, X)


@functools.cache
def _lightgbm_with_a_category():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=120),
                      "c": pd.Categorical(rng.choice(["x", "y", "z"], 120)),
                      "b": rng.normal(size=120)})
    y = X["a"] + 2.0 * (X["c"] == "x") + X["b"]
    model = lgb.LGBMRegressor(n_estimators=10, min_child_samples=5, verbose=-1)
    return model.fit(X, y), X


def test_lightgbm_category_given_as_text_on_the_tree_path():
    model, X = _lightgbm_with_a_category()
    text = X.iloc[:4].assign(c=X["c"].iloc[:4].astype(str))
    text.iloc[0, 1] = "unseen"  # read as missing, as LightGBM reads it
    seen = text["c"].where(text["c"].isin(X["c"].cat.categories))
    as_category = text.assign(c=pd.Categorical(seen, categories=X["c"].cat.categories))
    explainer = Explainer(model, background=20, random_state=0).fit(X)
    assert explainer.algorithm_ == "tree"
    np.testing.assert_allclose(explainer.transform(text), explainer.transform(as_category))


def test_lightgbm_category_given_as_text_on_model_calls():
    model, X = _lightgbm_with_a_category()
    text = X.iloc[:4].assign(c=X["c"].iloc[:4].astype(str))
    explainer = Explainer(model, background=20, random_state=0,
                          algorithm="model_agnostic").fit(X)
    with pytest.raises(ValueError, match=r"columns \['c'\] as str.*pandas categories"):
        explainer.transform(text)


def test_lightgbm_tree_input_names_text_columns_it_cannot_read():
    from skdecomp._tree._boosters import _LightGBMInput

    frame = pd.DataFrame({"a": [1.0, 2.0], "t": ["u", "v"]})
    with pytest.raises(ValueError, match=r"columns \['t'\] as text.*astype"):
        _LightGBMInput(2, None, [], "LGBMRegressor").transform(frame)
