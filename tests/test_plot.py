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
    METHOD_COLORS,
    AttributionDisplay,
    DisagreementDisplay,
    GroupingDisplay,
    InteractionDisplay,
    PartialDependenceDisplay,
    SaliencyDisplay,
    method_color,
)
from skdecomp._plot._base import format_value  # noqa: E402

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
    # one row: each label holds the group's value in the row
    labels = _ticklabels(disp.ax_)
    assert {t.split(" = ")[0] for t in labels} == {f"x{j}" for j in range(6)}
    for j in range(6):
        assert f"x{j} = {format_value(data.data[0, j])}" in labels
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
    assert disp.kind_ == "beeswarm"
    assert len(disp.axes_) == len(methods)  # one panel per method
    for coll in disp.artists_.values():
        assert coll.get_offsets().shape == (15 * 6, 2)
    for ax, method in zip(disp.axes_, methods):
        assert ax.get_title().startswith(method) and "15 rows" in ax.get_title()
    assert disp.colorbar_ is not None


@pytest.mark.parametrize("methods", [["shapley"], METHODS])
def test_attribution_from_result(pyplot, data, explainer, methods):
    bunch = explainer.explain(data.data[:4], methods=methods)
    disp = AttributionDisplay.from_result(
        bunch, group_names=list("abcdef"), max_groups=3
    )
    _check_basic(disp, disp)
    assert len(_ticklabels(disp.axes_[0])) == 3
    assert set(_ticklabels(disp.axes_[0])) <= set("abcdef")
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


def _explanation(n=40, random_state=0):
    """An Explanation by hand: a numeric group, a group of two columns, a category."""
    from skdecomp import Explanation

    rng = np.random.RandomState(random_state)
    a = rng.normal(size=n)
    values = np.column_stack([2 * a, rng.normal(size=n), rng.normal(size=n) / 2])
    data = np.empty((n, 3), dtype=object)
    data[:, 0] = a
    data[:, 1] = np.nan
    data[:, 2] = rng.choice(["red", "green"], n)
    return Explanation(
        values,
        1.5,
        data,
        feature_names=["a", "b:c", "colour"],
        groups=[["a"], ["b", "c"], ["colour"]],
        method="shapley",
    )


def test_beeswarm_colours_follow_feature_values(pyplot, data, explainer):
    rows = data.data[:30]
    disp = AttributionDisplay.from_explanation(explainer.explain(rows)["shapley"])
    assert disp.kind_ == "beeswarm"
    coll = disp.artists_["shapley"]
    shades = np.asarray(coll.get_array()).reshape(disp.order_.size, 30)
    for line, k in zip(shades, disp.order_):
        values = rows[:, k]
        lo, hi = np.percentile(values, [5, 95])
        # the colour scale is the value scaled to the group's range
        assert np.allclose(line, np.clip((values - lo) / (hi - lo), 0, 1))
        # higher values, warmer colours
        assert np.all(np.diff(line[np.argsort(values)]) >= 0)
    colors = coll.to_rgba(coll.get_array())
    low, high = np.argmin(shades[0]), np.argmax(shades[0])
    assert not np.allclose(colors[low], colors[high])
    labels = [t.get_text() for t in disp.colorbar_.ax.get_yticklabels()]
    assert labels == ["low", "high"]
    assert disp.colorbar_.ax.get_ylabel() == "feature value"


def test_beeswarm_grey_for_several_columns_and_categories(pyplot):
    from matplotlib.colors import to_rgba

    from skdecomp._plot._base import NEUTRAL_COLOR

    expl = _explanation()
    disp = AttributionDisplay.from_explanation(expl, kind="beeswarm")
    coll = disp.artists_["shapley"]
    shades = np.asarray(coll.get_array()).reshape(3, -1)
    groups = list(disp.order_)
    assert np.isfinite(shades[groups.index(0)]).all()
    assert np.isnan(shades[groups.index(1)]).all()  # several columns
    assert np.isnan(shades[groups.index(2)]).all()  # categorical
    grey = to_rgba(NEUTRAL_COLOR, 0.9)
    rgba = coll.to_rgba(shades[groups.index(2)], alpha=0.9)
    assert np.allclose(rgba, grey)
    notes = [t.get_text() for t in disp.figure_.legends[0].get_texts()]
    assert "several columns" in notes[0] and "categorical" in notes[0]


