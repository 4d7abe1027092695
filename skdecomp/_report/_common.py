"""What the report's rooms share: the input error and the words for numbers."""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from .._config import MAX_EXACT_GROUPS

PICKLE_SUFFIXES = {".pkl", ".pickle", ".joblib", ".sav", ".p"}
#: fewer data rows than this cannot be fitted and explained meaningfully
MIN_ROWS = 10
#: a classification target may have at most this many classes, and at most one
#: class per two rows
MAX_CLASSES = 100
#: what ``write_report`` writes; the marker records the digests of the other two
REPORT_FILES = ("results.json", "index.html")
MARKER = ".skdecomp-report"
STAGING_PREFIX = ".skdecomp-staging-"
PSEUDO_FILESYSTEMS = ("/proc", "/sys", "/dev")


#: numbers beyond this size are refused: their squares (1e300 and more) leave no
#: room below the largest double (1.8e308) for the sums of squares behind
#: variances, R² and the distances between explanations
HUGE_VALUE = 1e150


class DataError(Exception):
    """A problem with the user's input: data, model, options or output folder.

    The message names the problem and says what to fix.
    """


# -- analysis ------------------------------------------------------------------------
#: model evaluations one sampled method may spend on one partition
SAMPLED_EVALUATIONS = 1_500_000
#: values below this fraction of the output's spread are round-off, shown as 0
ROUND_OFF = 1e-12
#: columns compared pairwise in the interaction heatmap
INTERACTION_COLUMNS = 10
#: columns of the interaction index (k-SII) through model calls: 2**(n + 1)
#: coalitions per explained row and background row (on the tree path, all
#: INTERACTION_COLUMNS)
INDEX_COLUMNS = 6
#: terms drawn in the figure of the interaction index
INDEX_TERMS = 10
#: rows of the regional tree (FDTree): its N x N matrices per column cost
#: K * N**2 model evaluations off the tree path (within REGION_EVALUATIONS, on
#: at least REGION_MIN_ROWS rows); on the tree path of an ensemble of at most
#: REGION_TREE_NODES nodes without categorical splits they come from the
#: leaves, at a cost that grows with the nodes more than with the rows
REGION_ROWS, REGION_ROWS_TREE, REGION_MIN_ROWS = 100, 300, 40
REGION_EVALUATIONS = 250_000
REGION_TREE_NODES = 20_000
#: regions are shown when they leave at most this share of the interaction loss
REGIONS_HELP = 0.5
#: rows on which the sources of disagreement are measured, at most and at least;
#: the conditional part costs about 2 * K * N**2 model evaluations for K
#: columns (twice that through model calls), kept within SOURCE_EVALUATIONS
SOURCE_ROWS, SOURCE_MIN_ROWS = 100, 20
SOURCE_EVALUATIONS = 100_000
#: columns named as carrying each source
SOURCE_COLUMNS = 3
#: a source below this share of the output's variance is not noticeable; one
#: source dominates when it is SOURCE_RATIO times the other
SOURCE_NOTICEABLE, SOURCE_RATIO = 0.01, 2.0
#: a column is flagged as possible leakage when its share of the attributions is
#: above LEAK_SHARE and it is LEAK_RATIO times the next column
LEAK_SHARE = 0.5
LEAK_RATIO = 10.0
#: a table with more columns than exact enumeration takes is wide: AGREED groups
#: one merge away from its columns are not explained a second time
WIDE_COLUMNS = MAX_EXACT_GROUPS
#: agreement levels, as root mean square difference / spread of the output
CLOSE, NOTICEABLE = 0.05, 0.15


def _clean(values, scale):
    """``values`` with entries below round-off (relative to ``scale``) set to 0."""
    a = np.asarray(values, dtype=float)
    return np.where(np.abs(a) < ROUND_OFF * scale, 0.0, a)


def _duration(seconds):
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def _share_of(fraction):
    """A fraction in [0, 1] as a percentage that reads 100% only when it is 1."""
    text = f"{fraction:.0%}"
    return f"{fraction:.1%}" if text == "100%" and fraction < 1 else text


def _agreement_words(rms):
    """How well explanations agree, from their RMS difference / spread of the output."""
    if rms == 0:
        return "agree exactly (up to round-off)"
    pct = 100.0 * rms
    if rms < CLOSE:
        return f"agree closely: they differ by {pct:.1f}% of the prediction spread"
    if rms < NOTICEABLE:
        return f"differ noticeably: by {pct:.0f}% of the prediction spread"
    return f"disagree strongly: by {pct:.0f}% of the prediction spread"


#: rows shown in a table or a figure; the rest are counted and left to results.json
TABLE_ROWS = 15


def _label(name, columns, width=28):
    """A short label of a group for plots: its column, or the first ones and a count."""
    if len(columns) == 1:
        text = str(columns[0])
    else:
        text = " + ".join(map(str, columns))
        if len(text) > width:
            text = f"{columns[0]} + {len(columns) - 1} more"
    return text if len(text) <= width else text[: width - 1] + "…"


#: the games the report explains under, and what each means in a sentence
IMPUTERS = {
    "marginal": "the absent columns of a row are filled from background rows, "
                "independently of the present ones",
    "path_dependent": "each tree follows its splits on the present columns and weighs "
                      "both branches of the absent ones by the training rows that took "
                      "them (the game of shap.TreeExplainer)",
    "conditional": "the absent columns are drawn given the present ones (a Gaussian "
                   "copula fitted on the data), so no row is one the data would not hold",
}
