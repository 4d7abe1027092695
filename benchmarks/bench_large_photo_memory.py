"""Peak memory of the groupers and methods on one 2048x2048 RGB photo.

One photo of 2048 x 2048 x 3 values (12 MiB as uint8, 12.6 million columns
once flattened) is explained with a cheap callable model: the per-channel
means of its 8x8 blocks through a fixed random linear map to 10 outputs
(numpy only, one image at a time, ``target=0``). Every case runs in a fresh
Python process, which first loads the photo and calls the model once; the
case's cost is its peak resident memory (``ru_maxrss``) above that point,
so the photo and the model's own use are not counted. A case is stopped
once it passes ``--cap`` MB above that point (printed as ``> cap``).

The target is 1,024 MB above the model's own use for every case. Budgets
are small (64 patches of 256 pixels, ``n_samples=512``, the least
kernel_shap takes on 64 groups; AdaptiveGrouper merges the 64 patches to 16
groups, the Owen value's hierarchy to 8) so the whole script runs in about
ten minutes.

Run: python benchmarks/bench_large_photo_memory.py [--size 2048] [--cap 6000]
     [--cases occlusion,arch]

Before (2048x2048, 2 cores, 24 GiB; MB above the model's own use; an
``error`` is a batch numpy refused to allocate), at commit d1038dc::

    case                            MB       s  under 1024 MB
    model only                       0     0.0  yes
    fit PatchGrouper               725     1.8  yes
    fit SuperpixelGrouper          888     7.1  yes
    fit AdaptiveGrouper           2984   159.3  no
    occlusion                   > 6000          no
    arch                        > 6000          no
    kernel_shap                  error          no  (numpy: Unable to allocate 48.0 GiB)
    permutation_shap             error          no  (numpy: Unable to allocate 47.2 GiB)
    lime                         error          no  (numpy: Unable to allocate 48.0 GiB)
    rise                         error          no  (numpy: Unable to allocate 48.0 GiB)
    integrated_gradients         error          no  (numpy: Unable to allocate 95.2 GiB)
    owen                         error          no  (numpy: Unable to allocate 46.1 GiB)

After (same machine, commit 1538164; integrated_gradients with n_steps=4;
seconds on a machine busy with other runs)::

    case                            MB       s  under 1024 MB
    model only                       0     0.0  yes
    fit PatchGrouper               348     2.3  yes
    fit SuperpixelGrouper          591     9.8  yes
    fit AdaptiveGrouper            735    90.5  yes
    occlusion                      760    16.0  yes
    arch                           760    16.6  yes
    kernel_shap                    750   141.0  yes
    permutation_shap               749   148.0  yes
    lime                           749   114.0  yes
    rise                           749   138.6  yes
    integrated_gradients           839   147.2  yes
    owen                           933   253.4  yes

AdaptiveGrouper was at 1,054 MB before its merge history and initial groups
became views of one array of the columns in the tree's leaf order (each
merge had kept its two groups' columns as copies); owen over it was at
1,930 MB, then 1,349, before its tree was read from the pixels' labels (not
every column's) and the fitted grouper freed once read; then 1,157 MB, 1,080
once the hierarchy's grouper was fitted before the explainer's own, and
933 MB once the explainer kept only the first image's
merges and initial label map of the grouper it fitted (the fitted grouper had
held about 400 MB of the photo's groups, baselines and initial grouper while
the explainer's PatchGrouper was fitted).
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

LIMIT_MB = 1024
PATCH = 256
N_SAMPLES = 512


class BlockModel:
    """Per-channel means of 8x8 blocks through a fixed random linear map."""

    def __init__(self, size, n_outputs=10, block=8, seed=0):
        self.block = block
        cells = (size // block) ** 2 * 3
        self.weights = np.random.default_rng(seed).standard_normal((cells, n_outputs))
        self.weights /= np.sqrt(cells)

    def __call__(self, images):
        images = np.asarray(images)
        out = np.empty((images.shape[0], self.weights.shape[1]))
        for i, img in enumerate(images):  # one image at a time: a small footprint
            h, w, c = img.shape
            b = self.block
            rows = img.reshape(h // b, b, w * c).sum(axis=1, dtype=np.float32)
            sums = rows.reshape(h // b, w // b, b, c).sum(axis=2, dtype=np.float64)
            out[i] = sums.reshape(-1) @ self.weights / (255.0 * b * b)
        return out


def photo(size):
    """One RGB photo of size x size, uint8 (the bundled cat, or noise offline)."""
    try:
        from skdecomp.datasets import load_sample_photos

        return load_sample_photos(size=size, names=["cat"]).images[:1]
    except Exception:  # pragma: no cover - no Pillow or scikit-image
        rng = np.random.default_rng(0)
        small = rng.integers(0, 256, (1, size // 8, size // 8, 3), dtype=np.uint8)
        return np.repeat(np.repeat(small, 8, axis=1), 8, axis=2)


def groupers():
    from skdecomp import AdaptiveGrouper, PatchGrouper, SuperpixelGrouper

    return {
        "PatchGrouper": lambda model: PatchGrouper(PATCH),
        "SuperpixelGrouper": lambda model: SuperpixelGrouper(
            "slic", segmentation_params={"n_segments": 64}, random_state=0),
        "AdaptiveGrouper": lambda model: AdaptiveGrouper(
            model, initial_groups=PatchGrouper(PATCH), n_groups=16, baseline="zeros",
            target=0, max_evaluations=256),
    }


def methods():
    from skdecomp import AdaptiveGrouper, PatchGrouper

    common = dict(baseline="zeros", target=0, random_state=0)
    return {
        "occlusion": dict(method="occlusion", **common),
        "arch": dict(method="arch", **common),
        "kernel_shap": dict(method="kernel_shap", n_samples=N_SAMPLES, **common),
        "permutation_shap": dict(method="permutation_shap", n_samples=N_SAMPLES, **common),
        "lime": dict(method="lime", n_samples=N_SAMPLES, **common),
        "rise": dict(method="rise", n_samples=N_SAMPLES, **common),
        "integrated_gradients": dict(method="integrated_gradients",
                                     method_params={"scheme": "path", "n_steps": 4},
                                     **common),
        "owen": dict(method="owen", n_samples=N_SAMPLES,
                     hierarchy=lambda model: AdaptiveGrouper(
                         initial_groups=PatchGrouper(PATCH), n_groups=8), **common),
    }


def case_names():
    return ["model only"] + [f"fit {g}" for g in groupers()] + list(methods())


def run_case(name, size, cap):
    """Run one case in this process; print its peak above the model-only point."""
    images = photo(size)
    model = BlockModel(size)
    model(images)  # the model's own use
    from skdecomp import Explainer  # noqa: F401  (the imports before the mark)

    watchdog(cap)
    start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    if name.startswith("fit "):
        grouper = groupers()[name[4:]](model)
        grouper.fit(images)
    elif name != "model only":
        from skdecomp import Explainer, PatchGrouper

        params = dict(methods()[name])
        if callable(params.get("hierarchy")):
            params["hierarchy"] = params["hierarchy"](model)
        explainer = Explainer(model, groups=PatchGrouper(PATCH), **params).fit(images)
        explanations = explainer.explain(images, methods=[name])
        assert np.all(np.isfinite(np.asarray(explanations[name].values)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"mb": (peak - start) / 1024, "seconds": time.perf_counter() - t0}))


def rss_mb():
    """Resident memory of this process now, in MB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def watchdog(cap):
    """Leave with code 3 once this process holds ``cap`` MB more than now."""
    import threading

    start = rss_mb()

    def watch():
        while True:
            if rss_mb() - start > cap:
                os._exit(3)
            time.sleep(0.02)

    threading.Thread(target=watch, daemon=True).start()


