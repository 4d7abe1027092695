"""Interaction index values of explained rows over terms of groups."""

# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
import pandas as pd

from ._result_checks import (
    check_base_values,
    check_names,
    check_standard_errors,
    check_term,
    real_array,
)

__all__ = ["InteractionExplanation"]


def _term_names(names, terms):
    """One distinct name per term: its groups' names joined by " x "."""

    def join(shown):
        return [" x ".join(shown[g] for g in t) if t else "()" for t in terms]

    out = join(names)
    if len(set(out)) == len(out):
        return out
    out = join([f"[{n}]" if " x " in n else n for n in names])
    if len(set(out)) == len(out):
        return out
    twice = next(n for n in out if out.count(n) > 1)
    raise ValueError(
        f"two interaction terms would both be named {twice!r}; give the groups "
        "names that stay apart when joined by ' x ' (rename the groups)."
    )


class InteractionExplanation:
    """Interaction index values of explained rows over terms of groups.

    Returned by :meth:`~skdecomp.Explainer.interactions`. A term is a tuple
    of group positions; the terms are the empty one first, then by size and
    lexicographically, up to ``max_order`` groups. Terms not listed (on the
    tree path of wide models, those whose groups share no root-to-leaf path)
    are exactly 0.

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_terms) or (n_rows, n_terms, n_outputs)
        Index value of every row and term.
    terms : list of tuple of int
        Group positions of each term.
    base_values : ndarray of shape (n_rows,) or (n_rows, n_outputs)
        Mean model output over the background.
    feature_names : list of str
        Name of each group.
    index : str
        Name of the index, such as ``"k-SII"``.
    max_order : int
        Largest number of groups in a term.
    output_names : list of str, default=None
        Names of the explained outputs.
    standard_errors : array-like of the shape of ``values``, default=None
        Standard error of each value, finite and >= 0, for an estimate from
        a budget of coalitions. None for exact values.

    Attributes
    ----------
    values, terms, base_values, feature_names, index, max_order, output_names
        As given.
    standard_errors : ndarray or None
        Standard error of each value, of the shape of ``values``: how far
        the estimate may be from the exact value; ``values +- 1.96 *
        standard_errors`` covers it about 95% of the time (see
        :ref:`sampled_interactions`). 0 for terms known exactly (the empty
        term of efficient indices, every term when all coalitions were
        evaluated); None for exact values.
    term_names : list of str
        ``"age x income"`` for the term of the groups age and income; the
        empty term is ``"()"``. A group whose own name holds ``" x "``
        (``"a x b"``, beside groups ``"a"`` and ``"b"``) is written in
        brackets, ``"[a x b]"``, when the names would otherwise repeat.
    """

    def __init__(self, values, terms, base_values, feature_names, index, max_order,
                 output_names=None, standard_errors=None):
        values = real_array(values, "values")
        se = check_standard_errors(standard_errors, values.shape)
        if feature_names is not None and not isinstance(feature_names, (str, bytes)):
            feature_names = list(feature_names)
        if isinstance(terms, (str, bytes)) or not hasattr(terms, "__iter__"):
            raise TypeError(f"terms must be a list of tuples of group positions, got {terms!r}.")
        terms = [check_term(t, len(feature_names) if hasattr(feature_names, "__len__")
                             else None) for t in terms]
        if len(set(terms)) != len(terms):
            twice = next(t for t in terms if terms.count(t) > 1)
            raise ValueError(f"the term {twice} is listed twice; give each term once.")
        if values.ndim not in (2, 3) or values.shape[1] != len(terms):
            raise ValueError(
                f"values have shape {values.shape}; expected (n_rows, {len(terms)}) "
                f"or (n_rows, {len(terms)}, n_outputs), one column per term."
            )
        n = values.shape[0]
        O = values.shape[2] if values.ndim == 3 else 1
        if (not isinstance(max_order, (Integral, np.integer))
                or isinstance(max_order, (bool, np.bool_)) or max_order < 0):
            raise TypeError(f"max_order must be a non-negative int, got {max_order!r}.")
        largest = max((len(t) for t in terms), default=0)
        if largest > max_order:
            raise ValueError(
                f"a term has {largest} groups, more than max_order={max_order}."
            )
        if not isinstance(index, str):
            raise TypeError(f"index must be the name of the index (a str), got {index!r}.")
        if feature_names is None:
            raise TypeError("feature_names must be a list of group names, got None.")
        K = len(feature_names) if hasattr(feature_names, "__len__") else -1
        self.feature_names = check_names(feature_names, K, "feature_names", str)
        base = check_base_values(base_values, n, O, values.ndim == 3)
        self.values = values
        self.standard_errors = se
        self.terms = terms
        self.base_values = base if values.ndim == 3 else base[:, 0]
        self.index = index
        self.max_order = int(max_order)
        self.output_names = (
            None if output_names is None
            else check_names(output_names, O, "output_names", str)
        )
        self.term_names = _term_names(self.feature_names, terms)

    @property
    def shape(self):
        return self.values.shape

    def __len__(self):
        return self.values.shape[0]

    def __repr__(self):
        return (f"InteractionExplanation(index={self.index!r}, max_order={self.max_order}, "
                f"shape={self.values.shape})")

    def __getitem__(self, rows):
        """The explanation of a selection of rows (an int, slice or index array)."""
        if isinstance(rows, tuple):
            raise TypeError("InteractionExplanation selects rows only: use [rows].")
        if isinstance(rows, (bool, np.bool_)):
            raise TypeError("cannot select rows with a bool; give positions or a mask.")
        if isinstance(rows, (int, np.integer)):
            rows = [int(rows)]
        return InteractionExplanation(
            self.values[rows], self.terms, self.base_values[rows], self.feature_names,
            self.index, self.max_order, self.output_names,
            None if self.standard_errors is None else self.standard_errors[rows],
        )

    def to_frame(self, standard_errors=False):
        """Return the values as a DataFrame of rows by terms, for one output.

        Parameters
        ----------
        standard_errors : bool, default=False
            Give the standard errors instead of the values, in the same
            layout.

        Returns
        -------
        frame : DataFrame
            One column per term (named like ``"age x income"``), the empty
            term left out.
        """
        if self.values.ndim == 3:
            raise ValueError(
                f"{self.values.shape[2]} outputs do not fit one table; explain one "
                "output (target=...) first."
            )
        v = self.values
        if standard_errors:
            if self.standard_errors is None:
                raise ValueError(
                    f"the {self.index} values are exact and have no standard errors; "
                    "call to_frame() for the values."
                )
            v = self.standard_errors
        return pd.DataFrame(v[:, 1:], columns=self.term_names[1:])

    def summary(self, top=None):
        """Return the global summary of the terms, strongest first.

        Parameters
        ----------
        top : int or None, default=None
            Keep the ``top`` strongest terms; None keeps all.

        Returns
        -------
        summary : DataFrame
            One row per non-empty term, indexed by its name, with its
            ``order`` (number of groups), ``mean_abs`` (mean absolute value
            over the rows) and ``mean`` (signed mean), sorted by ``mean_abs``
            (ties keep the term order); for several outputs the means are
            over rows and outputs. For an estimate, also ``se_mean``, a bound
            on the standard error of ``mean``: the mean of the rows'
            standard errors (the rows share their draws).
        """
        if top is not None and (not isinstance(top, (int, np.integer))
                                or isinstance(top, bool) or top < 1):
            raise ValueError(f"top must be a positive int or None, got {top!r}.")
        v = self.values[:, 1:]
        if v.ndim == 3:
            v = np.moveaxis(v, 2, 1).reshape(-1, v.shape[1])
        columns = {
            "order": [len(t) for t in self.terms[1:]],
            "mean_abs": np.abs(v).mean(axis=0),
            "mean": v.mean(axis=0),
        }
        if self.standard_errors is not None:
            se = self.standard_errors[:, 1:]
            if se.ndim == 3:
                se = np.moveaxis(se, 2, 1).reshape(-1, se.shape[1])
            columns["se_mean"] = se.mean(axis=0)
        frame = pd.DataFrame(columns, index=pd.Index(self.term_names[1:], name="term"))
        frame = frame.sort_values("mean_abs", ascending=False, kind="stable")
        return frame if top is None else frame.iloc[:top]

    def matrix(self, order=2):
        """Return the values of the pairs as symmetric matrices.

        Parameters
        ----------
        order : int, default=2
            Only 2: the terms of two groups.

        Returns
        -------
        matrix : ndarray of shape (n_rows, K, K) or (n_rows, K, K, n_outputs)
            Entry (i, j) is the value of the pair of groups i and j; the
            diagonal holds the values of the single groups.
        """
        if order != 2 or self.max_order < 2:
            raise ValueError(
                f"matrix needs order=2 and terms of two groups (max_order={self.max_order})."
            )
        K = len(self.feature_names)
        out = np.zeros((self.values.shape[0], K, K) + self.values.shape[2:])
        for j, t in enumerate(self.terms):
            if len(t) == 1:
                out[:, t[0], t[0]] = self.values[:, j]
            elif len(t) == 2:
                out[:, t[0], t[1]] = self.values[:, j]
                out[:, t[1], t[0]] = self.values[:, j]
        return out

    def to_shapiq(self, i):
        """Return row i as a ``shapiq.InteractionValues`` (needs shapiq).

        Parameters
        ----------
        i : int
            Position of the row.

        Returns
        -------
        values : shapiq.InteractionValues
            The values of the row with its base value; ``estimated`` is True
            for an estimate (shapiq holds no standard errors).
        """
        import shapiq

        if self.values.ndim == 3:
            raise ValueError("to_shapiq takes one output; explain one output (target=...).")
        lookup = {t: j for j, t in enumerate(self.terms)}
        return shapiq.InteractionValues(
            values=self.values[i].copy(), index=self.index, max_order=self.max_order,
            n_players=len(self.feature_names), min_order=0,
            interaction_lookup=lookup, estimated=self.standard_errors is not None,
            baseline_value=float(np.ravel(self.base_values[i])[0]),
        )
