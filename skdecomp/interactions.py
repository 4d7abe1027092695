"""Pairwise interactions between groups."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._compat import validate_params
from ._explainer import Explainer
from ._model import LazyFrames, to_pandas

__all__ = ["arch_detect"]


@validate_params(
    {"explainer": [Explainer], "X": ["array-like", LazyFrames()]},
    prefer_skip_nested_validation=True,
)
def arch_detect(explainer, X):
    """Pairwise group-interaction strengths of ArchDetect (Archipelago).

    For groups i and j, the mixed difference of the coalition values
    v_x (see :ref:`functional_decomposition`) is taken in two contexts, the
    other groups absent
    (from the background) and the other groups present (from x)::

        pure_ij = v({i, j}) - v({i}) - v({j}) + v({})
        full_ij = v(all) - v(all - i) - v(all - j) + v(all - {i, j})

    and the strength is their mean square, ``(pure_ij**2 + full_ij**2) / 2``.
    In terms of the components, ``pure_ij = F_{ij}`` and
    ``full_ij = sum_{U contains i and j} F_U``. The cost is
    ``K * (K + 1)`` coalitions per row, whatever the explainer's ``method``.

    Parameters
    ----------
    explainer : Explainer
        A fitted explainer; its model, groups and background are used.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows to analyse.

    Returns
    -------
    strengths : ndarray of shape (n_samples, n_groups, n_groups) or \
            (n_samples, n_groups, n_groups, n_outputs)
        Symmetric in the two group axes, zero on the diagonal.

    References
    ----------
    M. Tsang, S. Rambhatla and Y. Liu. "How does this interaction affect me?
    Interpretable attribution for feature interactions". NeurIPS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from skdecomp import Explainer
    >>> from skdecomp.interactions import arch_detect
    >>> X = np.random.RandomState(0).normal(size=(20, 3))
    >>> explainer = Explainer(lambda X: X[:, 0] * X[:, 1] + X[:, 2],
    ...                       background=X[:1]).fit(X)
    >>> strengths = arch_detect(explainer, X[:2])
    >>> strengths.shape
    (2, 3, 3)
    >>> bool(np.allclose(strengths[:, 2, :], 0))  # group 2 is additive
    True
    """
    check_is_fitted(explainer)
    game = explainer.game_
    X = game.check_X(to_pandas(X))  # polars rows are read as pandas
    K = game.n_groups
    prediction = game.predict(X)
    n_rows, n_out = prediction.shape
    strengths = np.zeros((n_rows, K, K, n_out))
    if K >= 2:
        i, j = np.triu_indices(K, k=1)
        n_pairs = i.size
        eye = np.eye(K, dtype=bool)
        pairs = eye[i] | eye[j]
        # singletons, pairs, and the complement of each
        coalitions = np.concatenate([eye, pairs, ~eye, ~pairs])
        v = game.values(X, coalitions, prediction=prediction)
        single, pair = v[:, :K], v[:, K : K + n_pairs]
        drop_one = v[:, K + n_pairs : 2 * K + n_pairs]
        drop_pair = v[:, 2 * K + n_pairs :]
        base = game.expected_value[None, None, :]
        pure = pair - single[:, i] - single[:, j] + base
        full = prediction[:, None, :] - drop_one[:, i] - drop_one[:, j] + drop_pair
        score = (pure**2 + full**2) / 2.0
        strengths[:, i, j] = score
        strengths[:, j, i] = score
    return strengths[..., 0] if n_out == 1 else strengths
