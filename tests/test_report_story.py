"""The report tells one story: the two disagreements kept apart, every sentence
following the page's own numbers, verdicts that mean what they say."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skdecomp import _report
from skdecomp._report import _figures, _page, _story, analyse
from skdecomp._report._verdict import _verdict, agreed_sentence

DATA = Path(__file__).parent / "data" / "report_analysis.json"


def quiet(*args):
    pass


def _recorded(case):
    return dict(json.loads(DATA.read_text())[case], seconds=1.0)


def _section(page, name):
    start = page.index(f'<section id="{name}">')
    return page[start: page.index("</section>", start)]


def _percentages(text):
    return re.findall(r"(\d+(?:\.\d+)?)%", text)


def test_the_two_disagreements_are_on_the_scale_of_the_agreement_section():
    res = _recorded("demo")
    part = res["partitions"]["columns"]
    methods = _story.between_methods(res)
    # occlusion against PDP/Arch: the interactions, equal to the distance the
    # agreement section gives for that pair
    occ, arch = part["methods"].index("occlusion"), part["methods"].index("arch")
    assert methods["interaction"] == pytest.approx(part["disagreement_rms"][occ][arch])
    # recomputed from the attributions: root of the mean over rows of the sum
    # over columns of the squared gap, over the spread
    gap = (np.asarray(part["attributions"]["occlusion"])
           - np.asarray(part["attributions"]["arch"]))
    rms = np.sqrt(np.mean(np.sum(gap**2, axis=1))) / part["output_spread"]
    assert methods["interaction"] == pytest.approx(rms, rel=1e-9)
    # parts of each disagreement add up to 1
    games = _story.between_games(res)
    assert sum(methods["parts"]) == pytest.approx(1.0)
    assert sum(games["parts"]) == pytest.approx(1.0)
    assert games["distance"] == pytest.approx(np.sqrt(res["sources"]["dependence"]))
    page = _report.render_html(res, {})
    agreement = _section(page, "agreement")
    sources = _section(page, "sources")
    farthest = f"occlusion (PFI) and PDP/Arch, by {_story.pct(methods['interaction'])}"
    assert farthest in " ".join(agreement.split())
    assert f"are {_story.pct(methods['interaction'])} apart" in " ".join(sources.split())
    assert f"would move by {_story.pct(games['distance'])}" in " ".join(sources.split())
    for c in games["top"]:
        assert f"{c['column']} {_story.pct(c['share'])}" in sources


def test_demo_printout_and_summary_follow_the_sources_section(tmp_path, capsys,
                                                             monkeypatch):
    """The demo's printed sentences, its In short box and its sources section
    give the same numbers and the same comparison."""
    from skdecomp import __main__ as cli

    res = _recorded("demo")
    monkeypatch.setattr(_report, "analyse", lambda *a, **k: dict(res))
    assert cli.main(["demo", "--out", str(tmp_path / "r"), "--n-rows", "1"]) == 0
    printed = capsys.readouterr().out
    page = (tmp_path / "r" / "index.html").read_text()
    sources = " ".join(_section(page, "sources").split())
    verdict = " ".join(_section(page, "verdict").split())
    methods, games = _story.between_methods(res), _story.between_games(res)
    inter, dep = _story.pct(methods["interaction"]), _story.pct(games["distance"])
    # the sources section's two numbers
    assert f"are {inter} apart" in sources and f"would move by {dep}" in sources
    # the printout and the In short box carry both, with the same comparison
    for text in (printed, verdict):
        text = " ".join(text.split())
        methods_line = next(s for s in re.split(r"(?<=\.)\s", text)
                            if "differ only through interactions" in s)
        games_line = next(s for s in re.split(r"(?<=\.)\s", text)
                          if "conditional game" in s)
        assert inter in methods_line
        assert dep in games_line and f"differ from each other ({inter})" in games_line
        larger = "more than" if games["distance"] > methods["interaction"] else "less than"
        assert larger in games_line
    # the section's conclusion is the same comparison
    assert ("The game matters more than the method." in sources) == (
        _story.compare(methods, games) == "dependence")
    assert "interactions are what make the methods disagree" not in printed


def test_sources_words_follow_the_larger_disagreement():
    res = _recorded("demo")
    src = res["sources"]
    section = _section(_report.render_html(res, {}), "sources")
    assert "The game matters more than the method." in section
    # the same table with a small move between the games: the method matters more
    small = dict(src, dependence=0.001, dependence_noise=0.0001)
    section = _section(_report.render_html(dict(res, sources=small), {}), "sources")
    assert "The method matters more than the game." in section
    # below the bound of its error, no dependence is claimed
    noisy = dict(src, dependence=0.04, dependence_noise=0.05)
    res = dict(res, sources=noisy)
    page = _report.render_html(dict(res, verdict=_verdict(res)), {})
    assert "within the noise" in _section(page, "sources")
    assert "no dependence between the columns shows" in _section(page, "verdict")
    assert "the columns are dependent" not in page


def test_shares_above_the_spread_are_explained_where_printed():
    res = _recorded("demo")
    res = dict(res, sources=dict(res["sources"], dependence=2.5, dependence_noise=0.01))
    page = _report.render_html(dict(res, verdict=_verdict(res)), {})
    assert "158.1%" in _section(page, "sources")
    assert "larger than the spread of the predictions" in _section(page, "sources")
    assert "own spread, as dependent columns" in _section(page, "verdict")


def test_no_negative_share_is_printed():
    assert _page._share(-0.2, 1.0) == "none (rose by 20.0%)"
    assert _story.pct(-1e-3) == "0%"
    res = _recorded("demo")
    page = _report.render_html(res, _figures.make_figures(res))
    assert not re.search(r"-\d+(\.\d+)?%", page)


def test_single_group_of_every_column_is_not_a_useful_grouping():
    from skdecomp import AdaptiveGrouper

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))

    def f(X):
        # every pair of columns interacts as strongly as every other
        return sum(X[:, i] * X[:, j] for i in range(5) for j in range(i + 1, 5))

    grouper = AdaptiveGrouper(f, max_samples=40, n_groups=1, random_state=0).fit(X)
    assert grouper.n_groups_ == 1 and grouper.remaining_share_ == pytest.approx(0)
    assert not grouper.useful_partition_
    # the report's words for it
    history = {"n_columns": 5, "n_groups": 1, "groups": [list("abcde")],
               "useful_partition": False, "remaining_share": 0.0, "path": [],
               "merges": [], "no_interactions": False}
    sentence = agreed_sentence(history)
    assert "not a useful grouping" in sentence and "one group" in sentence
    ctx = _page._agreed(dict(history, initial_loss=1.0, final_loss=0.0,
                             largest_group=5, stop_reason="n_groups"))
    assert ctx["one_group"] and not ctx["useless"] and ctx["largest"] is None


@pytest.mark.slow
def test_report_on_five_interacting_columns_does_not_call_one_group_useful():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(400, 5)), columns=list("abcde"))
    y = pd.Series(sum(X.iloc[:, i] * X.iloc[:, j] for i in range(5)
                      for j in range(i + 1, 5)), name="y")
    res = analyse(X, y, estimator="mlp", n_rows=10, background=10, log=quiet)
    a = res["agreed"]
    if a["n_groups"] == 1:
        assert not a["useful_partition"]
        assert any("not a useful grouping" in s for s in res["verdict"])
        page = _report.render_html(dict(res, seconds=1.0), {})
        assert "Not a useful grouping." in _section(page, "agreed")
    assert not any("useful" in s and "not" not in s for s in res["verdict"])


@pytest.mark.parametrize("estimator", ["hgb", pytest.param("linear", marks=pytest.mark.slow)])
def test_sources_run_on_a_table_with_text_columns(estimator):
    rng = np.random.default_rng(0)
    n = 160
    a = rng.normal(size=n)
    X = pd.DataFrame({"a": a, "b": a + 0.3 * rng.normal(size=n),
                      "colour": rng.choice(["red", "green", "blue"], size=n)})
    y = pd.Series(X.a + (X.colour == "red") * X.b, name="y")
    res = analyse(X, y, estimator=estimator, groups="columns", n_rows=5,
                  background=10, log=quiet)
    src = res["sources"]
    assert src is not None and src["encoded"]
    assert src["columns"] == ["a", "b", "colour"]
    assert sum(src["dependence_parts"]) == pytest.approx(1.0)
    # a and b are strongly dependent; the colour is drawn independently of them
    assert src["dependence_per_column"][2] < src["dependence_per_column"][0]
    page = _report.render_html(dict(res, seconds=1.0), {})
    assert "encoded as the\nmodel's pipeline encodes them" in _section(page, "sources")


def test_sources_use_the_complete_rows_when_values_are_missing():
    rng = np.random.default_rng(1)
    n = 120
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    X.loc[:9, "b"] = np.nan
    y = pd.Series(X.a + X.b.fillna(0), name="y")
    res = analyse(X, y, estimator="hgb", groups="columns", n_rows=5, background=10,
                  log=quiet)
    assert res["sources"]["complete_rows_only"]
    assert "complete rows" in " ".join(_section(
        _report.render_html(dict(res, seconds=1.0), {}), "sources").split())


def test_page_says_which_game_it_explains():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(100, 3)), columns=list("abc"))
    y = pd.Series(X.a * X.b + X.c, name="y")
    for imputer, words in (("conditional", "drawn given the present ones"),
                           ("path_dependent", "training rows that took")):
        res = analyse(X, y, estimator="hgb", groups="columns", n_rows=5,
                      background=10, log=quiet, imputer=imputer)
        assert res["imputer"] == imputer
        model = _section(_report.render_html(dict(res, seconds=1.0), {}), "model")
        name = _story.GAME_NAMES[imputer]
        assert f"Game: <b>{name}</b>" in model and words in " ".join(model.split())
        if imputer == "conditional":
            # the other game of the sources section is the marginal one
            assert _story.between_games(res)["other"] == "marginal"
    with pytest.raises(_report.DataError, match="path_dependent.*no trees"):
        analyse(X, y, estimator="mlp", imputer="path_dependent", log=quiet)
    with pytest.raises(_report.DataError, match="imputer must be one of"):
        analyse(X, y, imputer="shap", log=quiet)


def test_sampled_methods_draw_their_error_bars():
    from skdecomp._report._figures import _drivers_figure

    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    part = _recorded("demo")["partitions"]["columns"]
    K = len(part["group_names"])
    part = dict(part, methods=part["methods"] + ["kernel_shap"],
                importance=dict(part["importance"],
                                kernel_shap=part["importance"]["shapley"]),
                importance_se={"kernel_shap": [0.5] * K})
    fig = _drivers_figure(plt, part)
    ax = fig.axes[0]
    bars = [c for c in ax.containers if getattr(c, "errorbar", None) is not None]
    assert len(bars) == 1
    segments = bars[0].errorbar.lines[2][0].get_segments()
    assert len(segments) == K
    assert all(abs(s[1][0] - s[0][0] - 2 * 1.96 * 0.5) < 1e-9 for s in segments)
    assert "95% intervals" in ax.get_xlabel()
    plt.close(fig)


def test_conditional_game_on_text_columns_is_refused_before_model_work(monkeypatch):
    from sklearn.pipeline import Pipeline

    def forbidden(self, *args, **kwargs):
        raise AssertionError("a model was fitted")

    monkeypatch.setattr(Pipeline, "fit", forbidden)
    X = pd.DataFrame({"a": np.arange(40.0), "colour": ["red", "blue"] * 20})
    y = pd.Series(np.arange(40.0), name="y")
    with pytest.raises(_report.DataError, match="text columns .*'colour'"):
        analyse(X, y, imputer="conditional", log=quiet)
