"""Explaining a pretrained ImageNet CNN on real photos: throughput, captum/shap, memory.

EfficientNet-Lite0 (``load_pretrained_cnn``, 1000 classes, input scaled as
``(x - 127) / 128``, NCHW) on the sample photos cat, espresso and rocket at
224x224 (``load_sample_photos``), each explained for its ImageNet label
against its blurred self (``baseline="blur"``) over 16-pixel patches (196
groups). Everything runs on one thread: ``torch.set_num_threads(1)``, the
ONNX session's ``intra_op_num_threads=1``. Evaluations are the images given
to the runtime, counted by a wrapper around ``ImageModel.forward`` (and a
forward hook on the torch module, which also sees the gradient passes).

Times are CPU seconds of this process (``time.process_time``), wall seconds
beside them: with one thread they are what the other load of the shared
cores changes least. Sections (``--section``):

``throughput``
    ``Explainer(cnn, groups=PatchGrouper(16), baseline="blur", target=k,
    method="occlusion").fit(photo).transform(photo)`` (199 evaluations: f(b)
    and f(x) in ``fit``, then f(x) and the 196 hybrids ``x`` without one patch,
    in batches of 1, 55, 55, 55, 31: the ImageModel's 32 MiB input per pass)
    against the runtime's raw batched forward (``module(tensor)`` under
    ``torch.inference_mode()``, ``session.run``) on already prepared float32
    NCHW input in the same batches, for torch and onnx. Both warmed up first,
    run alternately ``--repeat`` times; the median. ratio = evaluations per
    CPU second through skdecomp / raw (target >= 0.9); "transform" is the
    ratio of ``transform`` alone; "in model" the share of skdecomp's CPU
    time spent inside ``ImageModel.forward`` (the runtime's call), measured
    in the same run and so free of the drift between runs.
``baselines``
    CPU seconds per evaluation, on the torch module, of skdecomp's occlusion
    (as above), captum's ``FeatureAblation(forward).attribute(x,
    baselines=b, feature_mask=mask, perturbations_per_eval=55, target=k)``
    with the same 196-patch mask and skdecomp's blurred baseline (forward =
    softmax of the module on ``(x - 127) / 128``, under ``torch.no_grad`` as
    captum runs it) and shap's ``PartitionExplainer(f,
    shap.maskers.Image("blur(128,128)", (224, 224, 3)))(photo,
    max_evals=500, batch_size=55)`` (f: the same forward on NHWC numpy
    images, returning the label's probability; counted by f; shap's blur
    needs OpenCV, without it skdecomp's blurred image is the mask value).
    ratio = their CPU seconds per evaluation / skdecomp's.
``memory``
    One photo (cat) explained in a fresh subprocess per method: occlusion,
    arch, kernel_shap, permutation_shap, lime, rise (``n_samples=2048``),
    integrated_gradients (``n_steps=32``, on the torch module's gradients
    whatever ``--memory-runtime``), and AGREED
    (``AdaptiveGrouper(cnn, initial_groups=PatchGrouper(16), n_groups=16,
    baseline="blur")``, 196 patches to 16 groups), with the seconds (fit
    and transform, the model loaded) and evaluations of each. The peak
    resident memory (``getrusage(RUSAGE_SELF).ru_maxrss``; on Linux
    ``VmHWM``, as ``ru_maxrss`` survives ``exec`` and would report this
    larger parent's peak) is printed "above 1": above a subprocess that
    imports the same, loads the model and runs ``cnn.predict`` on one batch
    of 55 images (target: at most 1 GB above), and "above rt": above the
    runtime's own steady peak, ``cnn.predict`` on 14 batches of 1 to 55
    images (both runtimes grow past their first batch: ONNX Runtime's arena,
    glibc's heap under torch), or for integrated_gradients one autograd pass
    of the module on 32 images.

``--quick``: one photo, one repetition, ``n_samples=512`` (or the method's
least budget on 196 groups: 1568 for kernel_shap, 780 for permutation_shap).
The whole run takes about 20 minutes on 2 shared cores, ``--quick`` about 4.

Measured (2 shared cores under a load of 4-5, torch 2.14, onnxruntime 1.32,
captum 0.9, shap 0.51; medians of 3 runs and of the 3 photos)::

    throughput (199 evals)   eval/CPU s   raw    ratio  transform  in model
    torch                       16.8      19.4    0.86     0.88       0.98
    onnx                        96.3     111.6    0.86     0.93       0.87

    CPU ms per evaluation    skdecomp   captum   shap Partition (500)
    torch module               58.4      59.5       62.4
    ratio to skdecomp          1.00      1.05       1.07

    peak, MB above           1 batch   runtime's own steady peak
    occlusion, arch (onnx)     470          70
    sampled (onnx, 2048)    456-465       55-65
    AGREED (onnx, 3850)        481          80
    integrated_gradients      2223         363   (torch autograd, 32 images)

torch: skdecomp's own work is 2 % of the CPU time (in model 0.98); the gap
to the raw loop is kernel time inside the module's call (page faults:
glibc maps every activation tensor of a 55-image batch afresh, over half
of torch's CPU time here), which numpy allocations between the batches
raise: the raw loop with a hybrid image built per batch gets two thirds of the
way to skdecomp. onnx: 13 % is skdecomp's own work: the hybrids
(``_game.py`` ``cmask_table[...]``, ``_table.py`` ``np.where``, 6 %), the
preprocessing and the NCHW copy (``ImageModel._prepare``, 3.5 %) and, in
``fit``, the groups resolved one pixel value at a time (``resolve_groups``
on 150,528 columns, 3 %). integrated_gradients is above 1 GB because the
module's autograd on 32 images needs 1.9 GB on its own.

The tables above were measured with 32 MiB batches. With the 4 MiB batches
of the CPU default (``--quick --section memory``, one photo): occlusion,
arch, the sampled methods and AGREED peak 91-98 MB above one forward batch
and 47-54 MB above the runtime's steady peak; integrated_gradients 547 MB
above one batch (its gradients in batches of the same bytes).

Run: python benchmarks/bench_image_models.py [--quick] [--section all]
     [--repeat 3] [--memory-runtime onnx]
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from skdecomp.datasets import load_pretrained_cnn, load_sample_photos

PHOTOS = ("cat", "espresso", "rocket")
PATCH = 16
MEAN, STD = 127.0, 128.0
MB = 2**20


def now():
    """(wall, CPU) seconds: on one thread the CPU time of this process is what the
    shared cores' other load changes least."""
    return np.array([time.perf_counter(), time.process_time()])


