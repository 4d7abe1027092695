"""The analysis behind ``skdecomp report`` and ``skdecomp demo``, and its HTML page.

One job per module, data flowing one way:

- ``_table``: reading the table, cleaning its columns, the data checks;
- ``_models``: the models the report fits, and the model files it loads;
- ``_options``: checks of the groups and methods, before any model work;
- ``_explain``: the explanation of the rows over one partition;
- ``_verdict``: the conclusion in plain sentences;
- ``_analysis``: :func:`analyse`, which runs them all (plain data, no HTML);
- ``_figures``: the figures, from the results only;
- ``_page``: the HTML page, from Jinja2 templates with autoescaping;
- ``_output``: writing the files safely.
"""

# SPDX-License-Identifier: BSD-3-Clause

from ._analysis import analyse
from ._common import DataError
from ._figures import make_figures
from ._models import (
    ESTIMATORS,
    allowed_model_types,
    check_estimator,
    load_model,
    make_model,
)
from ._options import check_exact_limit, check_methods, load_groups
from ._output import check_output, write_report
from ._page import render_html
from ._table import (
    check_drop,
    check_target,
    days_since_epoch,
    is_classification,
    load_table,
    parse_dates_of,
    prepare_table,
)

__all__ = [
    "DataError",
    "ESTIMATORS",
    "load_table",
    "load_model",
    "load_groups",
    "check_target",
    "check_drop",
    "check_estimator",
    "prepare_table",
    "check_output",
    "check_exact_limit",
    "check_methods",
    "make_model",
    "analyse",
    "write_report",
    "render_html",
    "make_figures",
    "allowed_model_types",
    "is_classification",
    "parse_dates_of",
    "days_since_epoch",
]
