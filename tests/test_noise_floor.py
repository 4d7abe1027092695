"""The noise floor of disagreement and infidelity between sampled explanations.

Claim tests: the floor a metric reports is compared with a Monte Carlo of the
metric itself over independent draws (seeds) of a sampled method, not with
hard-coded numbers.

Tolerance. KernelSHAP at 48 coalitions on 6 groups, 10 explained rows, 200
seeds (100 independent pairs). The Monte Carlo means have a relative standard
error of about 4-5% (measured over the pairs: the rows of one seed share its
coalitions, so the pairs, not the rows, are the independent replicates), and
the standard errors themselves are calibrated to about 10% (the user guide's
coverage of 93-96%; 1.07-1.09 measured here). A ratio in [0.75, 1.33]
(symmetric on the log scale) leaves more than 4 standard errors of Monte Carlo
on either side of the measured ratio, and still fails a floor wrong by a
factor of 2 (e.g. infidelity's floor with the errors taken as uncorrelated,
which for these efficient estimates is twice the truth at p=0.5).
"""

import numpy as np
import pytest

from skdecomp import Explainer
from skdecomp.metrics import disagreement, infidelity

LOW, HIGH = 0.75, 1.0 / 0.75
N_SEEDS = 200
EXACT = ["shapley", "banzhaf", "occlusion", "arch"]


def _model(X):
    # smooth, with pair and triple interactions
    return (
        np.sin(X[:, 0])
        + X[:, 1] * X[:, 2]
        + 0.5 * np.tanh(X[:, 3] + X[:, 4])
        + 0.3 * X[:, 5] ** 2
        + 0.4 * X[:, 0] * X[:, 3] * X[:, 5]
    )


@pytest.fixture(scope="module")
def case():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 6))
    rows = X[:10]
    exact = Explainer(_model, background=X[:8], random_state=0).fit(X)
    explained = exact.explain(rows, methods=EXACT)

    def sampled(seed, method="kernel_shap", n_samples=48):
        explainer = Explainer(
            _model, background=X[:8], method=method, n_samples=n_samples,
            random_state=seed,
        ).fit(X)
        return explainer, explainer.explain(rows, methods=[method])[method]

    draws = [sampled(seed)[1] for seed in range(N_SEEDS)]
    return {
        "X": X, "rows": rows, "exact": exact, "explained": explained,
        "draws": draws, "sampled": sampled,
    }


def _pairs(draws):
    return list(zip(draws[::2], draws[1::2]))


# -- (a) l2 disagreement of independent estimates ---------------------------------
def test_disagreement_of_two_estimates_matches_their_noise_floor(case):
    shapley = case["explained"]["shapley"]
    d2, f2, d1, f1 = [], [], [], []
    for a, b in _pairs(case["draws"]):
        res = disagreement({"a": a, "b": b})
        d2.append(res.score)
        f2.append(res.noise_floor)
        for est in (a, b):
            res = disagreement({"estimate": est, "exact": shapley})
            d1.append(res.score)
            f1.append(res.noise_floor)
    d2, f2, d1, f1 = map(np.mean, (d2, f2, d1, f1))
    # two estimates agreeing in expectation differ by their noise
    assert LOW <= d2 / f2 <= HIGH, d2 / f2
    # an estimate against the exact values: half of it (one noise, not two)
    assert f1 == pytest.approx(f2 / 2, rel=0.05)
    assert LOW <= d1 / (f2 / 2) <= HIGH, d1 / (f2 / 2)
    assert LOW <= d1 / f1 <= HIGH, d1 / f1


def test_noise_floor_is_averaged_like_the_score(case):
    a, b, c = case["draws"][:3]
    shapley = case["explained"]["shapley"]
    res = disagreement({"a": a, "b": b, "c": c, "shapley": shapley})
    va, vb, vc = (e.standard_errors**2 for e in (a, b, c))
    pair = {("a", "b"): va + vb, ("a", "c"): va + vc, ("b", "c"): vb + vc,
            ("a", "shapley"): va, ("b", "shapley"): vb, ("c", "shapley"): vc}
    per_row = np.mean([v.mean(axis=1) for v in pair.values()], axis=0)
    np.testing.assert_allclose(res.noise_floors, per_row)
    assert res.noise_floor == pytest.approx(per_row.mean())
    assert res.excess == pytest.approx(res.score - res.noise_floor)
    names = res.names
    for (i, j), v in pair.items():
        got = res.pairwise_noise_floor[names.index(i), names.index(j)]
        assert got == pytest.approx(v.mean())
    assert np.allclose(res.pairwise_noise_floor, res.pairwise_noise_floor.T)
    assert np.all(np.diag(res.pairwise_noise_floor) == 0)
    # summed over groups: K times the mean, as the score
    total = disagreement({"a": a, "b": b, "c": c, "shapley": shapley}, normalize="sum")
    assert total.noise_floor == pytest.approx(6 * res.noise_floor)
    assert total.score == pytest.approx(6 * res.score)
    # the existing keys are unchanged
    plain = disagreement([np.asarray(e) for e in (a, b, c, shapley)])
    assert plain.score == res.score
    np.testing.assert_array_equal(plain.pairwise, res.pairwise)
    np.testing.assert_array_equal(plain.scores, res.scores)