def one_thread():
    import torch

    torch.set_num_threads(1)
    return torch


def load_cnn(runtime):
    one_thread()
    return load_pretrained_cnn(runtime, n_threads=1)


def load_photos(names):
    return load_sample_photos(size=224, names=list(names))


class Counter:
    """Counts the images an ImageModel gives its runtime, per batch.

    Wraps the instance's ``forward`` (the explainers' bound copies share it),
    adding up the (wall, CPU) seconds spent in it (the runtime's call on the
    prepared batch), and, on a torch module, adds a forward hook that also
    sees the gradient passes of integrated_gradients.
    """

    def __init__(self, cnn):
        self.batches = []
        self.hooked = []
        self.inside = np.zeros(2)
        self.share = np.ones(2)  # of the last occlusion(): time in forward / all
        forward = cnn.forward

        def counted(x):
            self.batches.append(int(x.shape[0]))
            start = now()
            try:
                return forward(x)
            finally:
                self.inside += now() - start

        cnn.forward = counted
        if cnn.runtime == "torch":
            cnn.model.register_forward_hook(
                lambda module, args, out: self.hooked.append(int(args[0].shape[0])))

    def reset(self):
        self.batches.clear()
        self.hooked.clear()

    @property
    def evals(self):
        return max(sum(self.batches), sum(self.hooked))


