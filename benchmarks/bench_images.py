"""Per-image AGREED on 32x32 images from 4x4 patches, with the bundled model.

Prints the time per image and the model calls (hybrid images sent to the
model, and the number of batches) of ``AdaptiveGrouper`` in image mode (see
the user guide, ``agreed``), for images grouped one at a time and in
lockstep, merging to the stopping rule ``rel_tol=0.25`` and down to 4 groups.

Run: python benchmarks/bench_images.py [--n-images 20]
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import time

import numpy as np

from skdecomp import AdaptiveGrouper, PatchGrouper
from skdecomp.datasets import make_shape_images


def run(images, model, *, lockstep, **params):
    grouper = AdaptiveGrouper(
        model, initial_groups=PatchGrouper(4), baseline="zeros", target=1, **params
    )
    calls = batches = 0
    merges = []
    start = time.perf_counter()
    chunks = [images] if lockstep else [img[None] for img in images]
    for chunk in chunks:
        grouper.fit(chunk)
        calls += grouper.model_calls_
        batches += grouper.model_batches_
        merges.extend(len(m) for m in grouper.merges_)
    elapsed = time.perf_counter() - start
    n = len(images)
    return elapsed / n, calls / n, batches / n, float(np.mean(merges))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-images", type=int, default=20)
    args = parser.parse_args()
    data = make_shape_images(1000, random_state=0)
    images = data.images[data.test_index][: args.n_images]
    model = data.model
    # warm-up (imports, BLAS)
    run(images[:1], model, lockstep=True, n_groups=60)

    print(f"AGREED on {len(images)} images of 32x32 pixels from 4x4 patches "
          "(64 groups, 112 edges); model: MLPClassifier(24) on flattened pixels,")
    print("explaining P(vertical bar), baseline = zeros")
    print(f"{'stopping rule':<16}{'mode':<14}{'s / image':>10}{'model rows':>12}"
          f"{'batches':>9}{'merges':>8}")
    for label, params in (("rel_tol=0.25", {"rel_tol": 0.25}), ("n_groups=4", {"n_groups": 4})):
        for mode, lockstep in (("one by one", False), ("lockstep", True)):
            t, calls, batches, merges = run(images, model, lockstep=lockstep, **params)
            print(f"{label:<16}{mode:<14}{t:>10.4f}{calls:>12.0f}{batches:>9.1f}{merges:>8.1f}")
    print("model rows per image: 2 (x, b) + 2 per initial group (128) + 2 per edge (224), "
          "then 2 per edge of each new group")


if __name__ == "__main__":
    main()