def measure(name, size, cap):
    """Run a case in a fresh process; None when it passed ``cap`` MB."""
    cmd = [sys.executable, __file__, "--size", str(size), "--cap", str(cap), "--run", name]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 3:
        return None, None, "stopped"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return None, None, "(" + last.split(" for an array")[0].split("Error: ")[-1][:80] + ")"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result["mb"], result["seconds"], ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--cap", type=float, default=6000.0,
                        help="MB above the start at which a case is stopped")
    parser.add_argument("--cases", default=None, help="comma-separated case names")
    parser.add_argument("--run", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run is not None:
        run_case(args.run, args.size, args.cap)
        return
    names = case_names() if args.cases is None else args.cases.split(",")
    print(f"{args.size}x{args.size} RGB photo, {len(case_names()) - 1} cases, "
          f"{PATCH}-pixel patches, n_samples={N_SAMPLES}; MB of peak RSS above the "
          "photo and one model call")
    print(f"{'case':<24}{'MB':>10}{'s':>8}  under {LIMIT_MB} MB")
    for name in names:
        mb, seconds, note = measure(name, args.size, args.cap)
        if mb is None:
            shown = f"> {args.cap:.0f}" if note == "stopped" else "error"
            print(f"{name:<24}{shown:>10}{'':>8}  no  {note if note != 'stopped' else ''}")
        else:
            ok = "yes" if mb <= LIMIT_MB else "no"
            print(f"{name:<24}{mb:>10.0f}{seconds:>8.1f}  {ok}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
