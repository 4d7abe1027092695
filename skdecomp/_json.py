"""Results as strict JSON: undefined numbers become null, with the reason recorded."""

# SPDX-License-Identifier: BSD-3-Clause

import math
from numbers import Real

__all__ = ["strict_json"]

#: why a number can be undefined, by the last key of its path
REASONS = {
    "r2": "R² is undefined when the scored target is constant (its variance is 0).",
    "auc": "ROC AUC is undefined when the scored rows hold one class only.",
    "accuracy": "accuracy is undefined without scored rows.",
    "output_spread": "the spread of the model's output is undefined on fewer than "
                     "two rows.",
}
DEFAULT_REASON = ("not a finite number: the quantity is undefined here (e.g. a ratio "
                  "to a spread of 0)")


def strict_json(results):
    """A copy of ``results`` that ``json.dumps(..., allow_nan=False)`` accepts.

    Every NaN or infinite number becomes ``None`` (JSON ``null``), and a list
    ``"undefined"`` is added at the top level, one entry per such number:
    its ``path`` (keys and positions joined by dots, e.g. ``"score.r2"``),
    its ``value`` as text (``"nan"``, ``"inf"``) and the ``reason``.

    Parameters
    ----------
    results : dict
        JSON-like data: dicts, lists, tuples, strings, numbers, booleans,
        None (NumPy scalars and arrays are converted).

    Returns
    -------
    results : dict
        The same data with every number finite or None.
    """
    undefined = []

    def walk(value, path):
        if isinstance(value, dict):
            return {str(k): walk(v, path + [str(k)]) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v, path + [str(i)]) for i, v in enumerate(value)]
        if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
            return walk(value.tolist(), path)  # NumPy arrays and scalars
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return value
        if isinstance(value, Real):
            value = float(value) if not isinstance(value, int) else value
            if isinstance(value, float) and not math.isfinite(value):
                key = next((p for p in reversed(path) if not p.isdigit()), "")
                undefined.append({
                    "path": ".".join(path),
                    "value": str(value),
                    "reason": REASONS.get(key, DEFAULT_REASON),
                })
                return None
            return value
        return value

    out = walk(dict(results), [])
    if undefined:
        out["undefined"] = list(out.get("undefined") or []) + undefined
    return out
