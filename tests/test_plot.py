"""Display classes under the Agg backend: figures, labels and artists."""

import subprocess
import sys

import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from sklearn.datasets import load_digits  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from skdecomp import AdaptiveGrouper, Explainer  # noqa: E402
from skdecomp.datasets import make_agreed_example  # noqa: E402
from skdecomp.inspection import h_statistic, interaction_matrix, partial_dependence  # noqa: E402
from skdecomp.metrics import disagreement  # noqa: E402
from skdecomp.plot import (  # noqa: E402
    AttributionDisplay,
    DisagreementDisplay,
    GroupingDisplay,
    InteractionDisplay,
    PartialDependenceDisplay,
    SaliencyDisplay,
)

METHODS = ["arch", "shapley", "occlusion"]


@pytest.fixture
def pyplot():
    import matplotlib.pyplot as plt

    plt.close("all")
    yield plt
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    return make_agreed_example(n_samples=120, random_state=0)


@pytest.fixture(scope="module")
def explainer(data):
    return Explainer(data.function, background=20, random_state=0).fit(data.data)


def _check_basic(disp, returned):
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    assert returned is disp
    assert isinstance(disp.figure_, Figure)
    axes = np.atleast_1d(np.asarray(disp.ax_, dtype=object))
    assert all(isinstance(a, Axes) for a in axes)
    assert all(a.figure is disp.figure_ for a in axes)


def _ticklabels(ax, axis="y"):
    ticks = ax.get_yticklabels() if axis == "y" else ax.get_xticklabels()
    return [t.get_text() for t in ticks]


# -- AttributionDisplay -------------------------------------------------------------
@pytest.mark.parametrize("methods", [["shapley"], METHODS])
def test_attribution_from_estimator_bar(pyplot, data, explainer, methods):
    disp = AttributionDisplay.from_estimator(explainer, data.data[:1], methods=methods)
    _check_basic(disp, disp.plot(kind="bar"))
    assert sorted(disp.artists_) == sorted(methods)
    assert all(len(bars) == 6 for bars in disp.artists_.values())
    assert set(_ticklabels(disp.ax_)) == {f"x{j}" for j in range(6)}
    if "shapley" in methods:
        fx = data.function(data.data[:1])[0]
        assert f"f(x) = {fx:.3g}" in disp.ax_.get_title()
    assert (disp.ax_.get_legend() is not None) == (len(methods) > 1)


@pytest.mark.parametrize("methods", [["shapley"], METHODS])
def test_attribution_from_estimator_beeswarm(pyplot, data, methods):
    # a plain model: a new Explainer is fitted on X
    disp = AttributionDisplay.from_estimator(
        data.function, data.data[:15], methods=methods, background=10, random_state=0
    )
    _check_basic(disp, disp)
    for coll in disp.artists_.values():
        assert coll.get_offsets().shape == (15 * 6, 2)
    assert "15 rows" in disp.ax_.get_title()


@pytest.mark.parametrize("methods", [["shapley"], METHODS])
def test_attribution_from_result(pyplot, data, explainer, methods):
    bunch = explainer.explain(data.data[:4], methods=methods)
    disp = AttributionDisplay.from_result(
        bunch, group_names=list("abcdef"), max_groups=3
    )
    _check_basic(disp, disp)
    assert len(_ticklabels(disp.ax_)) == 3
    assert set(_ticklabels(disp.ax_)) <= set("abcdef")
    dec = explainer.decompose(data.data[:1])
    disp = AttributionDisplay.from_decomposition(dec, methods=methods)
    assert sorted(disp.artists_) == sorted(methods)
    assert set(_ticklabels(disp.ax_)) == set(dec.group_names)
    # a plain array
    disp = AttributionDisplay.from_result(bunch[methods[0]][0], methods=[methods[0]])
    assert list(disp.artists_) == [methods[0]]


