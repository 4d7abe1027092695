"""AdaptiveGrouper(n_groups="auto"): merges kept only when they pay on held-out rows."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import AdaptiveGrouper, Explainer, PairwiseGrouper
from skdecomp.datasets import make_block_function
from skdecomp.inspection import agreed_loss



def naive_agreed_loss(f, rows, groups):
    """sum_k mean_n (PDP_k(x_n) - PFI_k(x_n))**2 by loops, the rows as background."""
    n = rows.shape[0]
    f_rows = f(rows)
    total = 0.0
    for g in groups:
        for i in range(n):
            inserted, deleted = rows.copy(), rows.copy()
            inserted[:, g] = rows[i, g]  # x_G from row i, the rest from each row m
            deleted[:, :] = rows[i]
            deleted[:, g] = rows[:, g]  # x_G from each row m, the rest from row i
            pdp = f(inserted).mean() - f_rows.mean()
            pfi = f_rows[i] - f(deleted).mean()
            total += (pdp - pfi) ** 2 / n
    return total


def _same_partition(a, b):
    return sorted(map(sorted, a)) == sorted(map(sorted, b))


@pytest.mark.parametrize("n_rows", [50, 200])
def test_auto_finds_the_true_number_of_groups_of_the_true_function(n_rows):
    hits = 0
    for seed in range(10):
        data = make_block_function(2 * n_rows, n_features=8, random_state=seed)
        g = AdaptiveGrouper(data.function, max_samples=n_rows, n_groups="auto",
                            random_state=seed).fit(data.data)
        hits += g.n_groups_ == len(data.groups) and _same_partition(g.groups_, data.groups)
    assert hits >= 8, hits


def test_held_out_losses_match_a_brute_force_computation():
    data = make_block_function(60, n_features=5, noise=0.0, random_state=3)

    def f(X):  # the true function plus a weak interaction of every pair
        X = np.asarray(X)
        return data.function(X) + 0.05 * X[:, 0] * X[:, 4] + 0.05 * X[:, 1] * X[:, 2]

    g = AdaptiveGrouper(f, max_samples=30, n_groups="auto", group_penalty=0.0,
                        random_state=0).fit(data.data)
    # the rows: the same draw as the grouper, the second half held out
    perm = np.random.RandomState(0).permutation(60)
    held = data.data[np.sort(perm[30:60])]
    groups = [[j] for j in range(5)]
    assert g.held_out_initial_loss_ == pytest.approx(naive_agreed_loss(f, held, groups))
    for h in g.history_:
        a, b = h["groups"]
        groups = [grp for grp in groups if grp[0] not in a and grp[0] not in b] + [a + b]
        assert h["held_out_loss_after"] == pytest.approx(
            naive_agreed_loss(f, held, groups), abs=1e-10
        )
        assert h["held_out_error"] >= 0
    refused = [h for h in g.history_ if not h["accepted"]]
    if g.stop_reason_ == "held_out":
        assert len(refused) == 1 and not g.history_[-1]["accepted"]
        # the refused merge is in the history, not in the groups
        assert g.n_groups_ == g.history_[-1]["n_groups"] + 1
        assert _same_partition(g.cut(g.n_groups_), g.groups_)
        assert len(g.cut(g.n_groups_ - 1)) == g.n_groups_ - 1
        dec = g.history_[-1]["held_out_loss_before"] - g.history_[-1]["held_out_loss_after"]
        assert dec <= g.history_[-1]["held_out_error"] + 1e-12
    else:
        assert not refused
    for h in g.history_[:-1]:
        assert h["held_out_loss_before"] - h["held_out_loss_after"] > h["held_out_error"]


def test_auto_on_fitted_models_against_pairwise():
    # fitted models of the same problems: on fresh rows, the auto partition
    # disagrees no more than PAIRWISE's with as many groups in 7 of 10 seeds
    wins, sizes = 0, []
    for seed in range(10):
        data = make_block_function(2200, n_features=8, noise=0.3, random_state=seed)
        X, y = data.data, data.target
        model = HistGradientBoostingRegressor(max_iter=100, random_state=seed)
        model.fit(X[:2000], y[:2000])
        g = AdaptiveGrouper(model, max_samples=50, n_groups="auto",
                            random_state=seed).fit(X[:2000])
        p = PairwiseGrouper(model, max_samples=50, n_groups=g.n_groups_,
                            random_state=seed).fit(X[:2000])
        fresh = X[2000:]
        la = agreed_loss(Explainer(model, groups=g.groups_).fit(fresh[:5]), fresh)
        lp = agreed_loss(Explainer(model, groups=p.groups_).fit(fresh[:5]), fresh)
        wins += la <= lp * (1 + 1e-9)
        sizes.append(g.n_groups_)
    assert wins >= 7, (wins, sizes)
    # not by merging everything
    assert sum(k > 1 for k in sizes) >= 7, sizes


def test_auto_errors_and_defaults():
    data = make_block_function(40, n_features=4, random_state=0)
    with pytest.raises(ValueError, match="at least 4 rows"):
        AdaptiveGrouper(data.function, n_groups="auto").fit(data.data[:3])
    with pytest.raises(ValueError, match="n_groups"):
        AdaptiveGrouper(data.function, n_groups="best").fit(data.data)
    # a number of groups, or rel_tol, is the rule; then no rows are held out
    for kw in ({"n_groups": 2}, {"rel_tol": 0.0}, {"n_groups": None, "rel_tol": 0.25}):
        g = AdaptiveGrouper(data.function, max_samples=10, random_state=0, **kw).fit(data.data)
        assert g.held_out_initial_loss_ is None and g.background_.shape[0] == 10
        assert all(h["held_out_loss_after"] is None and h["accepted"] for h in g.history_)
    # images have no rows to hold out: the default stops on the price of a
    # merge; the pair of interacting pixels 0 and 1 is merged, nothing else
    images = np.random.RandomState(0).rand(1, 4, 4)

    def f(x):
        x = x.reshape(len(x), -1)
        return x[:, 0] * x[:, 1] + x[:, 5]

    g = AdaptiveGrouper(f, image_shape=(4, 4)).fit(images.reshape(1, -1))
    assert g.groups_[0].tolist() == [0, 1] and g.n_groups_ == 15
    assert g.stop_reason_ == "price"
    # X with fewer than 2 * max_samples rows is split in halves
    g = AdaptiveGrouper(data.function, max_samples=100, n_groups="auto",
                        random_state=0).fit(data.data)
    assert g.background_.shape[0] == 20


def test_explainer_passes_group_penalty_to_the_grouper():
    data = make_block_function(120, n_features=5, random_state=1)
    ex = Explainer(data.function, groups=AdaptiveGrouper(max_samples=30), group_penalty=0.5,
                   background=10, random_state=0).fit(data.data)
    assert ex.grouper_.group_penalty == 0.5
    ref = AdaptiveGrouper(data.function, max_samples=30, group_penalty=0.5,
                          random_state=0).fit(data.data)
    assert ex.grouper_.groups_ == ref.groups_
    # a grouper that sets its own keeps it
    ex = Explainer(data.function, groups=AdaptiveGrouper(max_samples=30, group_penalty=0.0),
                   group_penalty=0.5, background=10, random_state=0).fit(data.data)
    assert ex.grouper_.group_penalty == 0.0