def prepared(images):
    """float32 NCHW input of the network, as the ImageModel prepares it."""
    x = (np.asarray(images, dtype=np.float32) - MEAN) / STD
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def raw_forward(cnn, x, batches):
    """The runtime alone on ``x[:b]`` for every b in ``batches``: seconds."""
    if cnn.runtime == "torch":
        import torch

        module = cnn.model
        start = now()
        with torch.inference_mode():
            for b in batches:
                module(torch.from_numpy(x[:b])).numpy()
        return now() - start
    session = cnn.model
    name = session.get_inputs()[0].name
    start = now()
    for b in batches:
        session.run(None, {name: x[:b]})
    return now() - start


def occlusion(cnn, photo, label, counter):
    """fit + transform of occlusion on one photo: seconds, batches of fit, of transform."""
    from skdecomp import Explainer, PatchGrouper

    counter.reset()
    inside = counter.inside.copy()
    start = now()
    explainer = Explainer(cnn, groups=PatchGrouper(PATCH), baseline="blur", target=int(label),
                          method="occlusion").fit(photo[None])
    fitted = now()
    fit_batches = list(counter.batches)
    counter.reset()
    explainer.transform(photo[None])
    end = now()
    counter.share = (counter.inside - inside) / (end - start)
    return end - start, end - fitted, fit_batches, list(counter.batches), explainer


# -- 1. throughput ----------------------------------------------------------------------
def section_throughput(photos, repeat):
    print("\n== 1. throughput: occlusion on 196 patches against the runtime's raw batched "
          "forward (1 thread; eval/s per CPU second) ==")
    print(f"{'runtime':<8}{'photo':<10}{'evals':>6}{'wall s':>8}{'CPU s':>7}{'raw CPU':>8}"
          f"{'eval/s':>8}{'raw/s':>7}{'ratio':>7}{'wall':>6}{'transform':>10}{'in model':>9}")
    summary = {}
    for runtime in ("torch", "onnx"):
        cnn = load_cnn(runtime)
        counter = Counter(cnn)
        x = prepared(np.repeat(photos.images[:1], cnn.batch_rows(224 * 224 * 3), axis=0))
        # warm-up: the explainer and the runtime at every batch size
        _, _, fb, tb, _ = occlusion(cnn, photos.images[0], photos.labels[0], counter)
        raw_forward(cnn, x, fb + tb)
        ratios, shares = [], []
        for photo, name, label in zip(photos.images, photos.names, photos.labels):
            ours, ours_tr, raw, raw_tr, share = [], [], [], [], []
            for rep in range(repeat):
                if rep % 2:  # alternate which runs first
                    raw.append(raw_forward(cnn, x, fb + tb))
                    raw_tr.append(raw_forward(cnn, x, tb))
                t, t_tr, fb, tb, _ = occlusion(cnn, photo, label, counter)
                ours.append(t)
                ours_tr.append(t_tr)
                share.append(counter.share[1])
                if not rep % 2:
                    raw.append(raw_forward(cnn, x, fb + tb))
                    raw_tr.append(raw_forward(cnn, x, tb))
            n = sum(fb) + sum(tb)
            (t_wall, t), (r_wall, r) = np.median(ours, axis=0), np.median(raw, axis=0)
            ratio = r / t
            ratio_tr = np.median(raw_tr, axis=0)[1] / np.median(ours_tr, axis=0)[1]
            ratios.append(ratio)
            shares.append(np.median(share))
            print(f"{runtime:<8}{name:<10}{n:>6}{t_wall:>8.2f}{t:>7.2f}{r:>8.2f}"
                  f"{n / t:>8.1f}{n / r:>7.1f}{ratio:>7.2f}{r_wall / t_wall:>6.2f}"
                  f"{ratio_tr:>10.2f}{np.median(share):>9.2f}")
        summary[runtime] = float(np.median(ratios))
        shape = "+".join(str(b) for b in fb + tb)
        print(f"{'':<8}batches {shape}; median ratio {summary[runtime]:.2f}, in model "
              f"{np.median(shares):.2f}")
    print("ratio: raw CPU s / skdecomp CPU s for the same evaluations and batches (target "
          ">= 0.9); wall: the same in wall seconds; transform: transform alone (CPU);")
    print("in model: share of skdecomp's CPU s spent in ImageModel.forward, i.e. in the "
          "runtime's call (measured in the same run, so free of the drift between runs)")
    return summary