def test_attribution_draws_on_given_ax(pyplot):
    fig, ax = pyplot.subplots()
    disp = AttributionDisplay.from_result(np.array([[1.0, -2.0]]), ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    with pytest.raises(ValueError, match="kind"):
        disp.plot(kind="violin")


def test_attribution_multi_output_needs_output(pyplot):
    phi = np.zeros((2, 3, 2))
    with pytest.raises(ValueError, match="output"):
        AttributionDisplay.from_result(phi)
    disp = AttributionDisplay.from_result(phi, output=1)
    assert disp.order_.size == 3


# -- DisagreementDisplay ------------------------------------------------------------
@pytest.mark.parametrize("methods", [["shapley"], METHODS])
def test_disagreement_from_estimator(pyplot, data, explainer, methods):
    disp = DisagreementDisplay.from_estimator(
        explainer, data.data[:10], methods=methods
    )
    _check_basic(disp, disp.plot(annotate=False))
    n = len(methods)
    assert disp.matrix.shape == (n, n)
    assert np.allclose(np.diag(disp.matrix), 0)
    assert _ticklabels(disp.ax_) == methods
    assert disp.im_.get_array().shape == (n, n)
    assert disp.colorbar_ is not None


def test_disagreement_of_metrics(pyplot, data, explainer):
    disp = DisagreementDisplay.from_estimator(
        explainer,
        data.data[:5],
        methods=METHODS,
        kind="metrics",
        metrics=["sensitivity_n", "insertion_error", "deletion_error"],
        random_state=0,
    )
    _check_basic(disp, disp)
    assert disp.kind == "metrics"
    assert _ticklabels(disp.ax_) == [
        "sensitivity_n",
        "insertion_error",
        "deletion_error",
    ]
    assert "metrics" in disp.ax_.get_title()


@pytest.mark.parametrize("methods", [["shapley"], METHODS])
def test_disagreement_from_result(pyplot, data, explainer, methods):
    bunch = explainer.explain(data.data[:5], methods=methods)
    disp = DisagreementDisplay.from_result(bunch, measure="spearman")
    _check_basic(disp, disp)
    assert disp.names == methods
    if len(methods) > 1:
        res = disagreement(dict(bunch), measure="l2")
        disp2 = DisagreementDisplay.from_result(res)
        assert np.allclose(disp2.matrix, res.pairwise)
        # annotations hold the values
        assert disp2.text_[0, 1].get_text() == format(res.pairwise[0, 1], ".2g")
    dec = explainer.decompose(data.data[:5])
    disp = DisagreementDisplay.from_decomposition(dec, methods=methods)
    assert disp.matrix.shape == (len(methods),) * 2


# -- InteractionDisplay -------------------------------------------------------------
@pytest.mark.parametrize("kind", ["h2", ["pure", "arch_detect"]])
def test_interaction_from_estimator(pyplot, data, explainer, kind):
    disp = InteractionDisplay.from_estimator(
        explainer,
        data.data,
        kind=kind,
        grouping=data.groups,
        max_samples=30,
        random_state=0,
    )
    _check_basic(disp, disp.plot())
    kinds = [kind] if isinstance(kind, str) else kind
    assert list(disp.images_) == kinds
    assert len(disp.axes_) == len(kinds)
    assert len(disp.boxes_) == len(kinds) * len(data.groups)
    assert list(disp.order_) == [0, 1, 2, 3, 4, 5]
    for ax in disp.axes_:
        assert _ticklabels(ax) == [f"x{j}" for j in range(6)]
    # the interacting pairs (0, 1) and (2, 3) are the strongest
    matrix = disp.matrices[kinds[0]]
    assert matrix[0, 1] > matrix[0, 4] and matrix[2, 3] > matrix[2, 5]


def test_interaction_from_result(pyplot, data, explainer):
    H = interaction_matrix(explainer, data.data[:30])
    disp = InteractionDisplay.from_result(
        H, names=[f"x{j}" for j in range(6)], grouping=[[1, 0], [5], [2, 3], [4]]
    )
    _check_basic(disp, disp)
    assert list(disp.order_) == [0, 1, 2, 3, 4, 5]
    assert len(disp.boxes_) == 4
    res = h_statistic(explainer, data.data[:30])
    disp = InteractionDisplay.from_result(
        {"h2": res.pairwise, "again": res.pairwise}, names=res.group_names
    )
    assert isinstance(disp.ax_, np.ndarray) and disp.ax_.size == 2
    disp = InteractionDisplay.from_result(res)
    assert list(disp.images_) == ["h2"]
    with pytest.raises(ValueError, match="partition"):
        InteractionDisplay.from_result(H, grouping=[[0, 1]])


# -- GroupingDisplay ----------------------------------------------------------------
@pytest.mark.parametrize("methods", [["shapley"], ["arch", "occlusion"]])
def test_grouping_from_estimator(pyplot, data, methods):
    disp = GroupingDisplay.from_estimator(
        data.function,
        data.data[:40],
        methods=methods,
        metrics=["insertion_error"],
        max_samples=30,
        background=10,
        max_groups=6,
        random_state=0,
        kind="both",
    )
    _check_basic(disp, disp)
    assert list(disp.n_groups) == [6, 5, 4, 3, 2, 1]
    assert len(disp.annotations_) == 5
    assert "+" in disp.annotations_[0].get_text()
    assert len(disp.axes_) == 3
    expected = {"loss", "insertion_error"} | (
        {"disagreement"} if len(methods) > 1 else set()
    )
    assert set(disp.lines_) == expected
    assert len(disp.tree_lines_) == 5
    # the loss falls to 0 once the true blocks are merged
    assert disp.loss[-1] == pytest.approx(0, abs=1e-9)
    if len(methods) > 1:
        d = disp.curves["disagreement"]
        assert d[0] > 0 and d[2] == pytest.approx(0, abs=1e-9)


def test_grouping_from_result(pyplot, data):
    grouper = AdaptiveGrouper(
        data.function, max_samples=30, rel_tol=0, random_state=0
    ).fit(data.data)
    disp = GroupingDisplay.from_result(grouper)
    _check_basic(disp, disp)
    assert len(disp.annotations_) == len(grouper.history_)
    assert disp.ax_.get_xlabel() == "number of groups"
    disp = GroupingDisplay.from_result(grouper.history_, kind="dendrogram")
    assert len(disp.tree_lines_) == len(grouper.history_)
    # from a history alone, the leaves are the merged groups
    assert set(_ticklabels(disp.ax_, "x")) == {"x0", "x1", "x2", "x3"}
    disp = GroupingDisplay.from_result(grouper, kind="dendrogram")
    assert set(_ticklabels(disp.ax_, "x")) == {f"x{j}" for j in range(6)}
    curves = {"custom": np.linspace(1, 0, len(grouper.history_) + 1)}
    disp = GroupingDisplay.from_grouper(grouper, curves=curves, kind="both")
    assert set(disp.lines_) == {"loss", "custom"}
    with pytest.raises(ValueError, match="one value per point"):
        GroupingDisplay.from_result(grouper, curves={"bad": [1.0]})


def test_grouping_from_explainer_with_grouper(pyplot, data):
    explainer = Explainer(
        data.function,
        groups=AdaptiveGrouper(max_samples=30, n_groups=2),
        background=10,
        random_state=0,
    ).fit(data.data)
    disp = GroupingDisplay.from_estimator(explainer, data.data)
    assert list(disp.n_groups) == [6, 5, 4, 3, 2]


# -- SaliencyDisplay ----------------------------------------------------------------
@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    model = LogisticRegression(max_iter=300).fit(X[:400] / 16, y[:400])
    return X / 16, model


@pytest.mark.parametrize("methods", [["shapley"], METHODS])
def test_saliency_from_estimator(pyplot, digits, methods):
    X, model = digits
    image = X[0].reshape(8, 8)
    disp = SaliencyDisplay.from_estimator(model, image, patch_size=4, methods=methods)
    _check_basic(disp, disp.plot(per_pixel=True))
    assert len(disp.axes_) == 1 + len(methods)
    assert list(disp.images_) == ["image"] + methods
    assert len(disp.boundaries_) == 1 + len(methods)
    assert len(disp.boundaries_[0].get_segments()) == 16
    assert [ax.get_title() for ax in disp.axes_[1:]] == methods
    assert "explained class" in disp.axes_[0].get_title()
    # shapley attributions sum to f(x) - f(baseline) for the predicted class,
    # on the default scale: the centred log-probabilities
    phi = disp.attributions["shapley"]
    target = model.predict(X[:1])[0]
    k = list(model.classes_).index(target)

    def clr(images):
        logp = np.log(np.clip(model.predict_proba(images), np.finfo(float).eps, 1))
        return (logp - logp.mean(axis=1, keepdims=True))[0, k]

    gap = clr(X[:1]) - clr(np.zeros((1, 64)))
    assert phi.sum() == pytest.approx(gap)


@pytest.mark.parametrize("methods", [["shapley"], METHODS])
def test_saliency_from_result(pyplot, methods):
    image = np.random.RandomState(0).rand(6, 6, 3)
    labels = np.repeat(np.repeat(np.arange(4).reshape(2, 2), 3, axis=0), 3, axis=1)
    attributions = {m: np.arange(4.0) - i for i, m in enumerate(methods)}
    disp = SaliencyDisplay.from_result(image, labels, attributions, title="t")
    _check_basic(disp, disp)
    assert disp.axes_[0].get_title() == "t"
    assert disp.colorbar_ is not None
    for m in methods:
        assert np.array_equal(disp.images_[m].get_array(), attributions[m][labels])
    with pytest.raises(ValueError, match="match the image"):
        SaliencyDisplay.from_result(image, labels[:5], attributions)


# -- PartialDependenceDisplay ------------------------------------------------------
@pytest.mark.parametrize("groups", [[0], [0, [0, 1], [2, 3, 4]]])
def test_partial_dependence_from_estimator(pyplot, data, groups):
    disp = PartialDependenceDisplay.from_estimator(
        data.function, data.data, groups, grid_resolution=10, n_ice=20, random_state=0
    )
    _check_basic(disp, disp.plot(kind="average"))
    disp.plot(kind="both")
    assert len(disp.axes_) == len(groups)
    assert disp.axes_[0].get_xlabel() == "x0"
    assert len(disp.lines_["x0"]) == 21  # 20 ICE lines and the average
    if len(groups) > 1:
        assert "x0, x1" in disp.contours_
        assert disp.axes_[2].get_xlabel() == "observed joint values, sorted by PD"
        assert len(disp.lines_["x2, x3, x4"]) == 21


@pytest.mark.parametrize("n_groups", [1, 2])
def test_partial_dependence_from_result(pyplot, data, explainer, n_groups):
    results = [
        partial_dependence(
            data.function, data.data, cols, grid_resolution=8, kind="both"
        )
        for cols in ([1], [4, 5])[:n_groups]
    ]
    disp = PartialDependenceDisplay.from_result(
        results, feature_names=list(data.feature_names), kind="average"
    )
    _check_basic(disp, disp)
    assert disp.group_names[0] == "x1"
    assert len(disp.lines_["x1"]) == 1
    # from an Explainer: its model is used
    disp = PartialDependenceDisplay.from_estimator(
        explainer, data.data, {"g": [5]}, grid_resolution=5, kind="individual"
    )
    assert disp.group_names == ["g"]


# -- matplotlib is optional --------------------------------------------------------
def test_import_does_not_import_matplotlib():
    code = (
        "import sys, skdecomp; "
        "assert skdecomp.plot.AttributionDisplay; "
        "assert 'matplotlib' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"skdecomp\[plot\]"):
        AttributionDisplay.from_result(np.ones((1, 2)))


@pytest.mark.parametrize(
    "module",
    [
        f"skdecomp._plot.{m}"
        for m in (
            "attribution",
            "disagreement",
            "grouping",
            "interaction",
            "partial_dependence",
            "saliency",
        )
    ],
)
def test_docstring_examples(pyplot, module):
    import doctest
    import importlib

    result = doctest.testmod(
        importlib.import_module(module),
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
    )
    assert result.attempted > 0 and result.failed == 0
