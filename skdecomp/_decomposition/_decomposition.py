"""The result of a grouped functional decomposition.

See the user guide, :ref:`functional_decomposition` and
:ref:`explainers_as_weights`.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd

from ._kernels import (
    inverse_moebius_transform,
    popcounts,
    size_weighted_attributions,
)
from .._partition import subset_name

__all__ = ["Decomposition", "EXACT_METHODS", "METHOD_ALIASES", "size_weights"]

# Each exact explainer is a weighted sum of components,
# phi_k = sum_{U contains k} w(|U|) F_U  (user guide, "explainers_as_weights"):
EXACT_METHODS = ("shapley", "banzhaf", "occlusion", "arch", "pdp", "pfi")
# Under a data background, PDP is Arch and PFI is Occlusion.
METHOD_ALIASES = {"pdp": "arch", "pfi": "occlusion"}


def size_weights(method, n_groups):
    """Weight w(|U|) of a component of size |U| for an exact method.

    ========== ================= ===============================
    method      w(|U|), |U| >= 1   meaning
    ========== ================= ===============================
    shapley     1 / |U|            interaction split evenly
    banzhaf     2 ** (1 - |U|)     interaction halved per member
    occlusion   1                  full effect (leave-group-out)
    arch        1 if |U| == 1      pure effect (group alone)
    ========== ================= ===============================
    """
    method = METHOD_ALIASES.get(method, method)
    sizes = np.arange(n_groups + 1, dtype=np.float64)
    w = np.zeros(n_groups + 1)
    if method == "shapley":
        w[1:] = 1.0 / sizes[1:]
    elif method == "banzhaf":
        w[1:] = 2.0 ** (1.0 - sizes[1:])
    elif method == "occlusion":
        w[1:] = 1.0
    elif method == "arch":
        if n_groups >= 1:
            w[1] = 1.0
    else:
        raise ValueError(
            f"Unknown exact method {method!r}; choose one of {list(EXACT_METHODS)}."
        )
    return w


def _check_order(value, name):
    """Raise unless ``value`` is a number of groups, an int >= 0."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{name}={value!r} must be an int, a number of groups (0 for the "
            "baseline, 1 for main effects, 2 for pairs, ...)."
        )
    if value < 0:
        raise ValueError(
            f"{name}={value} is negative; give a number of groups >= 0 (0 for "
            "the baseline, 1 for main effects, 2 for pairs, ...)."
        )


