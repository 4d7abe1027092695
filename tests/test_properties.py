"""Property tests of the identities of the decomposition, on random models and partitions.

Hypothesis draws small problems: 2 to 6 columns split into 2 to 5 groups, a
random multilinear polynomial (a random sum of products of columns) or a
small random regression tree, a few background rows and explained rows. On
each it checks

- efficiency: Shapley attributions sum to ``f(x) - E_B f`` and the
  components of the decomposition sum to ``f(x)``;
- completeness of Integrated Gradients with the ``"path"`` scheme;
- additive invariance: adding ``g(x_G)``, a function of one group's columns,
  changes only that group's attributions of every exact method, by exactly
  the (centred) partial dependence of g, ``g(x_G) - E_B g``;
- the dummy group: a group the model does not read gets 0 from every exact
  method, from permutation_shap at any budget and from kernel_shap once its
  budget covers every coalition;
- symmetry: two groups that play symmetric roles get equal Shapley and
  Banzhaf values;
- agreement: on a groupwise additive model all exact methods (and the path
  Integrated Gradients) coincide;

and compares the exact methods with the brute-force powerset oracle of
``tests/_naive.py``.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeRegressor

from skdecomp import Explainer
from skdecomp._methods._registry import min_samples

from . import _naive

EXACT = ["shapley", "banzhaf", "occlusion", "arch"]
ATOL = 1e-9

SETTINGS = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


# -- random problems --------------------------------------------------------------------
class Polynomial:
    """A multilinear polynomial: ``f(x) = sum_t c_t prod_{j in T_t} x_j``."""

    def __init__(self, terms):
        self.terms = [(float(c), tuple(int(j) for j in cols)) for c, cols in terms]

    def __repr__(self):
        return " + ".join(
            f"{c:.3g}*" + "*".join(f"x{j}" for j in cols) for c, cols in self.terms
        )

    def __call__(self, X):
        X = np.asarray(X, dtype=np.float64)
        out = np.zeros(X.shape[0])
        for c, cols in self.terms:
            out = out + c * np.prod(X[:, list(cols)], axis=1)
        return out


def _labels_to_groups(labels, n_groups):
    return [sorted(int(j) for j in np.flatnonzero(labels == k)) for k in range(n_groups)]


@st.composite
def partitions(draw, min_groups=2, max_groups=5, min_features=2, max_features=6):
    """(n_features, groups): every group non-empty, columns in a random order."""
    n_features = draw(st.integers(min_features, max_features))
    n_groups = draw(st.integers(min_groups, min(max_groups, n_features)))
    order = draw(st.permutations(range(n_features)))
    extra = draw(st.lists(st.integers(0, n_groups - 1), min_size=n_features - n_groups,
                          max_size=n_features - n_groups))
    labels = np.empty(n_features, dtype=np.int64)
    labels[list(order)] = list(range(n_groups)) + extra
    return n_features, _labels_to_groups(labels, n_groups)


@st.composite
def polynomials(draw, columns, max_terms=6):
    """A random multilinear polynomial in the given columns."""
    columns = sorted(columns)
    n_terms = draw(st.integers(1, max_terms))
    terms = []
    for _ in range(n_terms):
        size = draw(st.integers(1, min(3, len(columns))))
        cols = draw(st.lists(st.sampled_from(columns), min_size=size, max_size=size,
                             unique=True))
        coef = draw(st.floats(-2, 2, allow_nan=False).filter(lambda c: abs(c) > 0.1))
        terms.append((coef, cols))
    return Polynomial(terms)


@st.composite
def problems(draw, **partition_kw):
    """A partition, a polynomial over all columns, and data rows."""
    n_features, groups = draw(partitions(**partition_kw))
    f = draw(polynomials(range(n_features)))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(12, n_features))
    n_background = draw(st.integers(1, 5))
    return f, groups, X[:3], X[3 : 3 + n_background]


def explain(f, groups, X, background, methods, **params):
    e = Explainer(f, groups=groups, background=background, random_state=0, **params)
    e.fit(background)
    return e, {m: r.values for m, r in e.explain(X, methods=methods).items()}


def oracle(f, X, background, groups, method):
    K = len(groups)
    return np.array(
        [_naive.METHODS[method](_naive.game(f, x, background, groups), K) for x in X]
    )


# -- efficiency ---------------------------------------------------------------------------
@SETTINGS
@given(problems())
def test_efficiency_and_completeness(problem):
    f, groups, X, background = problem
    e, res = explain(f, groups, X, background, ["shapley", "banzhaf"])
    gap = f(X) - e.expected_value_
    np.testing.assert_allclose(res["shapley"].sum(axis=1), gap, atol=ATOL)
    dec = e.decompose(X)
    np.testing.assert_allclose(dec.components.sum(axis=1), f(X), atol=ATOL)
    assert dec.completeness_error() < ATOL
    # against the brute-force powerset oracle
    for method in ("shapley", "banzhaf"):
        np.testing.assert_allclose(res[method], oracle(f, X, background, groups, method),
                                   atol=ATOL)


@SETTINGS
@given(problems(), st.sampled_from(["kernel_shap", "permutation_shap"]),
       st.integers(10, 40))
def test_sampled_shapley_is_efficient(problem, method, n_samples):
    f, groups, X, background = problem
    from skdecomp._methods._registry import min_samples

    e, res = explain(f, groups, X, background, [method], method=method,
                     n_samples=max(n_samples, min_samples(method, len(groups))))
    np.testing.assert_allclose(res[method].sum(axis=1), f(X) - e.expected_value_,
                               atol=ATOL)


@st.composite
def trees(draw):
    """A small random regression tree, its groups, and data rows.

    The columns of ``dummy`` (the last group) are constant in the training
    data, so the tree never splits on them.
    """
    n_features, groups = draw(partitions())
    seed = draw(st.integers(0, 2**16))
    depth = draw(st.integers(1, 4))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, n_features))
    train = X.copy()
    train[:, groups[-1]] = 0.0
    tree = DecisionTreeRegressor(max_depth=depth, random_state=0)
    tree.fit(train, rng.normal(size=40))
    return tree, groups, X[:3], X[3:7]


@SETTINGS
@given(trees())
def test_tree_efficiency_dummy_and_agreement_with_model_calls(problem):
    tree, groups, X, background = problem
    f = tree.predict
    res = {}
    for algorithm in ("tree", "model_agnostic"):
        e, res[algorithm] = explain(tree, groups, X, background, EXACT, algorithm=algorithm)
        assert e.algorithm_ == algorithm
        gap = f(X) - e.expected_value_
        np.testing.assert_allclose(res[algorithm]["shapley"].sum(axis=1), gap, atol=ATOL)
        for method in EXACT:  # the last group is never split on
            np.testing.assert_allclose(res[algorithm][method][:, -1], 0.0, atol=ATOL)
        np.testing.assert_allclose(e.decompose(X).components.sum(axis=1), f(X), atol=ATOL)
    for method in EXACT:
        np.testing.assert_allclose(res["tree"][method], res["model_agnostic"][method],
                                   atol=ATOL)
    _, ig = explain(tree, groups, X, background, ["integrated_gradients"],
                    method="integrated_gradients", method_params={"n_steps": 4})
    np.testing.assert_allclose(ig["integrated_gradients"].sum(axis=1),
                               f(X) - f(background).mean(), atol=ATOL)


# -- Integrated Gradients --------------------------------------------------------------------
@SETTINGS
@given(problems(), st.integers(1, 8))
def test_path_integrated_gradients_is_complete(problem, n_steps):
    f, groups, X, background = problem
    e, res = explain(f, groups, X, background, ["integrated_gradients"],
                     method="integrated_gradients",
                     method_params={"n_steps": n_steps, "scheme": "path"})
    np.testing.assert_allclose(res["integrated_gradients"].sum(axis=1),
                               f(X) - e.expected_value_, atol=ATOL)


# -- additive invariance ------------------------------------------------------------------------
@SETTINGS
@given(st.data())
def test_adding_a_function_of_one_group_moves_only_that_group(data):
    f, groups, X, background = data.draw(problems())
    k = data.draw(st.integers(0, len(groups) - 1))
    g = data.draw(polynomials(groups[k], max_terms=3))

    def f_plus_g(Z):
        return f(Z) + g(Z)

    _, before = explain(f, groups, X, background, EXACT)
    _, after = explain(f_plus_g, groups, X, background, EXACT)
    pdp_g = g(X) - g(background).mean()  # g reads only group k: its centred PDP
    others = [j for j in range(len(groups)) if j != k]
    for method in EXACT:
        np.testing.assert_allclose(after[method][:, others], before[method][:, others],
                                   atol=ATOL)
        np.testing.assert_allclose(after[method][:, k] - before[method][:, k], pdp_g,
                                   atol=ATOL)


# -- the dummy group ------------------------------------------------------------------------------
@SETTINGS
@given(st.data())
def test_a_group_the_model_ignores_gets_zero(data):
    n_features, groups = data.draw(partitions())
    dummy = data.draw(st.integers(0, len(groups) - 1))
    used = [j for k, g in enumerate(groups) if k != dummy for j in g]
    f = data.draw(polynomials(used))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    rows = rng.normal(size=(8, n_features))
    X, background = rows[:3], rows[3 : 3 + data.draw(st.integers(1, 5))]
    K = len(groups)
    _, res = explain(f, groups, X, background, EXACT)
    for method in EXACT:
        np.testing.assert_allclose(res[method][:, dummy], 0.0, atol=ATOL)
    # permutation_shap at any budget: every marginal contribution of the dummy is 0;
    # kernel_shap once its budget covers the 2**K - 2 coalitions (below that, its
    # weighted least squares on random coalitions need not give the dummy 0)
    budgets = {
        "permutation_shap": data.draw(
            st.integers(min_samples("permutation_shap", K), 40)),
        "kernel_shap": data.draw(st.integers((1 << K) - 2, 40)),
    }
    for method, n_samples in budgets.items():
        _, res = explain(f, groups, X, background, [method], method=method,
                         n_samples=n_samples)
        np.testing.assert_allclose(res[method][:, dummy], 0.0, atol=ATOL)


# -- symmetry -------------------------------------------------------------------------------------
@SETTINGS
@given(st.data())
def test_symmetric_groups_get_equal_values(data):
    """Groups a and b of the same size, a model symmetric under swapping them,
    and data where their columns hold the same values."""
    size = data.draw(st.integers(1, 2))
    n_rest = data.draw(st.integers(0, 2))
    a = list(range(size))
    b = list(range(size, 2 * size))
    rest = list(range(2 * size, 2 * size + n_rest))
    n_features = 2 * size + n_rest
    groups = [a, b] + ([rest[:1], rest[1:]] if n_rest == 2 else [rest] if rest else [])
    h = data.draw(polynomials(range(n_features)))
    swap = np.arange(n_features)
    swap[a], swap[b] = b, a

    def f(Z):
        Z = np.asarray(Z, dtype=np.float64)
        return h(Z) + h(Z[:, swap])

    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    rows = rng.normal(size=(8, n_features))
    rows[:, b] = rows[:, a]
    X, background = rows[:3], rows[3 : 3 + data.draw(st.integers(1, 5))]
    _, res = explain(f, groups, X, background, ["shapley", "banzhaf"])
    for method in ("shapley", "banzhaf"):
        np.testing.assert_allclose(res[method][:, 0], res[method][:, 1], atol=ATOL)


# -- agreement on a groupwise additive model ----------------------------------------------------
@SETTINGS
@given(st.data())
def test_all_exact_methods_agree_on_a_groupwise_additive_model(data):
    n_features, groups = data.draw(partitions())
    parts = [data.draw(polynomials(g, max_terms=3)) for g in groups]

    def f(Z):
        return sum(p(Z) for p in parts)

    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    rows = rng.normal(size=(8, n_features))
    X, background = rows[:3], rows[3 : 3 + data.draw(st.integers(1, 5))]
    methods = EXACT + ["integrated_gradients"]
    e, res = explain(f, groups, X, background, methods, method="integrated_gradients",
                     method_params={"n_steps": 3})
    for method in methods[1:]:
        np.testing.assert_allclose(res[method], res["shapley"], atol=ATOL)
    for size in range(2, len(groups) + 1):
        np.testing.assert_allclose(e.decompose(X).order(size), 0.0, atol=ATOL)
    np.testing.assert_allclose(res["arch"], oracle(f, X, background, groups, "arch"),
                               atol=ATOL)


@pytest.mark.parametrize("n_groups", [2, 5])
def test_partitions_cover_every_column_once(n_groups):
    # the strategy itself: every column in exactly one non-empty group
    @settings(max_examples=10, deadline=None, derandomize=True)
    @given(partitions(min_groups=n_groups, max_groups=n_groups, min_features=n_groups))
    def check(p):
        n_features, groups = p
        assert len(groups) == n_groups and all(groups)
        assert sorted(j for g in groups for j in g) == list(range(n_features))

    check()
