"""Coalition values of a model over groups of columns (paper-spec §1.2, §7.1).

For explained rows x, background rows z and a partition into K groups, the
coalition value of a subset S of groups is

    v_x(S) = mean_{z in B} f(x_{G_S}, z_{-G_S}).

Hybrid rows are built at the level of the raw input columns, so a pipeline
that one-hot encodes a column sees that column move as one. Rows are built and
sent to the model in chunks of at most ``batch_size`` rows.
"""


# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils.parallel import Parallel, delayed

from ._kernels import mean_over_background
from .._table import column_masks

__all__ = ["coalition_values"]


def _evaluate_chunk(response, table, background, rows, cmasks, average):
    data = table.hybrids(background, rows, cmasks)
    preds = np.ascontiguousarray(response(data))
    if not average:
        return preds
    return mean_over_background(preds, background.n_rows)


def _evaluate_chunks(response, table, background, chunks, average):
    return np.concatenate(
        [
            _evaluate_chunk(response, table, background, rows, cmasks, average)
            for rows, cmasks in chunks
        ],
        axis=0,
    )


def coalition_values(
    response,
    table,
    background,
    labels,
    masks,
    *,
    batch_size,
    n_jobs=None,
    average=True,
    progress=None,
):
    """Coalition values v_x(S) for every explained row and every mask.

    Parameters
    ----------
    response : ResponseFunction
    table : Table of explained rows
    background : Table of background rows
    labels : ndarray of shape (n_features,), group of each column
    masks : ndarray of int64 bitmasks, or bool of shape (n_masks, n_groups),
        the coalitions to evaluate (the boolean form has no limit on the
        number of groups)
    batch_size : int, maximum rows per model call (at least one pair of
        ``background.n_rows`` rows is sent at once)
    n_jobs : int or None, joblib workers over chunks
    average : bool, default=True
        Average over the background rows. When False, return the model
        output at every hybrid, f(x^n_{G_S}, z^m_{-G_S}): the anchored values
        behind the N x N matrices of paper-spec §1.2 and §4.2.
    progress : str or None
        Show a progress bar with this label over the chunks.

    Returns
    -------
    values : ndarray of shape (n_rows, n_masks, n_outputs), or
        (n_rows, n_masks, n_background, n_outputs) when ``average=False``.
    """
    masks = np.asarray(masks)
    if not (masks.ndim == 2 and masks.dtype == bool):
        masks = masks.astype(np.int64, copy=False)
    n_rows, n_masks, n_bg = table.n_rows, masks.shape[0], background.n_rows
    n_pairs = n_rows * n_masks
    cmask_table = column_masks(masks, labels)
    n_workers = effective_n_jobs(n_jobs)
    pairs_per_chunk = max(1, int(batch_size) // n_bg)
    if n_workers > 1:
        # at least one chunk per worker, so that small jobs run in parallel too
        pairs_per_chunk = max(1, min(pairs_per_chunk, -(-n_pairs // n_workers)))
    starts = range(0, n_pairs, pairs_per_chunk)

    def chunk(start):
        pairs = np.arange(start, min(start + pairs_per_chunk, n_pairs))
        return pairs // n_masks, cmask_table[pairs % n_masks]

    if n_pairs == 0:
        raise ValueError("coalition_values needs at least one row and one mask.")
    if n_workers == 1 or len(starts) == 1:
        results = (
            _evaluate_chunk(response, table, background, *chunk(s), average)
            for s in starts
        )
        total = len(starts)
    else:
        # A task takes several chunks, so the model is sent to workers a few
        # times rather than once per chunk; joblib returns tasks in order, so
        # results do not depend on n_jobs or on the backend (e.g. dask).
        per_task = -(-len(starts) // (4 * n_workers))
        tasks = [starts[i : i + per_task] for i in range(0, len(starts), per_task)]
        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_evaluate_chunks)(
                response, table, background, [chunk(s) for s in task], average
            )
            for task in tasks
        )
        total = len(tasks)
    if progress:
        from tqdm.auto import tqdm

        results = tqdm(results, total=total, desc=progress)
    results = list(results)
    values = np.concatenate(results, axis=0)
    if average:
        return values.reshape(n_rows, n_masks, -1)
    return values.reshape(n_rows, n_masks, n_bg, -1)
