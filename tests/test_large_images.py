"""Large photos in bounded memory: groups as int arrays, batches bounded in
bytes, column names made only when asked for.

A 512x512 RGB photo has 786,432 columns once flattened; before, its groups
were Python int lists (about 48 bytes a column), its batches had a floor of
1,024 rows whatever their width, and its column names ("x0" ... "x786431")
were built on every fit and explanation. The bounds below are in bytes per
column (see benchmarks/bench_large_photo_memory.py for the 2048x2048 case).
"""

# SPDX-License-Identifier: BSD-3-Clause

import tracemalloc

import numpy as np
import pytest
from sklearn import config_context

from skdecomp import AdaptiveGrouper, Explainer, PatchGrouper
from skdecomp._config import batch_rows, working_memory_bytes

SIZE = 512
D = SIZE * SIZE * 3


def block_model(images):
    """Per-channel means of the four quadrants: a cheap model on images."""
    images = np.asarray(images, dtype=np.float64)
    h, w = images.shape[1] // 2, images.shape[2] // 2
    quads = images.reshape(len(images), 2, h, 2, w, 3).mean(axis=(2, 4))
    return quads.reshape(len(images), -1) @ np.linspace(-1.0, 1.0, 12)[:, None] / 255.0


@pytest.fixture(scope="module")
def photo():
    rng = np.random.default_rng(0)
    small = rng.integers(0, 256, (1, SIZE // 16, SIZE // 16, 3), dtype=np.uint8)
    return np.repeat(np.repeat(small, 16, axis=1), 16, axis=2)


def peak_bytes(fn):
    """Peak of the Python and numpy allocations of ``fn()``, in bytes."""
    tracemalloc.start()
    try:
        result = fn()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_patch_grouper_fit_takes_a_few_int64s_per_column(photo):
    peak, grouper = peak_bytes(lambda: PatchGrouper(64).fit(photo))
    # groups_ and labels_ (8 bytes each a column) and their sort; Python int
    # lists took about 60 bytes a column
    assert peak < 40 * D, peak / D
    assert grouper.n_groups_ == 64


def test_groups_of_image_groupers_are_int_arrays(photo):
    grouper = PatchGrouper(128).fit(photo)
    assert all(isinstance(g, np.ndarray) and g.dtype == np.int64 and g.ndim == 1
               for g in grouper.groups_)
    assert grouper.groups_[0][:4].tolist() == [0, 1, 2, 3]
    assert sum(g.size for g in grouper.groups_) == D
    agreed = AdaptiveGrouper(block_model, initial_groups=PatchGrouper(128), n_groups=4,
                             baseline="zeros").fit(photo)
    assert all(isinstance(g, np.ndarray) and g.dtype == np.int64 for g in agreed.groups_)
    assert all(isinstance(g, np.ndarray) for g in agreed.initial_groups_)
    np.testing.assert_array_equal(np.sort(np.concatenate(agreed.groups_)), np.arange(D))
    assert all(isinstance(g, np.ndarray) for h in agreed.history_ for g in h["groups"])


def test_explainer_fit_and_explain_of_a_photo_in_bounded_memory(photo):
    explainer = Explainer(block_model, method="occlusion", groups=PatchGrouper(128),
                          baseline="zeros")
    peak, _ = peak_bytes(lambda: explainer.fit(photo))
    # the rows and the baseline in float64 (16 bytes a column), labels_ and
    # groups_ (16), the grouper's (16); names of 786,432 columns took 60 more
    assert peak < 72 * D, peak / D
    peak, explanations = peak_bytes(lambda: explainer.explain(photo, methods=["occlusion"]))
    # one batch of hybrid rows (at most an eighth of the working memory) and a
    # few arrays of the photo's size
    batch = batch_rows(D) * D * 8
    assert batch <= working_memory_bytes() // 8
    assert peak < batch + 48 * D, (peak - batch) / D
    # the group names, not column names; the column names when asked for
    assert explainer.get_feature_names_out().tolist() == [f"g{k}" for k in range(16)]
    e = explanations["occlusion"]
    assert e.groups[0][:2] == ["x0", "x1"] and len(e.groups[1]) == D // 16
    assert e[:, [1, 2]].groups[0][0] == "x384"
    assert e.feature_names_in[:2].tolist() == ["x0", "x1"] and len(e.feature_names_in) == D


def test_batches_of_wide_rows_are_bounded_in_bytes():
    memory = working_memory_bytes()
    # narrow rows: at least 1,024 rows a call, as before
    assert batch_rows(10) >= 1024 and batch_rows(4096) == 1024
    # a 2048x2048 RGB photo: 1,024 rows of it would take 100 GB
    wide = 2048 * 2048 * 3
    assert 1024 * wide * 8 > memory
    rows = batch_rows(wide)
    assert 1 <= rows < 1024 and rows * wide * 8 <= max(memory // 8, wide * 8)
    with config_context(working_memory=64):
        assert batch_rows(D) == 1  # a row over an eighth of the working memory goes alone
        assert batch_rows(10) >= 1024


def test_an_explainer_on_a_wide_callable_sends_few_rows_a_call(photo):
    sizes = []

    def model(images):
        sizes.append(len(images))
        return block_model(images)

    with config_context(working_memory=64):
        explainer = Explainer(model, method="occlusion", groups=PatchGrouper(256),
                              baseline="zeros").fit(photo)
        explainer.transform(photo)
    assert explainer.game_.batch_size < 1024
    assert max(sizes) <= max(1, 64 * 2**20 // (8 * D))
