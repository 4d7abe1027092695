"""Attribution methods: exact weight functions and sampled estimators."""

# SPDX-License-Identifier: BSD-3-Clause
