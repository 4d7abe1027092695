"""AdaptiveGrouper's held-out stop never ends in one group of every column."""

import numpy as np
from sklearn.model_selection import GridSearchCV

from skdecomp import AdaptiveGrouper, Explainer


def _chain(X):
    # every column interacts with the next: each merge pays on held-out rows
    return X[:, 0] * X[:, 1] + X[:, 1] * X[:, 2] + X[:, 2] * X[:, 3] + X[:, 3] * X[:, 4]


X = np.random.default_rng(0).normal(size=(120, 5))


def test_auto_stop_refuses_the_merge_into_a_single_group():
    g = AdaptiveGrouper(_chain, max_samples=30, random_state=0).fit(X)
    assert len(g.groups_) >= 2
    assert g.stop_reason_ == "held_out"
    last = g.history_[-1]
    assert last["n_groups"] == 1 and not last["accepted"]
    assert g.path_[-1]["n_groups"] == 1 and not g.path_[-1]["chosen"]
    # an int n_groups still reaches one group
    assert len(AdaptiveGrouper(_chain, n_groups=1, max_samples=30).fit(X).groups_) == 1


def test_grid_search_refits_to_more_than_one_group():
    explainer = Explainer(_chain, groups=AdaptiveGrouper(max_samples=30), background=30,
                          random_state=0)
    search = GridSearchCV(explainer, {"groups__max_samples": [30]}, cv=2).fit(X)
    assert len(search.best_estimator_.groups_) >= 2