class Decomposition:
    """Grouped functional decomposition of a model at explained points.

    Holds the components F_U(x) for every subset U of the K groups and every
    explained row, with ``sum_U F_U(x) = f(x)`` and ``F_{} = E_B f``
    (see :ref:`functional_decomposition`; Laberge et al., 2024). Subsets are
    indexed by bitmask: bit k set means group k is in the subset.

    Usually obtained from :meth:`Explainer.decompose
    <skdecomp.Explainer.decompose>` rather than built directly.

    Parameters
    ----------
    components : ndarray of shape (n_samples, n_outputs, 2**n_groups)
        Component F_U(x) of every subset U (by bitmask) for every explained
        row and output.
    group_names : list of str
        Name of each group.
    output_names : list of str
        Name of each model output.
    prediction : ndarray of shape (n_samples, n_outputs)
        The model output f(x) for every explained row.

    Attributes
    ----------
    n_samples : int
        Number of explained rows.
    n_groups : int
        Number of groups K.
    n_outputs : int
        Number of model outputs.
    group_names : list of str
        Name of each group.
    output_names : list of str
        Name of each model output.

    References
    ----------
    G. Laberge, Y. Pequignot, M. Marchand and F. Khomh. "Tackling the XAI
    Disagreement Problem with Regional Explanations". AISTATS 2024.
    """

    def __init__(self, components, group_names, output_names, prediction):
        components = np.asarray(components, dtype=np.float64)
        if components.ndim != 3:
            raise ValueError(
                f"components have shape {components.shape}; expected "
                "(n_samples, n_outputs, 2**n_groups), one value per subset of "
                "groups (by bitmask) for every row and output."
            )
        n_samples, n_outputs, n_masks = components.shape
        if n_masks < 1 or n_masks & (n_masks - 1):
            raise ValueError(
                f"components have {n_masks} subsets on their last axis; expected "
                "2**n_groups, one per subset of groups (by bitmask)."
            )
        n_groups = n_masks.bit_length() - 1
        group_names = list(group_names)
        output_names = list(output_names)
        if len(group_names) != n_groups:
            raise ValueError(
                f"{len(group_names)} group names for {n_groups} groups (2**{n_groups} "
                "subsets of components); give one name per group."
            )
        if len(output_names) != n_outputs:
            raise ValueError(
                f"{len(output_names)} output names for {n_outputs} outputs; give "
                "one name per output."
            )
        prediction = np.asarray(prediction, dtype=np.float64)
        if prediction.ndim == 1 and n_outputs == 1:
            prediction = prediction[:, None]
        if prediction.shape != (n_samples, n_outputs):
            raise ValueError(
                f"prediction has shape {prediction.shape}; expected "
                f"({n_samples}, {n_outputs}), the model output for every row "
                "and output of the components."
            )
        self._F = components
        self.group_names = group_names
        self.output_names = output_names
        self._prediction = prediction
        self.n_samples, self.n_outputs = n_samples, n_outputs
        self.n_groups = n_groups

    def _squeeze(self, arr):
        # (n, n_outputs, ...) -> (n, ..., n_outputs), output axis dropped if single
        arr = np.moveaxis(arr, 1, -1)
        return arr[..., 0] if self.n_outputs == 1 else arr

    # -- subsets --------------------------------------------------------------
    def mask(self, subset):
        """Bitmask of a subset given as group indices or group names.

        Parameters
        ----------
        subset : int, str or iterable of int or str
            A group, or the groups of the subset, by index or by name.

        Returns
        -------
        mask : int
            The bitmask: bit k is set when group k is in the subset.
        """
        if isinstance(subset, (str, int, np.integer)):
            subset = (subset,)
        elif not hasattr(subset, "__iter__"):
            raise KeyError(
                f"A subset holds group indices or names, got {subset!r}; give a "
                "group, or a tuple of groups, by index or by name."
            )
        mask = 0
        for g in subset:
            if isinstance(g, str):
                if g not in self.group_names:
                    raise KeyError(f"Unknown group {g!r}; groups are {self.group_names}.")
                k = self.group_names.index(g)
            elif isinstance(g, (int, np.integer)) and not isinstance(g, bool):
                k = int(g)
                if not 0 <= k < self.n_groups:
                    raise KeyError(
                        f"Group index {k} out of range for {self.n_groups} groups."
                    )
            else:
                raise KeyError(f"A subset holds group indices or names, got {g!r}.")
            mask |= 1 << k
        return mask

    @property
    def subsets(self):
        """All subsets as tuples of group indices, in bitmask order."""
        return [
            tuple(k for k in range(self.n_groups) if m >> k & 1)
            for m in range(1 << self.n_groups)
        ]

    def __getitem__(self, subset):
        """Component F_U for subset U: shape (n_samples,) or (n_samples, n_outputs)."""
        F = self._F[:, :, self.mask(subset)]
        return F[:, 0].copy() if self.n_outputs == 1 else F.copy()

    # -- values ---------------------------------------------------------------
    @property
    def components(self):
        """All components: (n_samples, 2**n_groups[, n_outputs])."""
        return self._squeeze(self._F)

    @property
    def expected_value(self):
        """E_B f, the component of the empty subset: scalar or (n_outputs,)."""
        base = self._F[0, :, 0]
        return float(base[0]) if self.n_outputs == 1 else base.copy()

    @property
    def prediction(self):
        """Model output f(x): (n_samples,) or (n_samples, n_outputs)."""
        return self._prediction[:, 0] if self.n_outputs == 1 else self._prediction.copy()

    def coalition_values(self):
        """Coalition values v_x(S) for every subset S.

        The coalition value of S is the sum of the components of the subsets
        of S (the inverse Möbius transform).

        Returns
        -------
        values : ndarray of shape (n_samples, 2**n_groups[, n_outputs])
            ``v_x(S)`` for every subset S, in bitmask order.
        """
        flat = self._F.reshape(-1, self._F.shape[2])
        v = inverse_moebius_transform(flat).reshape(self._F.shape)
        return self._squeeze(v)

    def order(self, size):
        """Sum of all components of subsets of a given size.

        Parameters
        ----------
        size : int
            Number of groups in the subsets: 0 for the baseline, 1 for the
            main effects, 2 for the pairwise interactions, and so on.

        Returns
        -------
        total : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Sum of ``F_U(x)`` over the subsets U with ``size`` groups.
        """
        _check_order(size, "size")
        F = self._F[:, :, popcounts(self.n_groups) == size].sum(axis=2)
        return F[:, 0] if self.n_outputs == 1 else F

    def completeness_error(self):
        """Largest gap between the sum of the components and the prediction.

        Returns
        -------
        error : float
            ``max |sum_U F_U(x) - f(x)|`` over rows and outputs; 0 up to
            rounding.
        """
        return float(np.max(np.abs(self._F.sum(axis=2) - self._prediction), initial=0.0))

    def attributions(self, method="shapley", weights=None):
        """Compute the attributions of an exact method from the components.

        Each method weighs a component ``F_U`` by ``w(|U|)`` for every group
        in U (see :ref:`explainers_as_weights`): Shapley ``1 / |U|``, Banzhaf
        ``2 ** (1 - |U|)``, Occlusion (PFI) 1, and Arch (PDP) 1 for single
        groups only.

        Parameters
        ----------
        method : {"shapley", "banzhaf", "occlusion", "arch", "pdp", "pfi"}, \
                default="shapley"
            The exact method; "pdp" is "arch" and "pfi" is "occlusion".
        weights : ndarray or None, default=None
            Weights to use instead of the method's: of shape (K + 1,) by
            component size, or (2**K, K) by component and group (the weights
            of a hierarchy, for the Owen and Winter values).

        Returns
        -------
        attributions : ndarray of shape (n_samples, n_groups[, n_outputs])
            Attribution of each group for every explained row.
        """
        flat = self._F.reshape(-1, self._F.shape[2])
        if weights is not None and np.ndim(weights) == 2:
            # one weight per component and group (a hierarchy's)
            phi = flat @ np.asarray(weights, dtype=np.float64)
        else:
            w = size_weights(method, self.n_groups) if weights is None else weights
            phi = size_weighted_attributions(flat, w)
        phi = phi.reshape(self.n_samples, self.n_outputs, self.n_groups)
        return self._squeeze(phi)

    def to_frame(self, max_order=None):
        """Return the components as a DataFrame, one column per subset.

        Rows are explained samples (and outputs, as a second index level,
        when there are several outputs); columns are subsets labelled by
        their group names joined with ``" & "``, the empty subset being
        ``"baseline"``.

        Parameters
        ----------
        max_order : int or None, default=None
            Keep subsets of at most this many groups; None keeps all.

        Returns
        -------
        frame : DataFrame
            One column per subset and one row per explained sample (and
            output).
        """
        sizes = popcounts(self.n_groups)
        keep = np.arange(1 << self.n_groups)
        if max_order is not None:
            _check_order(max_order, "max_order")
            keep = keep[sizes <= max_order]
        labels = [subset_name(int(m), self.group_names) for m in keep]
        data = self._F[:, :, keep]
        if self.n_outputs == 1:
            return pd.DataFrame(data[:, 0, :], columns=labels)
        index = pd.MultiIndex.from_product(
            [range(self.n_samples), self.output_names], names=["sample", "output"]
        )
        return pd.DataFrame(data.reshape(-1, keep.size), index=index, columns=labels)

    def __repr__(self):
        return (
            f"Decomposition(n_samples={self.n_samples}, n_groups={self.n_groups}, "
            f"n_outputs={self.n_outputs})"
        )