def test_waterfall_from_base_value_to_prediction(pyplot, data, explainer):
    rows = data.data[:5]
    result = explainer.explain(rows, methods=["shapley", "occlusion"])
    fx = data.function(rows)
    base = float(np.ravel(explainer.expected_value_)[0])
    disp = AttributionDisplay.from_explanation(
        result["shapley"], kind="waterfall", row=2
    )
    bars = disp.artists_["shapley"].patches
    starts = [b.get_x() for b in bars]
    ends = [b.get_x() + b.get_width() for b in bars]
    assert starts[0] == pytest.approx(base)  # the bottom bar starts at E f
    assert ends[-1] == pytest.approx(fx[2])  # the top bar ends at f(x)
    assert np.allclose(starts[1:], ends[:-1])  # one path
    labels = _ticklabels(disp.ax_)
    for j in range(6):
        assert f"x{j} = {format_value(rows[2, j])}" in labels
    # bars coloured by sign
    from skdecomp._plot._base import NEGATIVE_COLOR, POSITIVE_COLOR
    from matplotlib.colors import to_rgba

    for bar in bars:
        expected = POSITIVE_COLOR if bar.get_width() > 0 else NEGATIVE_COLOR
        assert np.allclose(bar.get_facecolor(), to_rgba(expected))
    texts = [t.get_text() for t in disp.ax_.texts]
    assert f"E[f(X)] = {base:.4g}" in texts and f"f(x) = {fx[2]:.4g}" in texts
    # a method whose attributions do not add up ends at f(x) through a grey bar
    disp = AttributionDisplay.from_explanation(
        result, methods=["occlusion"], kind="waterfall", row=2, max_groups=4
    )
    bars = disp.artists_["occlusion"].patches
    assert len(bars) == 5  # 3 groups, the 3 others summed, the rest
    assert bars[0].get_x() == pytest.approx(base)
    assert bars[-1].get_x() + bars[-1].get_width() == pytest.approx(fx[2])
    labels = _ticklabels(disp.ax_)
    assert labels[0] == "3 other groups"
    assert labels[-1].replace("\n", " ") == "not attributed by occlusion"


def test_waterfall_is_the_default_for_one_row(pyplot):
    expl = _explanation()
    disp = AttributionDisplay.from_explanation(expl[3])
    assert disp.kind_ == "waterfall"
    labels = _ticklabels(disp.ax_)
    # the category is named, the group of two columns has no value
    assert f"colour = {expl.data[3, 2]}" in labels and "b:c" in labels


def test_bar_summary_is_mean_absolute_attribution(pyplot, data, explainer):
    result = explainer.explain(data.data[:20], methods=METHODS)
    disp = AttributionDisplay.from_explanation(result, kind="bar")
    assert disp.ax_.get_xlabel().startswith("mean |attribution|")
    for method, bars in disp.artists_.items():
        mean_abs = np.abs(result[method].values).mean(axis=0)[disp.order_]
        assert np.allclose([b.get_width() for b in bars], mean_abs)
    assert disp.ax_.get_legend() is not None
    # one row of it, on request
    disp = AttributionDisplay.from_result(result, kind="bar", row=4)
    widths = [b.get_width() for b in disp.artists_["shapley"]]
    assert np.allclose(widths, result["shapley"].values[4, disp.order_])


