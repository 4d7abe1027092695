"""The values of coalitions: blocks of explained rows, hybrids, one call of the model.

A segment is a block of explained rows (or of (row, background row) games)
with the same number of groups in play and one set of coalitions; the
values of every coalition of every segment come from one run of the model
(``_evaluate``).
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd

from .._game._game import run_blocks
from ._kernels import hybrid_rows

_MAX_VALUES = 1 << 23


def _rows_first(values):
    # (n_rows, n_coal, n_out) -> (n_rows * n_out, n_coal), row-major in (row, output)
    n_rows, n_coal, n_out = values.shape
    return np.ascontiguousarray(values.transpose(0, 2, 1)).reshape(n_rows * n_out, n_coal)



# -- evaluation of coalitions ---------------------------------------------------
class _Segment:
    """Blocks of explained rows with K' groups in play, and their coalitions.

    Base coalition S (over K' groups) of block b is the set of groups
    ``groups[b, S]``. With ``background_rows`` set, block b is the anchored
    game of its row and that background row; else the mean game.
    """

    def __init__(self, coalitions, rows, groups, background_rows=None):
        self.coalitions = coalitions
        sizes = coalitions.sum(axis=1)
        self.inner = np.flatnonzero((sizes > 0) & (sizes < coalitions.shape[1]))
        self.empty = sizes == 0
        self.full = sizes == coalitions.shape[1]
        self.rows = rows
        self.groups = groups
        self.background_rows = background_rows


class _SegmentHybrids:
    """Hybrid rows of (block, inner coalition) pairs of several segments; picklable."""

    def __init__(self, table, background, labels, n_groups, segments):
        self.table = table
        self.background = background
        self.labels = labels
        self.n_groups = n_groups
        self.per_background = segments[0].background_rows is not None
        self.parts = [(s.rows, s.groups, s.background_rows) for s in segments]
        self.starts = np.cumsum([0] + [s.rows.size * s.inner.size for s in segments])
        # the inner coalitions of all segments, padded with False; the last
        # column stands for the groups not in play
        width = max(s.coalitions.shape[1] for s in segments)
        self.n_coal = np.array([s.inner.size for s in segments])
        self.offsets = np.cumsum(np.r_[0, self.n_coal])
        self.design = np.zeros((self.offsets[-1], width + 1), dtype=bool)
        for s, seg in enumerate(segments):
            block = seg.coalitions[seg.inner]
            self.design[self.offsets[s] : self.offsets[s + 1], : block.shape[1]] = block
        self.arrays = None
        if not table.is_frame:
            dtype = np.result_type(table.array, background.array)
            if dtype.kind in "biuf":
                self.arrays = (table.array.astype(dtype, copy=False),
                               background.array.astype(dtype, copy=False))

    def runs(self, pairs):
        """Runs of pairs of one block.

        Returns their explained and background rows, the first coalition and
        the length of each run, and the position of every group in the
        design (the last column for the groups not in play).
        """
        seg = np.searchsorted(self.starts, pairs, side="right") - 1
        block, coal = np.divmod(pairs - self.starts[seg], self.n_coal[seg])
        key = seg * (int(block.max()) + 1) + block
        first = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
        counts = np.diff(np.r_[first, pairs.size])
        seg, block = seg[first], block[first]
        rows = np.empty(first.size, dtype=np.int64)
        bg_rows = np.zeros(first.size, dtype=np.int64)
        positions = np.full((first.size, self.n_groups), self.design.shape[1] - 1)
        for s in np.unique(seg):
            at = np.flatnonzero(seg == s)
            r, groups, b = self.parts[s]
            rows[at] = r[block[at]]
            if b is not None:
                bg_rows[at] = b[block[at]]
            k = groups.shape[1]
            positions[at[:, None], groups[block[at]]] = np.arange(k)[None, :]
        starts = self.offsets[seg] + coal[first]
        return rows, bg_rows, starts, counts, positions

    def locate(self, pair):
        """Explained row, background row and groups in the coalition of one pair."""
        rows, bg_rows, starts, _, positions = self.runs(np.array([pair]))
        in_play = np.flatnonzero(self.design[starts[0], positions[0]])
        return rows[0], bg_rows[0] if self.per_background else None, in_play

    def __call__(self, pairs):
        rows, bg_rows, starts, counts, positions = self.runs(pairs)
        if self.arrays is not None:
            x, z = self.arrays
            n_z = 1 if self.per_background else z.shape[0]
            out = np.empty((pairs.size * n_z, x.shape[1]), dtype=x.dtype)
            hybrid_rows(
                x, z, self.design, self.labels, positions, rows, bg_rows, starts,
                counts, not self.per_background, out,
            )
            return out
        # DataFrames and arrays of objects
        run = np.repeat(np.arange(rows.size), counts)
        coal = starts[run] + np.arange(pairs.size) - np.repeat(
            np.r_[0, np.cumsum(counts)[:-1]], counts
        )
        cols = self.design[coal[:, None], positions[run][:, self.labels]]
        x, z = self.table, self.background
        if not self.per_background:
            return x.hybrids(z, rows[run], cols)
        if not x.is_frame:
            return np.where(cols, x.array[rows[run]], z.array[bg_rows[run]])
        return pd.DataFrame(
            {
                name: x.decode(
                    np.where(cols[:, j], x.data[j][rows[run]], z.data[j][bg_rows[run]]),
                    x.dtypes[j],
                )
                for j, name in enumerate(x.columns)
            },
            copy=False,
        )


def _game_segment_values(game, X, prediction, seg):
    """Values of the coalitions of one segment from the game's own values.

    For games that are not means over background rows (path-dependent,
    conditional): every group is in play, and blocks whose groups come in
    the same order share their coalitions over all groups.
    """
    n_b, n_c = seg.rows.size, seg.coalitions.shape[0]
    values = np.empty((n_b, n_c, game.n_outputs))
    values[:, seg.empty] = game.expected_value[None, None, :]
    values[:, seg.full] = prediction[seg.rows][:, None, :]
    inner = seg.coalitions[seg.inner]
    orders, which = np.unique(seg.groups, axis=0, return_inverse=True)
    for u in range(orders.shape[0]):
        blocks = np.flatnonzero(which.ravel() == u)
        masks = np.zeros((inner.shape[0], game.n_groups), dtype=bool)
        masks[:, orders[u]] = inner
        rows = seg.rows[blocks]
        Xr = X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]
        values[blocks[:, None], seg.inner[None, :]] = game.values(
            Xr, masks, prediction=prediction[rows]
        )
    return values


def _evaluate(game, X, prediction, segments):
    """Values of every coalition of every block: a list of (n_blocks, n_coal, n_out)."""
    if not segments:
        return []
    if not game.anchored:
        return [_game_segment_values(game, X, prediction, seg) for seg in segments]
    table, background = game.tables(X)
    make = _SegmentHybrids(table, background, game.labels, game.n_groups, segments)
    n_block = 1 if make.per_background else background.n_rows

    def describe(pair, row):
        r, b, groups = make.locate(pair)
        shown = ", ".join(str(k) for k in groups[:8])
        shown += ", ..." if groups.size > 8 else ""
        return (
            f"the hybrid of explained row {r} (groups [{shown}]) with background "
            f"row {row if b is None else b} (the other groups)"
        )

    n_pairs = int(make.starts[-1])
    flat = run_blocks(
        game.response, make, n_pairs, n_block, batch_size=game.batch_size,
        n_jobs=game.n_jobs, progress="model calls" if game.verbose else None,
        describe=describe,
    ) if n_pairs else np.empty((0, game.n_outputs))
    out = []
    for s, seg in enumerate(segments):
        n_b, n_c = seg.rows.size, seg.coalitions.shape[0]
        values = np.empty((n_b, n_c, game.n_outputs))
        base = (
            game.background_prediction[seg.background_rows]
            if make.per_background
            else np.broadcast_to(game.expected_value, (n_b, game.n_outputs))
        )
        values[:, seg.empty] = base[:, None, :]
        values[:, seg.full] = prediction[seg.rows][:, None, :]
        values[:, seg.inner] = flat[make.starts[s] : make.starts[s + 1]].reshape(
            n_b, seg.inner.size, game.n_outputs
        )
        out.append(values)
    return out


def _by_count(in_play):
    """Blocks by number of groups in play: K' -> (blocks, their groups in order)."""
    counts = in_play.sum(axis=-1)
    flat = in_play.reshape(-1, in_play.shape[-1])
    out = {}
    for k in np.unique(counts):
        blocks = np.flatnonzero(counts.reshape(-1) == k)
        groups = np.argsort(~flat[blocks], axis=1, kind="stable")[:, :k]
        out[int(k)] = (blocks, groups)
    return out


def _row_chunks(n_rows, per_row):
    step = max(1, _MAX_VALUES // max(1, per_row))
    return [np.arange(lo, min(n_rows, lo + step)) for lo in range(0, n_rows, step)]
