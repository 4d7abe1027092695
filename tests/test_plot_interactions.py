"""The top-terms view of InteractionDisplay: what is drawn, and bad input."""

import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

from skdecomp import Explainer, InteractionExplanation  # noqa: E402
from skdecomp.plot import InteractionDisplay  # noqa: E402


@pytest.fixture
def pyplot():
    import matplotlib.pyplot as plt

    plt.close("all")
    yield plt
    plt.close("all")


def _multilinear(Z):
    # Moebius components with a zero background: 2 x0, 1.5 x1 x2, -x0 x1 x3
    Z = np.asarray(Z, dtype=float)
    return 2 * Z[:, 0] + 1.5 * Z[:, 1] * Z[:, 2] - Z[:, 0] * Z[:, 1] * Z[:, 3]


@pytest.fixture(scope="module")
def moebius():
    X = np.random.default_rng(0).normal(size=(30, 4))
    explainer = Explainer(
        _multilinear, groups={"a": [0], "b": [1], "c": [2], "d": [3]},
        background=np.zeros((1, 4)),
    ).fit(X)
    return X[:20], explainer.interactions(X[:20], index="Moebius", max_order=3)


def _drawn(disp):
    widths = np.array([bar.get_width() for bar in disp.bars_])
    means = np.asarray(disp.means_.get_xdata(), dtype=float)
    rows = {}
    for x, y in np.asarray(disp.dots_.get_offsets()):
        rows.setdefault(int(round(y)), set()).add(int(disp.columns_[int(round(x))]))
    members = [tuple(sorted(rows.get(i, ()))) for i in range(len(widths))]
    return widths, means, members


def test_bars_are_the_summary_and_the_closed_forms(pyplot, moebius):
    X, res = moebius
    disp = InteractionDisplay.from_result(res, kind="terms", top=5)
    widths, means, members = _drawn(disp)
    table = res.summary(top=5)
    np.testing.assert_allclose(widths, table["mean_abs"], atol=1e-12)
    np.testing.assert_allclose(means, table["mean"], atol=1e-12)
    # independent: the three non-zero components in closed form, then zeros
    comps = {(0,): 2 * X[:, 0], (1, 2): 1.5 * X[:, 1] * X[:, 2],
             (0, 1, 3): -X[:, 0] * X[:, 1] * X[:, 3]}
    ranked = sorted(comps, key=lambda t: -np.abs(comps[t]).mean())
    assert members[:3] == ranked
    np.testing.assert_allclose(widths[:3], [np.abs(comps[t]).mean() for t in ranked],
                               rtol=1e-12)
    np.testing.assert_allclose(means[:3], [comps[t].mean() for t in ranked], rtol=1e-12)
    assert np.all(widths[3:] == 0)
    # the dot-matrix columns are the groups in the terms drawn, by name
    dots_ax, bar_ax = disp.axes_
    assert disp.ax_ is bar_ax
    assert [t.get_text() for t in dots_ax.get_xticklabels()] == [
        "abcd"[g] for g in disp.columns_]
    assert list(disp.columns_) == sorted({g for t in members for g in t})
    # strongest at the top; orders in the legend; the index in the labels
    assert bar_ax.get_ylim()[0] > bar_ax.get_ylim()[1]
    legend = [t.get_text() for t in bar_ax.get_legend().get_texts()]
    assert {"1 group", "2 groups", "3 groups", "signed mean"} <= set(legend)
    assert "Moebius" in bar_ax.get_xlabel() and "20 rows" in bar_ax.get_xlabel()
    assert len(disp.terms) == 5 and list(disp.terms.index) == list(table.index)


def test_any_subset_of_terms_and_any_order():
    # a sparse result: only some terms, up to four groups, built by hand
    rng = np.random.default_rng(1)
    terms = [(), (0,), (2, 5), (1, 3, 4), (0, 2, 4, 6)]
    values = rng.normal(size=(7, len(terms))) * [1, 1, 3, 0.5, 2]
    names = [f"g{k}" for k in range(8)]
    res = InteractionExplanation(values, terms, np.zeros(7), names, "k-SII", 4)
    import matplotlib.pyplot as plt

    try:
        disp = InteractionDisplay.from_result(res, kind="terms")
        widths, means, members = _drawn(disp)
        want = np.abs(values[:, 1:]).mean(axis=0)
        order = np.argsort(-want, kind="stable")
        np.testing.assert_allclose(widths, want[order], rtol=1e-12)
        np.testing.assert_allclose(means, values[:, 1:].mean(axis=0)[order], rtol=1e-12)
        assert members == [terms[1:][j] for j in order]
        assert list(disp.columns_) == [0, 1, 2, 3, 4, 5, 6]  # g7 is in no term
        assert "Strongest 4" in disp.ax_.get_title()
    finally:
        plt.close("all")