def test_standard_errors_argument_for_plain_arrays(case):
    a, b = case["draws"][:2]
    shapley = case["explained"]["shapley"]
    from_objects = disagreement({"a": a, "b": b, "s": shapley})
    values = {"a": a.values, "b": b.values, "s": shapley.values}
    # unknown errors: no floor
    plain = disagreement(values)
    assert plain.noise_floor is None and plain.excess is None
    assert plain.noise_floors is None and plain.pairwise_noise_floor is None
    given = disagreement(
        values,
        standard_errors={"s": None, "b": b.standard_errors, "a": a.standard_errors},
    )
    assert given.noise_floor == pytest.approx(from_objects.noise_floor)
    np.testing.assert_allclose(given.pairwise_noise_floor,
                               from_objects.pairwise_noise_floor)
    listed = disagreement(
        list(values.values()), standard_errors=[a.standard_errors, b.standard_errors, None]
    )
    assert listed.noise_floor == pytest.approx(from_objects.noise_floor)
    # given, they replace those of an Explanation
    zero = disagreement({"a": a, "b": b}, standard_errors={"a": None, "b": None})
    assert zero.noise_floor == 0.0
    with pytest.raises(ValueError, match="keys"):
        disagreement(values, standard_errors={"a": None})
    with pytest.raises(ValueError, match="entries"):
        disagreement([a.values, b.values], standard_errors=[None])
    with pytest.raises(ValueError, match="shape"):
        disagreement([a.values, b.values], standard_errors=[None, np.ones(3)])
    with pytest.raises(ValueError, match=">= 0"):
        disagreement([a.values, b.values],
                     standard_errors=[None, -np.ones(a.values.shape)])


# -- (b) exact methods --------------------------------------------------------------
def test_exact_methods_have_a_noise_floor_of_zero(case):
    explained = case["explained"]
    res = disagreement(explained)
    assert res.noise_floor == 0.0
    assert np.all(res.noise_floors == 0) and np.all(res.pairwise_noise_floor == 0)
    assert res.excess == res.score
    # with a sampled estimate: 0 between the exact methods only
    mixed = disagreement({**explained, "kernel_shap": case["draws"][0]})
    exact_block = mixed.pairwise_noise_floor[:4, :4]
    assert np.all(exact_block == 0)
    assert np.all(mixed.pairwise_noise_floor[4, :4] > 0)


# -- (c) other measures -------------------------------------------------------------
@pytest.mark.parametrize(
    "measure", ["pearson", "spearman", "feature_agreement", "rank_agreement",
                "sign_agreement"],
)
def test_other_measures_have_no_noise_floor(case, measure):
    a, b = case["draws"][:2]
    res = disagreement({"a": a, "b": b}, measure=measure, top_k=3)
    assert res.noise_floor is None and res.excess is None
    assert res.noise_floors is None and res.pairwise_noise_floor is None
    assert res.score == disagreement([a.values, b.values], measure=measure,
                                     top_k=3).score


# -- (d) infidelity -------------------------------------------------------------------
def _infidelity_monte_carlo(explainer, rows, pairs, **params):
    """2 * mean over pairs of (I(a) + I(b)) / 2 - I((a + b) / 2), and the mean floor.

    The infidelity I is quadratic in the attributions: on the same coalitions,
    (I(a) + I(b)) / 2 - I((a + b) / 2) is the error of (a - b) / 2 alone, whose
    expectation is half the floor for independent draws a, b of mean phi,
    whatever phi and the estimator's bias.
    """
    gaps, floors = [], []
    for a, b, se_a, se_b in pairs:
        ia = infidelity(explainer, rows, attributions=a, standard_errors=se_a,
                        random_state=0, **params)
        ib = infidelity(explainer, rows, attributions=b, standard_errors=se_b,
                        random_state=0, **params)
        mid = infidelity(explainer, rows, attributions=(np.asarray(a) + np.asarray(b)) / 2,
                         random_state=0, **params)
        gaps.append((ia.score + ib.score) / 2 - mid.score)
        floors += [ia.noise_floor, ib.noise_floor]
    return 2 * np.mean(gaps), np.mean(floors)


