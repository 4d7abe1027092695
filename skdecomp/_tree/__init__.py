"""Exact decomposition of scikit-learn tree ensembles from their fitted trees."""

# SPDX-License-Identifier: BSD-3-Clause