def test_from_explanation_errors(pyplot, data, explainer):
    result = explainer.explain(data.data[:3])
    with pytest.raises(ValueError, match="kind"):
        AttributionDisplay.from_explanation(result, kind="violin")
    with pytest.raises(ValueError, match="not in the result"):
        AttributionDisplay.from_explanation(result, methods=["lime"])
    with pytest.raises(ValueError, match="row"):
        AttributionDisplay.from_explanation(result, kind="waterfall", row=3)


# -- one colour per method ----------------------------------------------------------
def test_every_method_has_a_colour():
    from skdecomp._methods import EXACT_METHODS, SAMPLED_METHODS

    for name in EXACT_METHODS + SAMPLED_METHODS:
        assert name in METHOD_COLORS
    assert method_color("pfi") == method_color("occlusion")
    assert method_color("pdp") == method_color("arch")
    canonical = [m for m in EXACT_METHODS + SAMPLED_METHODS if m not in ("pfi", "pdp")]
    assert len({method_color(m) for m in canonical}) == len(canonical)
    # other names: a colour fixed by the name
    assert method_color("my method") == method_color("my method")


def test_same_method_same_colour_in_every_display(pyplot, data, explainer, digits):
    from matplotlib.colors import to_rgba

    rows = data.data[:10]
    result = explainer.explain(rows, methods=METHODS)
    bars = AttributionDisplay.from_explanation(result, kind="bar")
    swarm = AttributionDisplay.from_explanation(result, kind="beeswarm")
    dis = DisagreementDisplay.from_result(result)
    X, model = digits
    sal = SaliencyDisplay.from_estimator(
        model, X[0].reshape(8, 8), patch_size=4, methods=METHODS[::-1]
    )
    ticks = {t.get_text(): t.get_color() for t in dis.ax_.get_yticklabels()}
    titles = {ax.get_title(): ax.title.get_color() for ax in sal.axes_[1:]}
    swarm_titles = {
        ax.get_title().split(",")[0]: ax.title.get_color() for ax in swarm.axes_
    }
    for m in METHODS:
        color = to_rgba(method_color(m))
        assert np.allclose(bars.artists_[m].patches[0].get_facecolor(), color)
        assert np.allclose(to_rgba(ticks[m]), color)
        assert np.allclose(to_rgba(titles[m]), color)
        assert np.allclose(to_rgba(swarm_titles[m]), color)


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


def test_disagreement_is_divided_by_the_variance_of_the_prediction(
    pyplot, data, explainer
):
    rows = data.data[:12]
    result = explainer.explain(rows, methods=METHODS)
    raw = disagreement({m: e.values for m, e in result.items()}, measure="l2")
    total = disagreement(dict(result), normalize="sum").pairwise
    variance = np.var(data.function(rows))
    # by default as in the report: root mean square distance over the spread, in %
    spread = DisagreementDisplay.from_estimator(explainer, rows, methods=METHODS)
    assert spread.variance == pytest.approx(variance)
    assert np.allclose(spread.matrix, 100 * np.sqrt(total / variance))
    assert "% of the prediction spread" in spread.colorbar_.ax.get_ylabel()
    assert np.allclose(DisagreementDisplay.from_result(result).matrix, spread.matrix)
    disp = DisagreementDisplay.from_estimator(
        explainer, rows, methods=METHODS, scale="variance"
    )
    assert disp.variance == pytest.approx(variance)
    assert np.allclose(disp.matrix, raw.pairwise / variance)
    label = disp.colorbar_.ax.get_ylabel().replace("\n", " ")
    assert label == "disagreement / variance of the prediction"
    # the same numbers from the Explanations: Shapley values give f(x)
    again = DisagreementDisplay.from_result(result, scale="variance")
    assert np.allclose(again.matrix, disp.matrix)
    # raw values on request, with the vocabulary of metrics.disagreement
    raw_disp = DisagreementDisplay.from_estimator(
        explainer, rows, methods=METHODS, scale=None
    )
    assert raw_disp.variance is None
    assert np.allclose(raw_disp.matrix, raw.pairwise)
    assert "not normalised" in raw_disp.colorbar_.ax.get_ylabel()
    summed = DisagreementDisplay.from_result(result, normalize="sum", scale="variance")
    assert np.allclose(summed.matrix, total / variance)
    # a number divides by itself; unitless measures are never divided
    assert np.allclose(
        DisagreementDisplay.from_result(result, scale=2.0).matrix, raw.pairwise / 2
    )
    rank = DisagreementDisplay.from_result(result, measure="spearman")
    assert np.allclose(
        rank.matrix, disagreement(dict(result), measure="spearman").pairwise
    )
    with pytest.raises(ValueError, match="scale"):
        DisagreementDisplay.from_result(result, scale="std")


