"""Interaction indices as weights on the Moebius components.

Every index of the interaction-index literature gives the value of a set S
of groups (``|S| <= k``, the order) as a weighted sum of the Moebius
components ``m(T)`` of the supersets T of S, with a weight that depends on
``|S|``, ``|T|`` and k only (Fumagalli, Muschalik, Hüllermeier, Hammer and
Herbinger, "Unifying Feature-Based Explanations with Functional ANOVA and
Cooperative Game Theory", AISTATS 2025; and the sources in
:data:`INDICES`)::

    I(S) = sum over T containing S of c(|S|, |T|, k) m(T)

The weights are exact rationals; the values are computed from the 2**K
components with one superset-sum pass per order, in numpy.
"""

# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass
from fractions import Fraction
from math import comb

import numpy as np

from .._config import MAX_EXACT_GROUPS
from .._partition import group_terms as index_terms
from .._tree import MAX_LEAF_ORDER

__all__ = [
    "INDICES", "IndexSpec", "exact_indices", "get_index", "index_order", "index_terms",
    "index_values",
]


def _bernoulli(n):
    """Bernoulli numbers B_0..B_n with B_1 = -1/2."""
    B = [Fraction(0)] * (n + 1)
    B[0] = Fraction(1)
    for m in range(1, n + 1):
        B[m] = -sum((comb(m + 1, j) * B[j] for j in range(m)), Fraction(0)) / (m + 1)
    return B


def _moebius(s, t, k):
    return Fraction(int(t == s))


def _sii(s, t, k):
    return Fraction(1, t - s + 1)


def _bii(s, t, k):
    return Fraction(1, 2 ** (t - s))


def _stii(s, t, k):
    if s < k:
        return Fraction(int(t == s))
    return Fraction(1, comb(t, k))


def _ksii(s, t, k):
    # k-SII(S) = sum_{S <= T', |T'| <= k} B_{|T'|-|S|} SII(T'), in Moebius terms
    B = _bernoulli(k)
    d = t - s
    return sum((comb(d, j) * B[j] * Fraction(1, d - j + 1)
                for j in range(0, min(k, t) - s + 1)), Fraction(0))


def _fsii(s, t, k):
    # Tsai, Yeh and Ravikumar (2023), Theorem 19
    if t == s:
        return Fraction(1)
    if t <= k:
        return Fraction(0)
    return ((-1) ** (k - s) * Fraction(s, k + s) * comb(k, s)
            * Fraction(comb(t - 1, k), comb(t + k - 1, k + s)))


def _fbii(s, t, k):
    # Tsai, Yeh and Ravikumar (2023), Faith-Banzhaf
    if t == s:
        return Fraction(1)
    if t <= k:
        return Fraction(0)
    return (-1) ** (k - s) * Fraction(1, 2 ** (t - s)) * comb(t - s - 1, k - s)


@dataclass(frozen=True)
class IndexSpec:
    """One interaction index: its name (as shapiq names it), weight and source.

    Attributes
    ----------
    name : str
    weight : callable
        ``weight(s, t, k)``: the exact weight of ``m(T)`` in ``I(S)`` for
        ``|S| = s``, ``|T| = t``, order k.
    source : str
    efficient : bool
        Whether the values of the non-empty terms sum to ``v(N) - v({})``;
        the empty term is then ``v({})``, the base value.
    order : int or None
        The fixed order of an index of single groups (1 for SV and BV).
    """

    name: str
    weight: object
    source: str
    efficient: bool = False
    order: int = None


#: The interaction indices, by name.
INDICES = {spec.name: spec for spec in (
    IndexSpec("Moebius", _moebius, "Rota (1964); Grabisch (1997)", True),
    IndexSpec("SII", _sii, "Grabisch and Roubens (1999)"),
    IndexSpec("k-SII", _ksii, "Bordt and von Luxburg (2023); Fumagalli et al. (2023)",
              True),
    IndexSpec("STII", _stii, "Sundararajan, Dhamdhere and Agarwal (2020)", True),
    IndexSpec("FSII", _fsii, "Tsai, Yeh and Ravikumar (2023)", True),
    IndexSpec("BII", _bii, "Grabisch and Roubens (1999)"),
    IndexSpec("FBII", _fbii, "Tsai, Yeh and Ravikumar (2023)"),
    IndexSpec("SV", _sii, "Shapley (1953)", True, 1),
    IndexSpec("BV", _bii, "Banzhaf (1965)", False, 1),
)}


def get_index(name):
    """The :class:`IndexSpec` of an index name, or a ValueError naming the choices."""
    if not isinstance(name, str):
        raise TypeError(
            f"index must be the name of one interaction index (a str), got "
            f"{type(name).__name__} {name!r:.60}; choose one of {list(INDICES)} and "
            "call interactions once per index."
        )
    if name not in INDICES:
        raise ValueError(f"Unknown interaction index {name!r}; choose one of {list(INDICES)}.")
    return INDICES[name]


def index_order(index, max_order, n_groups):
    """The :class:`IndexSpec` and order of a query, or a clear error."""
    from numbers import Integral

    spec = get_index(index)
    if (not isinstance(max_order, Integral) or isinstance(max_order, bool)
            or max_order < 1):
        raise ValueError(f"max_order must be a positive int, got {max_order!r}.")
    return spec, spec.order or min(int(max_order), n_groups)


def exact_indices(order, n_groups, tree):
    """Whether the values of an order are exact without a budget.

    Through model calls, and on the tree path above order
    ``MAX_LEAF_ORDER``, the indices need all 2**K components, so at most
    ``MAX_EXACT_GROUPS`` groups; on the tree path up to that order, any
    number of groups.
    """
    return (tree and order <= MAX_LEAF_ORDER) or n_groups <= MAX_EXACT_GROUPS


def index_values(components, index, max_order):
    """Values of an interaction index from the Moebius components.

    Parameters
    ----------
    components : ndarray of shape (..., 2**K)
        ``m(T)`` in mask order (bit k set when group k is in T).
    index : str
        A name of :data:`INDICES`.
    max_order : int
        The order k: terms of at most k groups.

    Returns
    -------
    values : ndarray of shape (..., n_terms)
        In the order of :func:`index_terms`. For efficient indices the
        empty term is ``m({})``, the base value.
    """
    spec = get_index(index)
    F = np.asarray(components, dtype=np.float64)
    n_masks = F.shape[-1]
    K = n_masks.bit_length() - 1
    k = spec.order or max_order
    sizes = np.zeros(n_masks, dtype=np.int64)
    for mask in range(1, n_masks):
        sizes[mask] = sizes[mask >> 1] + (mask & 1)
    masks = np.arange(n_masks)
    # per group, the masks without it, for the superset sums
    without = [masks[(masks & (1 << j)) == 0] for j in range(K)]
    terms = index_terms(K, k)
    out = np.empty(F.shape[:-1] + (len(terms),))
    pos = 0
    for s in range(0, k + 1):
        c = np.array([float(spec.weight(s, t, k)) if t >= s else 0.0
                      for t in range(K + 1)])
        A = F * c[sizes]
        for j, lo in enumerate(without):
            A[..., lo] += A[..., lo | (1 << j)]
        of_size = [sum(1 << g for g in S) for S in terms[pos:] if len(S) == s]
        out[..., pos:pos + len(of_size)] = A[..., of_size]
        pos += len(of_size)
    if spec.efficient:
        out[..., 0] = F[..., 0]
    return out
