"""One list of methods: defaults, choices, colours and labels are registry data."""

import re

import numpy as np
import pytest

from skdecomp._methods import (
    ALIASES,
    EXACT_METHODS,
    REGISTRY,
    SAMPLED_METHODS,
    comparison_methods,
    default_methods,
    efficient_methods,
    lead_method,
    method_color,
    method_label,
    method_names,
)


def test_every_entry_has_a_distinct_label_and_colour():
    specs = list(REGISTRY.values())
    assert len({s.label for s in specs}) == len(specs)
    assert len({s.color for s in specs}) == len(specs)
    assert all(re.fullmatch(r"#[0-9A-F]{6}", s.color) for s in specs)
    for alias, name in ALIASES.items():
        assert method_color(alias) == method_color(name)
        assert method_label(alias) == method_label(name)
    assert method_label("not a method") == "not a method"
    assert method_color("not a method") is None


def test_default_lists_are_the_entries_that_name_them():
    # the lists the package used before they became registry data
    assert default_methods("exact") == ["shapley", "banzhaf", "occlusion", "arch"]
    assert default_methods("wide") == ["occlusion", "arch", "kernel_shap", "lime"]
    assert default_methods("report_wide") == ["occlusion", "arch", "kernel_shap",
                                              "permutation_shap"]
    assert comparison_methods() == ["arch", "shapley", "banzhaf", "occlusion"]
    assert efficient_methods() == ["shapley", "owen", "permutation_shap"]
    with pytest.raises(ValueError, match="default role"):
        default_methods("nothing")
    for role in ("exact", "wide", "report_wide"):
        assert default_methods(role) == [s.name for s in REGISTRY.values()
                                         if role in s.defaults]


def test_lead_method_is_the_first_shapley_estimate_present():
    assert lead_method(["occlusion", "banzhaf", "shapley"]) == "shapley"
    assert lead_method(["occlusion", "permutation_shap", "kernel_shap"]) == "kernel_shap"
    assert lead_method(["arch", "banzhaf"]) == "banzhaf"
    assert lead_method(["arch", "occlusion"]) == "arch"


def test_method_names_by_kind():
    assert method_names() == list(EXACT_METHODS) + list(SAMPLED_METHODS)
    assert method_names("exact", aliases=False) == ["shapley", "banzhaf", "occlusion",
                                                     "arch", "owen"]
    assert set(method_names("exact")) == set(method_names("exact", aliases=False)) | set(
        ALIASES)
    assert method_names("sampled") == list(SAMPLED_METHODS)


def test_efficient_methods_add_up_to_the_prediction(small_problem):
    # the registry's "efficient" flag is checked against the numbers
    explainer, X = small_problem
    res = explainer.explain(X, methods=list(REGISTRY))
    gap = explainer.game_.predict(explainer.game_.check_X(X))[:, 0] - np.ravel(
        explainer.expected_value_)[0]
    for name, spec in REGISTRY.items():
        total = np.asarray(res[name].values).sum(axis=1)
        if spec.efficient:
            np.testing.assert_allclose(total, gap, atol=1e-8)


@pytest.fixture
def small_problem():
    from sklearn.linear_model import LinearRegression

    from skdecomp import Explainer

    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = X[:, 0] * X[:, 1] + X[:, 2]
    model = LinearRegression().fit(np.c_[X, X[:, 0] * X[:, 1]], y)

    def f(A):
        return model.predict(np.c_[A, A[:, 0] * A[:, 1]])

    # a hierarchy for the hierarchical methods
    explainer = Explainer(f, background=20, n_samples=64, random_state=0,
                          hierarchy=[[0, 1], [2, 3]]).fit(X)
    return explainer, X[:3]


def test_consumers_read_the_registry():
    pytest.importorskip("matplotlib")
    from skdecomp.plot import METHOD_COLORS
    from skdecomp.plot import method_color as display_color

    for name in method_names():
        assert display_color(name) == method_color(name) == METHOD_COLORS[name]


def test_explain_defaults_and_cli_choices_come_from_the_registry(small_problem, capsys):
    from skdecomp.__main__ import main

    explainer, X = small_problem
    assert list(explainer.explain(X)) == default_methods("exact")
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ", ".join(method_names()) in help_text