def test_disagreement_of_identical_methods_is_uniform(pyplot):
    phi = np.random.RandomState(0).normal(size=(5, 3))
    disp = DisagreementDisplay.from_result(
        {"shapley": phi, "banzhaf": phi + 1e-17}, scale=1.0
    )
    colors = disp.im_.to_rgba(disp.im_.get_array())
    assert np.allclose(colors[0, 1], colors[1, 0])
    assert np.allclose(colors[0, 1], disp.im_.cmap(0.0))
    assert disp.text_[0, 1].get_text() == "0"
    assert "0 up to round-off" in disp.ax_.get_title()


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


def test_round_off_interactions_are_one_uniform_colour(pyplot):
    names = ["age:bmi:s5:bp:s1:s6:sex", "s2", "s3", "s4"]
    H = np.full((4, 4), 1e-28)
    np.fill_diagonal(H, 0.0)
    disp = InteractionDisplay.from_result({"h2": H}, names=names)
    im = disp.images_["h2"]
    off = ~np.eye(4, dtype=bool)
    colors = im.to_rgba(im.get_array())[off]
    assert np.allclose(colors, colors[0])  # one colour
    assert np.allclose(colors[0], im.cmap(0.0))  # the colour of 0
    assert "no interaction" in disp.ax_.get_title()
    texts = [t.get_text() for t in disp.ax_.texts]
    assert texts and set(texts) == {"0"}
    # in squared units of the output, round-off is relative to Var f
    disp = InteractionDisplay.from_result({"pure": H * 1e6}, variance=1e-3)
    assert "no interaction" in disp.ax_.get_title()
    disp = InteractionDisplay.from_result({"pure": H * 1e6}, variance=1e-12)
    assert "no interaction" not in disp.ax_.get_title()


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
    assert [a.get_text() for a in disp.annotations_] == ["1", "2", "3", "4", "5"]
    key = [t.get_text() for t in disp.merge_key_.get_texts()]
    assert len(key) == 5 and all("+" in k for k in key)
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


def test_grouping_tradeoff_draws_the_path(pyplot, data):
    # a price no merge pays: the path goes on past the stop at the columns
    grouper = AdaptiveGrouper(data.function, max_samples=30, group_penalty=10.0,
                              random_state=0).fit(data.data)
    disp = GroupingDisplay.from_result(grouper, kind="tradeoff")
    path = grouper.path_
    x, y = disp.lines_["path"].get_data()
    np.testing.assert_array_equal(x, [p["largest_group"] for p in path])
    np.testing.assert_allclose(y, [100 * p["remaining_share"] for p in path])
    chosen = next(p for p in path if p["chosen"])
    cx, cy = disp.chosen_.get_data()
    assert (cx[0], cy[0]) == (chosen["largest_group"], 100 * chosen["remaining_share"])
    assert [a.get_text() for a in disp.annotations_] == [str(p["n_groups"]) for p in path]
    assert disp.ax_.get_xlabel() == "columns in the largest group"
    with pytest.raises(ValueError, match="path_"):
        GroupingDisplay.from_result(grouper.history_, kind="tradeoff")
    with pytest.raises(ValueError, match="tradeoff"):
        disp.plot(kind="trade-off")


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


# -- labels fit ----------------------------------------------------------------------
LONG = [
    "age:bmi:s5:bp:s1:s6:sex",
    "s2",
    "a_very_long_column_name:another_very_long_column_name:and_a_third_one",
    "shapley",
]