# -- 2. captum and shap -------------------------------------------------------------------
def section_baselines(photos):
    import shap
    import torch
    from captum.attr import FeatureAblation

    print("\n== 2. seconds per evaluation on the torch module (1 thread): skdecomp occlusion, "
          "captum FeatureAblation, shap PartitionExplainer(max_evals=500) ==")
    cnn = load_cnn("torch")
    counter = Counter(cnn)
    module = cnn.model
    batch = cnn.batch_rows(224 * 224 * 3)
    occlusion(cnn, photos.images[0], photos.labels[0], counter)  # warm-up

    def forward(x):  # NCHW float in the images' scale
        return torch.softmax(module((x - MEAN) / STD), dim=1)

    try:
        import cv2  # noqa: F401  shap's blur masker needs OpenCV

        mask_value, shap_masker = "blur(128,128)", "blur(128,128)"
    except ImportError:
        mask_value, shap_masker = None, "skdecomp's blurred image (no OpenCV for blur)"

    print(f"{'photo':<10}{'method':<20}{'evals':>6}{'wall s':>8}{'CPU s':>7}"
          f"{'CPU ms/eval':>12}{'ratio':>7}")
    rows = {"captum": [], "shap": []}
    for photo, name, label in zip(photos.images, photos.names, photos.labels):
        label = int(label)
        t, _, fb, tb, explainer = occlusion(cnn, photo, label, counter)
        n_ours = sum(fb) + sum(tb)
        ours = t[1] / n_ours
        print(f"{name:<10}{'skdecomp occlusion':<20}{n_ours:>6}{t[0]:>8.2f}{t[1]:>7.2f}"
              f"{1e3 * ours:>12.1f}{1.0:>7.2f}")

        # captum: the same patches (labels_ of the pixels' channels) and baseline
        labels = np.asarray(explainer.labels_).reshape(224, 224, 3)[..., 0]
        mask = torch.from_numpy(labels.astype(np.int64))[None, None]
        base_img = np.asarray(explainer.background_, dtype=np.float32).reshape(224, 224, 3)
        x = torch.from_numpy(np.ascontiguousarray(
            photo.astype(np.float32).transpose(2, 0, 1)))[None]
        b = torch.from_numpy(np.ascontiguousarray(base_img.transpose(2, 0, 1)))[None]
        counter.reset()
        start = now()
        FeatureAblation(forward).attribute(x, baselines=b, feature_mask=mask,
                                           perturbations_per_eval=batch, target=label)
        t = now() - start
        n = counter.evals
        rows["captum"].append(t[1] / n / ours)
        print(f"{'':<10}{'captum Ablation':<20}{n:>6}{t[0]:>8.2f}{t[1]:>7.2f}"
              f"{1e3 * t[1] / n:>12.1f}{t[1] / n / ours:>7.2f}")

        # shap: f on NHWC numpy images, counted
        seen = [0]

        def f(images, label=label, seen=seen):
            seen[0] += len(images)
            x = np.ascontiguousarray(np.asarray(images, dtype=np.float32).transpose(0, 3, 1, 2))
            with torch.no_grad():
                return forward(torch.from_numpy(x))[:, label:label + 1].numpy()

        masker = shap.maskers.Image(base_img if mask_value is None else mask_value,
                                    photo.shape)
        start = now()
        shap.PartitionExplainer(f, masker)(photo[None].astype(np.float32), max_evals=500,
                                           batch_size=batch, silent=True)
        t = now() - start
        n = seen[0]
        rows["shap"].append(t[1] / n / ours)
        print(f"{'':<10}{'shap Partition':<20}{n:>6}{t[0]:>8.2f}{t[1]:>7.2f}"
              f"{1e3 * t[1] / n:>12.1f}{t[1] / n / ours:>7.2f}")
    print(f"ratio: their CPU seconds per evaluation / skdecomp's; shap's masker: {shap_masker}, "
          f"batch_size={batch}; median ratio captum {statistics.median(rows['captum']):.2f}, "
          f"shap {statistics.median(rows['shap']):.2f}")
    return {k: statistics.median(v) for k, v in rows.items()}


