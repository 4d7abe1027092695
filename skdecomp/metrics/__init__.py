"""Faithfulness of grouped attributions and disagreement between explanations.

Every faithfulness metric here is an *unfaithfulness* score: lower is better
and 0 is perfect, except the pixel-flipping curves of saliency maps of
images, :func:`relevance_curves` and :func:`symmetric_relevance_gain`, whose
symmetric relevance gain is *higher* for better maps. Perturbations act on
whole groups against the explainer's background (see the user guide,
:ref:`why_disagree`). For explained rows x and a subset S of groups,

- the insertion game is ``w_ins(S) = v_x(S) - v_x({})``: the change of the
  model when the groups in S are inserted into background rows;
- the deletion game is ``w_del(S) = v_x(all) - v_x(all minus S)``: the drop
  of the model when the groups in S are replaced by background values;

with ``v_x(S) = mean_{z in B} f(x_{G_S}, z_{-G_S})``. An attribution vector
``phi`` predicts both by ``phi(S) = sum_{k in S} phi_k``.

Each metric takes a fitted :class:`~skdecomp.Explainer` and rows ``X`` and
evaluates the games with model calls; given ``decomposition=`` (the exact
:class:`~skdecomp.Decomposition` of the same rows) it evaluates them in closed
form from the components instead, ``w_ins(S) = sum_{{} != U subset of S} F_U``
and ``w_del(S) = sum_{U meets S} F_U``, with no model call. Coalitions are
enumerated with their exact weights when there are at most ``n_samples`` of
them, and drawn from the metric's distribution otherwise, for any number of
groups (coalitions are boolean matrices of groups).

X may also be a polars DataFrame, or a polars LazyFrame, collected once per
call.
"""

# SPDX-License-Identifier: BSD-3-Clause

from ._disagreement import disagreement, metric_disagreement
# METRICS, the faithfulness metrics by name, stays importable from here
from ._faithfulness import (
    METRICS,
    deletion_error,
    faithfulness_correlation,
    infidelity,
    insertion_error,
    sensitivity_n,
    shapley_weighted_faithfulness,
)
from ._relevance_curves import relevance_curves, symmetric_relevance_gain

__all__ = [
    "deletion_error",
    "disagreement",
    "faithfulness_correlation",
    "infidelity",
    "insertion_error",
    "metric_disagreement",
    "relevance_curves",
    "sensitivity_n",
    "shapley_weighted_faithfulness",
    "symmetric_relevance_gain",
]