def _inside(artist, fig, renderer, tol=1.0):
    box = artist.get_window_extent(renderer)
    return (
        box.x0 >= fig.bbox.x0 - tol
        and box.y0 >= fig.bbox.y0 - tol
        and box.x1 <= fig.bbox.x1 + tol
        and box.y1 <= fig.bbox.y1 + tol
    )


def _long_displays():
    rng = np.random.RandomState(0)
    phi = {m: rng.normal(size=(30, 4)) for m in ("shapley", "banzhaf", "occlusion")}
    H = np.abs(rng.normal(size=(4, 4)))
    H = H + H.T
    np.fill_diagonal(H, 0)
    history = [
        {"groups": ([0], [1]), "names": (LONG[0], LONG[1]), "loss_before": 3.0,
         "loss_after": 2.0, "n_groups": 3},
        {"groups": ([0, 1], [2]), "names": (LONG[0] + ":" + LONG[1], LONG[2]),
         "loss_before": 2.0, "loss_after": 1.0, "n_groups": 2},
        {"groups": ([0, 1, 2], [3]), "names": ("everything", LONG[3]),
         "loss_before": 1.0, "loss_after": 0.0, "n_groups": 1},
    ]
    return {
        "disagreement": lambda: DisagreementDisplay.from_result(
            {"shapley": phi["shapley"], "integrated_gradients": phi["banzhaf"],
             "permutation_shap": phi["occlusion"]}
        ),
        "interaction": lambda: InteractionDisplay.from_result(H, names=LONG),
        "beeswarm": lambda: AttributionDisplay.from_result(phi, group_names=LONG),
        "bar": lambda: AttributionDisplay.from_result(
            phi, group_names=LONG, kind="bar"
        ),
        "waterfall": lambda: AttributionDisplay(
            {"shapley": phi["shapley"]}, LONG, expected_value=1.0
        ).plot(kind="waterfall"),
        "grouping": lambda: GroupingDisplay.from_result(history, kind="both"),
        "given_axes": _on_plain_figure,
        "partial_dependence": _partial_dependence_panels,
    }


def _on_plain_figure():
    """Two displays on a figure made without a layout engine (as the report does)."""
    import matplotlib.pyplot as plt

    rng = np.random.RandomState(0)
    methods = ["shapley", "banzhaf", "occlusion", "arch"]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3), gridspec_kw={"width_ratios": [2, 1]})
    AttributionDisplay.from_result(
        {m: rng.rand(4) for m in methods}, group_names=LONG, kind="bar", ax=axes[0]
    )
    return DisagreementDisplay.from_result(
        {m: rng.normal(size=(5, 4)) for m in methods}, ax=axes[1]
    )


def _partial_dependence_panels():
    from sklearn.linear_model import LinearRegression

    X = np.random.RandomState(0).normal(scale=0.05, size=(50, 3))
    model = LinearRegression().fit(X, X @ [1.0, 2.0, 0.5])
    return PartialDependenceDisplay.from_estimator(
        model, X, [0, [1, 2]], grid_resolution=20, n_ice=5
    )


def _check_no_overlap(name, ticks, renderer):
    """Tick labels of one axis do not overlap.

    Labels written straight are compared by their boxes; rotated labels are
    parallel strips, apart when their anchors are further apart across the
    text than half the sum of their heights.
    """
    for a, b in zip(ticks[:-1], ticks[1:]):
        angle = np.deg2rad(a.get_rotation() % 180)
        if np.isclose(np.sin(angle), 0):
            box_a, box_b = (t.get_window_extent(renderer) for t in (a, b))
            overlap = box_a.overlaps(box_b)
        else:
            (xa, ya), (xb, yb) = (
                t.get_transform().transform(t.get_position()) for t in (a, b)
            )
            across = abs((xb - xa) * np.sin(angle) - (yb - ya) * np.cos(angle))
            height = [
                (t.get_text().count("\n") + 1) * t.get_fontsize() * 1.2
                * a.figure.dpi / 72
                for t in (a, b)
            ]
            overlap = across < sum(height) / 2
        assert not overlap, (
            f"{name}: tick labels {a.get_text()!r} and {b.get_text()!r} overlap"
        )


