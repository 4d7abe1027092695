"""Display classes (scikit-learn's Display pattern). matplotlib is imported lazily.

The Displays are public through :mod:`skdecomp.plot`, which lists them.
"""

# SPDX-License-Identifier: BSD-3-Clause