def test_top_default_and_axes(pyplot):
    values = np.arange(1.0, 16.0)[None, :] * np.ones((2, 1))
    pairs = [(j, k) for j in range(3) for k in range(j + 1, 6)]
    terms = [()] + [(k,) for k in range(6)] + pairs[:8]
    res = InteractionExplanation(values, terms, np.zeros(2), list("abcdef"), "SII", 2)
    disp = InteractionDisplay.from_result(res, kind="terms")
    assert len(disp.bars_) == 10
    assert disp.bars_[0].get_width() == 15.0  # the values of the 14 terms are 2..15
    # one Axes is split in two; two Axes are used as they are
    fig, ax = pyplot.subplots()
    disp = InteractionDisplay.from_result(res, kind="terms", top=3, ax=ax)
    assert disp.figure_ is fig and not ax.axison and len(disp.bars_) == 3
    fig, axes = pyplot.subplots(1, 2)
    disp = InteractionDisplay.from_result(res, kind="terms", top=20, ax=axes)
    assert list(disp.axes_) == list(axes) and len(disp.bars_) == 14
    with pytest.raises(ValueError, match="needs one Axes .* or two"):
        InteractionDisplay.from_result(res, kind="terms", ax=[ax, ax, ax])


def test_all_zero_terms_say_so(pyplot):
    # round-off next to a base value of 5
    res = InteractionExplanation(np.full((3, 4), 1e-18), [(), (0,), (1,), (0, 1)],
                                 np.full(3, 5.0), ["a", "b"], "k-SII", 2)
    disp = InteractionDisplay.from_result(res, kind="terms")
    assert all(bar.get_width() == 0 for bar in disp.bars_)
    assert "no interaction" in disp.ax_.get_title()


def test_matrix_view_is_still_the_default(pyplot, moebius):
    _, res = moebius
    disp = InteractionDisplay.from_result(res)
    assert len(disp.images_) == 1 and disp.terms is None
    with pytest.raises(ValueError, match="holds no terms"):
        disp.plot(kind="terms")
    terms = InteractionDisplay.from_result(res, kind="terms")
    with pytest.raises(ValueError, match="holds no matrices"):
        terms.plot()


def test_bad_input(pyplot, moebius):
    _, res = moebius
    with pytest.raises(ValueError, match=r"kind must be one of \['matrix', 'terms'\]"):
        InteractionDisplay.from_result(res, kind="bars")
    for top in (0, -1, 2.5, True, "5"):
        with pytest.raises(ValueError, match="top must be a positive int"):
            InteractionDisplay.from_result(res, kind="terms", top=top)
    with pytest.raises(ValueError, match="top sets the number of bars"):
        InteractionDisplay.from_result(res, top=3)
    for extra in ({"grouping": [[0, 1], [2, 3]]}, {"variance": 2.0}):
        with pytest.raises(ValueError, match="grouping and variance apply to the heatmap"):
            InteractionDisplay.from_result(res, kind="terms", **extra)
    with pytest.raises(TypeError, match="InteractionExplanation"):
        InteractionDisplay.from_result(np.eye(3), kind="terms")
    bad = res.values.copy()
    bad[2, 5] = np.nan
    nan = InteractionExplanation(bad, res.terms, res.base_values, res.feature_names,
                                 "Moebius", 3)
    with pytest.raises(ValueError, match=r"not finite .*'a x b'"):
        InteractionDisplay.from_result(nan, kind="terms")
    with pytest.raises(ValueError, match="no rows"):
        InteractionDisplay.from_result(res[np.arange(0)], kind="terms")
    empty = InteractionExplanation(np.ones((2, 1)), [()], np.ones(2), ["a"], "SV", 1)
    with pytest.raises(ValueError, match="no term"):
        InteractionDisplay.from_result(empty, kind="terms")
    two = InteractionExplanation(np.ones((2, 3, 2)), [(), (0,), (1,)], np.ones((2, 2)),
                                 ["a", "b"], "SV", 1)
    with pytest.raises(ValueError, match="2 outputs; explain one output"):
        InteractionDisplay.from_result(two, kind="terms")