@pytest.mark.parametrize("name", list(_long_displays()))
def test_labels_inside_the_figure(pyplot, name):
    disp = _long_displays()[name]()
    fig = disp.figure_
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = [a for a in fig.axes if a.get_visible()]
    texts = []
    for ax in axes:
        for axis, (lo, hi) in [(ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())]:
            lo, hi = min(lo, hi), max(lo, hi)
            # the tick labels drawn: those within the view limits
            ticks = [
                tick.label1
                for tick in axis.get_major_ticks()
                if tick.label1.get_visible()
                and tick.label1.get_text()
                and lo <= tick.get_loc() <= hi
            ]
            _check_no_overlap(name, ticks, renderer)
            texts += ticks
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label]
        texts += [t for t in ax.texts if t.get_text()]
    for legend in fig.legends + [a.get_legend() for a in axes if a.get_legend()]:
        texts += legend.get_texts()
    texts = [t for t in texts if t.get_text() and t.get_visible()]
    assert texts
    outside = [t.get_text() for t in texts if not _inside(t, fig, renderer)]
    assert not outside, f"{name}: {outside} drawn outside the figure"
    # no title overlaps the text drawn in its panel
    for ax in axes:
        title = ax.title.get_window_extent(renderer)
        for t in ax.texts:
            if ax.title.get_text() and t.get_text():
                assert not title.overlaps(t.get_window_extent(renderer))


def test_long_names_are_wrapped_or_shortened_with_a_key(pyplot):
    disp = InteractionDisplay.from_result(np.zeros((4, 4)), names=LONG)
    labels = _ticklabels(disp.ax_)
    assert labels[0] == "age:bmi:s5:bp:s1:\ns6:sex"  # wrapped after a separator
    assert labels[2].endswith("[1]")  # shortened
    key = [t.get_text() for t in disp.figure_.legends[0].get_texts()]
    assert key[0].replace("\n", "").replace("    ", "") == "[1] " + LONG[2]


# -- PartialDependenceDisplay: grids --------------------------------------------------
@pytest.fixture(scope="module")
def frame():
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.RandomState(0)
    n = 200
    size = pd.Categorical(
        rng.choice(["small", "medium", "large"], n),
        categories=["small", "medium", "large"],
        ordered=True,
    )
    a = rng.normal(size=n)
    a[rng.rand(n) < 0.25] = np.nan
    X = pd.DataFrame({"a": a, "b": rng.normal(size=n), "size": size})
    y = np.nan_to_num(a) + X["b"] + X["size"].cat.codes.to_numpy()
    model = HistGradientBoostingRegressor(
        max_iter=30, categorical_features="from_dtype", random_state=0
    ).fit(X, y)
    return X, model


def test_partial_dependence_ignores_missing_values(pyplot, frame):
    X, model = frame
    disp = PartialDependenceDisplay.from_estimator(
        model, X, ["a", ["a", "b"], ["a", "b", "size"]], grid_resolution=10,
        random_state=0,
    )
    grid = disp.results[0]["grid_values"][0]
    assert grid.size == 10 and np.isfinite(grid.astype(float)).all()
    lines = disp.lines_["a"]
    assert lines and all(np.isfinite(line.get_ydata()).all() for line in lines)
    assert all(line.get_xdata().size == 10 for line in lines)
    assert np.isfinite(disp.contours_["a, b"].get_array()).all()
    assert not pd_isna(disp.results[2]["grid"]).any()
    # inspection.partial_dependence leaves the missing values out of its grid too
    res = partial_dependence(model, X, ["a"], grid_resolution=10, kind="both")
    assert np.isfinite(res.grid_values[0].astype(float)).all()
    disp = PartialDependenceDisplay.from_result(res, feature_names=list(X.columns))
    assert not disp.ax_.texts
    assert all(np.isfinite(line.get_ydata()).all() for line in disp.lines_["a"])