# -- 3. memory ----------------------------------------------------------------------------
IG_STEPS = 32


def peak_rss():
    """Peak resident memory of this process, in bytes.

    ``ru_maxrss`` of ``getrusage(RUSAGE_SELF)``, except on Linux, which keeps
    it across ``execve``: a subprocess started by a parent larger than it
    would report the parent's peak. There the high-water mark of this
    process's own memory, ``VmHWM``, is read from /proc/self/status.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
METHODS = ("occlusion", "arch", "kernel_shap", "permutation_shap", "lime", "rise",
           "integrated_gradients", "agreed")


def child(task, runtime, n_samples):
    """Run one task in this (fresh) process; print its peak memory as JSON."""
    torch = one_thread()
    from skdecomp import AdaptiveGrouper, Explainer, PatchGrouper
    from skdecomp._methods._registry import min_samples

    photos = load_photos(["cat"])
    photo, label = photos.images[0], int(photos.labels[0])
    cnn = load_cnn(runtime)
    counter = Counter(cnn)
    batch = cnn.batch_rows(224 * 224 * 3)
    extra = {}
    start = now()
    if task == "reference":  # one forward batch
        cnn.predict(np.repeat(photo[None], batch, axis=0))
    elif task == "runtime":  # the runtime's steady state: batches of every size
        images = np.repeat(photo[None], batch, axis=0)
        for b in [1, 1, 1] + [batch] * 10 + [batch // 2 + 3]:
            cnn.predict(images[:b])
    elif task == "gradient":  # autograd on one batch of integrated_gradients' size
        x = torch.from_numpy(prepared(np.repeat(photo[None], IG_STEPS, axis=0)))
        x.requires_grad_(True)
        torch.softmax(cnn.model(x), dim=1)[:, label].sum().backward()
    elif task == "agreed":
        grouper = AdaptiveGrouper(cnn, initial_groups=PatchGrouper(PATCH), n_groups=16,
                                  baseline="blur", target=label).fit(photo[None])
        extra["model_calls_"] = int(grouper.model_calls_)
    else:
        params = {}
        if task in ("kernel_shap", "permutation_shap", "lime", "rise"):
            # at least the method's smallest budget (kernel_shap: 8 K = 1568)
            low = min_samples(task, 196)
            params = {"n_samples": max(n_samples, low), "random_state": 0}
        if task == "integrated_gradients":
            params = {"method_params": {"n_steps": IG_STEPS}}
        Explainer(cnn, groups=PatchGrouper(PATCH), baseline="blur", target=label,
                  method=task, **params).fit(photo[None]).transform(photo[None])
    seconds, cpu = now() - start
    print(json.dumps({"peak": peak_rss(), "seconds": seconds, "cpu": cpu, "evals": counter.evals,
                      "batches": len(counter.batches) or len(counter.hooked),
                      "sizes": counter.batches or counter.hooked, **extra}))


def run_child(task, runtime, n_samples):
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", task, "--child-runtime",
         runtime, "--n-samples", str(n_samples)],
        capture_output=True, text=True, env=env, check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{task} on {runtime} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def section_memory(runtime, n_samples):
    print(f"\n== 3. peak memory, one 224x224 photo (cat), one subprocess each; "
          f"runtime {runtime} (integrated_gradients: torch gradients) ==")
    runtimes = sorted({runtime, "torch"})
    refs = {rt: run_child("reference", rt, n_samples) for rt in runtimes}
    steady = {rt: run_child("runtime", rt, n_samples) for rt in runtimes}
    steady["gradient"] = run_child("gradient", "torch", n_samples)
    print(f"{'task':<22}{'runtime':<8}{'evals':>7}{'batches':>8}{'wall s':>8}{'CPU s':>7}"
          f"{'peak MB':>8}{'above 1':>8}{'above rt':>9}")

    def row(label, rt, res, ref=None):
        above = (res["peak"] - refs[rt]["peak"]) / MB
        above_rt = "" if ref is None else f"{(res['peak'] - ref['peak']) / MB:.0f}"
        print(f"{label:<22}{rt:<8}{res['evals']:>7}{res['batches']:>8}{res['seconds']:>8.1f}"
              f"{res['cpu']:>7.1f}{res['peak'] / MB:>8.0f}{above:>8.0f}{above_rt:>9}")
        return above, (res["peak"] - ref["peak"]) / MB if ref is not None else None

    for rt in runtimes:
        row("forward, 1 batch", rt, refs[rt])
    for rt in runtimes:
        row("forward, 14 batches", rt, steady[rt])
    row(f"autograd, {IG_STEPS} images", "torch", steady["gradient"])
    above, agreed_calls = {}, None
    for task in METHODS:
        rt = "torch" if task == "integrated_gradients" else runtime
        res = run_child(task, rt, n_samples)
        ref = steady["gradient" if task == "integrated_gradients" else rt]
        agreed_calls = res.get("model_calls_", agreed_calls)
        above[task] = row("AGREED (196 -> 16)" if task == "agreed" else task, rt, res, ref)
    batch = refs[runtime]["evals"]
    print(f"above 1: peak minus that of one forward batch of {batch} images on the same "
          "runtime (cnn.predict; target <= 1024 MB);")
    print(f"above rt: minus the runtime's own steady peak (cnn.predict on 14 batches of 1 to "
          f"{batch} images; for integrated_gradients, one autograd pass of {IG_STEPS} images)")
    print(f"n_samples={n_samples} (at least each method's least); AGREED: model_calls_ = "
          f"{agreed_calls} hybrid images (evals also count one probe of the outputs); "
          f"max above 1: {max(a for a, _ in above.values()):.0f} MB, max above rt: "
          f"{max(b for _, b in above.values()):.0f} MB")
    return above


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--section", choices=["throughput", "baselines", "memory", "all"],
                        default="all")
    parser.add_argument("--quick", action="store_true",
                        help="one photo, one repetition, n_samples=512 (or a method's least)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-runtime", choices=["onnx", "torch"], default="onnx")
    parser.add_argument("--n-samples", type=int, default=None)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-runtime", help=argparse.SUPPRESS)
    args = parser.parse_args()
    n_samples = args.n_samples or (512 if args.quick else 2048)
    if args.child:
        child(args.child, args.child_runtime, n_samples)
        return
    names = PHOTOS[:1] if args.quick else PHOTOS
    repeat = 1 if args.quick else args.repeat
    photos = load_photos(names)
    print(f"EfficientNet-Lite0, photos {', '.join(names)} (labels "
          f"{', '.join(str(k) for k in photos.labels)}), 224x224, 196 patches of 16x16, "
          f"baseline blur, 1 thread; repeat {repeat}")
    if args.section in ("throughput", "all"):
        section_throughput(photos, repeat)
    if args.section in ("baselines", "all"):
        section_baselines(photos)
    if args.section in ("memory", "all"):
        section_memory(args.memory_runtime, n_samples)


if __name__ == "__main__":
    main()
