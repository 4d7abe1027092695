"""Whether a model takes the tree path: extraction checked against the model."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._dispatch import tree_predict
from ._extract import extract_tree_model
from ._treemodel import TreeUnsupportedError

__all__ = ["select_algorithm"]


def select_algorithm(algorithm, estimator, response, background):
    """Tree model for the explained output, and a description of the choice.

    Parameters
    ----------
    algorithm : {"auto", "tree", "model_agnostic"}
    estimator : fitted estimator
    response : ResponseFunction
    background : array-like or DataFrame
        Rows on which the flattened trees must reproduce the model output.

    Returns
    -------
    tree_model : TreeModel or None
    algorithm_ : str
        ``"tree"``, ``"model_agnostic"``, or ``"model_agnostic (<reason>)"``
        when "auto" could not take the tree path.

    Raises
    ------
    ValueError
        When ``algorithm="tree"`` and the model has no tree path.
    """
    if algorithm == "model_agnostic":
        return None, "model_agnostic"
    try:
        tree_model = extract_tree_model(estimator, response)
        expected = response(background)
        got = tree_predict(tree_model, background)
        scale = 1.0 + float(np.max(np.abs(expected), initial=0.0))
        diff = float(np.max(np.abs(got - expected), initial=0.0))
        if not diff <= 1e-9 * scale:
            raise TreeUnsupportedError(
                f"the flattened trees of {tree_model.description} do not "
                f"reproduce its output on the background (max difference {diff:.3g})"
            )
    except Exception as exc:
        if not isinstance(exc, TreeUnsupportedError):
            if algorithm == "tree":
                raise
            return None, f"model_agnostic (the trees could not be read: {exc!r})"
        if algorithm == "tree":
            raise ValueError(
                f"algorithm='tree' cannot be used: {exc}. Use algorithm='auto' "
                "or 'model_agnostic' to explain this model through model calls."
            ) from None
        return None, f"model_agnostic ({exc})"
    return tree_model, "tree"