def pd_isna(values):
    import pandas as pd

    return np.asarray(pd.isna(pd.DataFrame(values)))


@pytest.mark.parametrize("ordered", [True, False])
def test_partial_dependence_keeps_the_category_order(pyplot, frame, ordered):
    X, model = frame
    X = X.copy()
    X["size"] = X["size"].cat.set_categories(
        ["small", "medium", "large"], ordered=ordered
    )
    disp = PartialDependenceDisplay.from_estimator(
        model, X, ["size", ["a", "size"]], grid_resolution=10, random_state=0
    )
    assert _ticklabels(disp.axes_[0], "x") == ["small", "medium", "large"]
    assert _ticklabels(disp.axes_[1], "x") == ["small", "medium", "large"]
    # the average follows the category codes (the model adds them)
    avg = disp.lines_["size"][-1].get_ydata()
    assert avg[0] < avg[1] < avg[2]


def test_round_off_attributions_are_drawn_as_zero(pyplot):
    phi = np.array([[3.0, 1e-17, -2.0]])
    disp = AttributionDisplay(
        {"shapley": phi}, ["a", "b", "c"], expected_value=150.0, prediction=[151.0]
    ).plot(kind="waterfall")
    bars = disp.artists_["shapley"].patches
    assert [b.get_width() for b in bars] == [0.0, -2.0, 3.0]
    labels = [t.get_text() for t in disp.ax_.texts]
    assert "+0" in labels and not any("e-17" in t for t in labels)


def test_grouping_display_marks_refused_merge():
    from skdecomp.plot import GroupingDisplay

    history = [
        {"groups": ([0], [1]), "names": ("a", "b"), "loss_before": 2.0,
         "loss_after": 1.0, "n_groups": 2, "accepted": True},
        {"groups": ([0, 1], [2]), "names": ("a:b", "c"), "loss_before": 1.0,
         "loss_after": 0.9, "n_groups": 1, "accepted": False},
    ]
    disp = GroupingDisplay.from_result(history)
    assert disp.lines_["loss"].get_xdata().tolist() == [3, 2]
    assert disp.lines_["refused"].get_xdata().tolist() == [2, 1]
    assert disp.lines_["refused"].get_linestyle() == "--"
    texts = [t.get_text() for t in disp.merge_key_.get_texts()]
    assert "refused" in texts[1] and "refused" not in texts[0]


def test_grouping_display_from_estimator_takes_any_fitted_grouper():
    import matplotlib.pyplot as plt

    from skdecomp import CorrelationGrouper, IShapGrouper, PairwiseGrouper
    from skdecomp.plot import GroupingDisplay

    X = np.random.RandomState(0).normal(size=(50, 4))

    def f(Z):
        Z = np.asarray(Z)
        return Z[:, 0] * Z[:, 1] + Z[:, 2]

    for grouper in (PairwiseGrouper(f, random_state=0),
                    IShapGrouper(f, test_samples=50, random_state=0)):
        with pytest.raises(ValueError, match="is not fitted, or keeps no merge path"):
            GroupingDisplay.from_estimator(grouper, X, kind="tradeoff")
        grouper.fit(X)
        disp = GroupingDisplay.from_estimator(grouper, X, kind="tradeoff")
        x, _ = disp.lines_["path"].get_data()
        assert list(x) == [p["largest_group"] for p in grouper.path_]
        with pytest.raises(ValueError, match="from_result"):
            GroupingDisplay.from_estimator(grouper, X, methods=["shapley"])
        plt.close("all")
    with pytest.raises(ValueError, match="uses no model"):
        GroupingDisplay.from_estimator(CorrelationGrouper().fit(X), X)
