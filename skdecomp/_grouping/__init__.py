"""Groupers: estimators that learn a partition of the input columns."""

# SPDX-License-Identifier: BSD-3-Clause