@pytest.mark.parametrize(
    "params",
    [{}, {"p": 0.3, "n_samples": 40}],
    ids=["all-coalitions-p0.5", "drawn-coalitions-p0.3"],
)
def test_infidelity_noise_floor_matches_monte_carlo(case, params):
    pairs = [(a, b, None, None) for a, b in _pairs(case["draws"])]
    mc, floor = _infidelity_monte_carlo(case["exact"], case["rows"], pairs, **params)
    assert LOW <= mc / floor <= HIGH, mc / floor


def test_infidelity_noise_floor_of_uncorrelated_errors():
    # independent errors of known spread around exact values: the other branch
    rng = np.random.RandomState(1)
    X = rng.normal(size=(60, 6))
    rows = X[:10]
    explainer = Explainer(_model, background=X[:8], random_state=0).fit(X)
    phi = explainer.transform(rows)
    se = rng.uniform(0.05, 0.3, size=phi.shape)
    pairs = [
        (phi + se * rng.normal(size=phi.shape), phi + se * rng.normal(size=phi.shape),
         se, se)
        for _ in range(100)
    ]
    for p in (0.5, 0.3):
        mc, floor = _infidelity_monte_carlo(explainer, rows, pairs, p=p)
        assert LOW <= mc / floor <= HIGH, (p, mc / floor)
        # all 64 coalitions: p * sum_k se_k**2
        assert floor == pytest.approx(p * (se**2).sum(axis=1).mean())


def test_infidelity_noise_floor_sources(case):
    rows = case["rows"]
    exact = case["exact"]
    shapley = case["explained"]["shapley"]
    # exact attributions: 0; plain arrays: unknown
    res = infidelity(exact, rows)
    assert res.noise_floor == 0.0 and res.excess == res.score
    assert infidelity(exact, rows, attributions=shapley).noise_floor == 0.0
    plain = infidelity(exact, rows, attributions=shapley.values)
    assert plain.noise_floor is None and plain.noise_floors is None
    assert plain.excess is None and plain.score == res.score
    # a sampled method scored by default brings its standard errors
    explainer, est = case["sampled"](3)
    default = infidelity(explainer, rows, random_state=0)
    given = infidelity(exact, rows, attributions=est, random_state=0)
    assert default.score == pytest.approx(given.score)
    assert default.noise_floor == pytest.approx(given.noise_floor) and given.noise_floor > 0
    # efficient estimates, all 2**K coalitions: p (1 - p) sum_k se_k**2
    np.testing.assert_allclose(
        given.noise_floors, 0.25 * (est.standard_errors**2).sum(axis=1)
    )
    assert given.excess == pytest.approx(given.score - given.noise_floor)
    # the same with the standard errors given for the plain array
    again = infidelity(exact, rows, attributions=est.values,
                       standard_errors=est.standard_errors, random_state=0)
    assert again.noise_floor == pytest.approx(given.noise_floor)
    with pytest.raises(ValueError, match="shape"):
        infidelity(exact, rows, attributions=est.values, standard_errors=np.ones(3))


# -- the display -------------------------------------------------------------------
def test_display_draws_the_noise_floor(case):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skdecomp.plot import DisagreementDisplay

    a, b = case["draws"][:2]
    shapley = case["explained"]["shapley"]
    result = {"a": a, "b": b, "shapley": shapley}
    raw = DisagreementDisplay.from_result(result, scale=None)
    expected = disagreement(result).pairwise_noise_floor
    np.testing.assert_allclose(raw.noise_floor, expected)
    legend = raw.colorbar_.ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["noise floor"]
    # the dashed line at the floor of the mean disagreement, on the colour scale
    dashed = [line for line in raw.colorbar_.ax.get_lines() if line.get_linestyle() == "--"]
    assert dashed and dashed[0].get_ydata()[0] == pytest.approx(
        disagreement(result).noise_floor
    )
    spread = DisagreementDisplay.from_result(result)
    assert spread.noise_floor is not None and spread.spread
    # exact methods only: no noise, nothing drawn
    exact = DisagreementDisplay.from_result(case["explained"], scale=None)
    assert exact.colorbar_.ax.get_legend() is None
    # plain arrays: unknown
    plain = DisagreementDisplay.from_result({k: v.values for k, v in result.items()})
    assert plain.noise_floor is None
    plt.close("all")
