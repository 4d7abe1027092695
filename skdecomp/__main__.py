"""Command line of skdecomp: ``skdecomp demo`` (also ``python -m skdecomp demo``;
``--images`` for photos), ``skdecomp report`` (a table), ``skdecomp images`` (a
folder of photos and an ONNX network) and ``skdecomp compile``."""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys
import time
from pathlib import Path


def _bars():
    """Progress bars (on stderr) only for a person watching a terminal."""
    return 1 if sys.stderr.isatty() else 0


def _print_verdict(results, file=None):
    print("\nIn short:", file=file)
    for sentence in results["verdict"]:
        print(f"  - {sentence}", file=file)


def demo_plan(X, y):
    """The plan of the demo's analysis (see :func:`skdecomp._plan.plan_report`)."""
    from ._plan import plan_report

    return plan_report(X, y, estimator="hgb", groups="auto", n_rows=50, budget=None,
                       max_memory=None)


def _demo(args):
    if args.images:
        return _demo_images(args)
    import pandas as pd
    from sklearn.datasets import load_diabetes

    from ._methods import method_label
    from ._report import analyse, check_output, write_report

    started = time.perf_counter()
    action = check_output(args.out, overwrite=args.overwrite)
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    y = y.rename("disease progression")
    print(
        "Demo: a gradient-boosted tree model of disease progression in the diabetes "
        f"data bundled with scikit-learn ({X.shape[0]} rows, {X.shape[1]} columns), "
        "explained by several methods at once."
    )

    def log(msg):
        print(f"[skdecomp] {msg}", flush=True)

    log(f"plan: {demo_plan(X, y).summary()}")
    results = analyse(X, y, estimator="hgb", groups="auto", n_rows=50,
                      random_state=args.random_state, n_jobs=args.n_jobs, log=log,
                      verbose=_bars(), started=started)
    part = results["partitions"]["columns"]
    methods = part["methods"]
    pd.set_option("display.width", 120)
    for i in range(min(args.n_rows, part["n_rows"])):
        table = pd.DataFrame(
            {method_label(m): part["attributions"][m][i] for m in methods},
            index=part["group_names"],
        )
        print(f"\nRow {part['row_ids'][i]} (held out): the model predicts "
              f"{part['prediction'][i]:.1f}, against {part['expected_value']:.1f} on "
              "average. Each method's attribution per column (the Shapley values add "
              "up to the difference):")
        print(table.round(2).to_string())
    rms = part["disagreement_rms"]
    print("\nHow far apart two methods' explanations are, as a share of the spread of "
          "the predictions:")
    for a in range(len(methods)):
        for b in range(a + 1, len(methods)):
            name = f"{method_label(methods[a])} vs {method_label(methods[b])}"
            print(f"  {name:<36} {100 * rms[a][b]:5.1f}%")
    # why they differ, and how far another game would move them: the same
    # sentences as the report's, from the same numbers
    from ._report._story import games_sentence, methods_sentence

    for sentence in (methods_sentence(results), games_sentence(results)):
        if sentence:
            print(sentence)
    log(action)
    out = write_report(results, args.out, title="skdecomp demo: diabetes",
                       overwrite=args.overwrite, started=started)
    _print_verdict(results)
    print(f"\nReport written to {out / 'index.html'} "
          f"({time.perf_counter() - started:.0f} s in all).")
    return 0


#: the bundled photos of ``skdecomp demo --images``
DEMO_PHOTOS = ("cat", "espresso")


def _image_log(stream):
    def log(msg):
        print(f"[skdecomp] {msg}", file=stream, flush=True)

    return log


def _finish_images(results, out, started, stream=None):
    print("\nIn short:", file=stream)
    for sentence in results["verdict"]:
        print(f"  - {sentence}", file=stream)
    for entry in results["photos"]:
        print(f"\n{entry['file']}:", file=stream)
        for sentence in entry["verdict"]:
            print(f"  - {sentence}", file=stream)
    print(f"\nReport written to {out / 'index.html'} "
          f"({time.perf_counter() - started:.0f} s in all).", file=stream)


def _demo_images(args):
    from ._report import check_output
    from ._report._image_report import image_report
    from ._report._photos import CountedImageModel
    from .datasets import load_pretrained_cnn, load_sample_photos

    started = time.perf_counter()
    action = check_output(args.out, overwrite=args.overwrite)
    cnn = load_pretrained_cnn(runtime="onnx", n_threads=1)
    model = CountedImageModel(**cnn.get_params())
    photos = load_sample_photos(names=list(DEMO_PHOTOS))
    names = [f"{n}.png" for n in photos.names]
    print(f"Demo: EfficientNet-Lite0 (ImageNet, ONNX Runtime, one thread) on "
          f"{len(names)} photos bundled with scikit-image ({', '.join(photos.names)}): "
          "AGREED's groups, every method's map on them, how far apart the maps are, "
          "their SRG, and a hierarchical map per pixel.")
    log = _image_log(sys.stdout)
    log(action)
    results, out = image_report(
        model, names, photos.images, args.out, title="skdecomp demo: photos",
        budget=500, random_state=args.random_state, log=log, started=started,
        overwrite=args.overwrite, model_name="EfficientNet-Lite0 (ONNX)",
        preprocess=cnn.preprocess)
    _finish_images(results, out, started)
    return 0


def _images(args):
    from ._report import DataError, check_output
    from ._report._image_report import image_report
    from ._report._photos import (
        load_class_names,
        load_onnx_model,
        load_photos,
        parse_preprocess,
        photo_files,
    )

    started = time.perf_counter()
    log = _image_log(sys.stderr)
    # cheap checks first: output folder, preprocessing, photo files, class
    # names, then the model file (read as ONNX only) and the photos
    action = check_output(args.out, overwrite=args.overwrite)
    preprocess = parse_preprocess(args.preprocess)
    files = photo_files(args.photos)
    classes = load_class_names(args.classes) if args.classes else None
    size = None
    if args.size:
        if len(args.size) > 2:
            raise DataError(f"--size takes HEIGHT [WIDTH], got {len(args.size)} numbers.")
        size = (args.size[0], args.size[-1])
    model, shape = load_onnx_model(args.model, preprocess, output=args.output,
                                   class_names=classes, size=size,
                                   n_threads=args.n_jobs)
    images = load_photos(files, shape)
    log(f"read {len(files)} photo(s) from {Path(args.photos).name or args.photos}, "
        f"at {shape[0]}x{shape[1]} pixels")
    log(action)
    results, out = image_report(
        model, [f.name for f in files], images, args.out,
        title=f"skdecomp images: {Path(args.photos).name or args.photos}",
        budget=args.budget, random_state=args.random_state, log=log, started=started,
        overwrite=args.overwrite, model_name=Path(args.model).name,
        preprocess=preprocess)
    _finish_images(results, out, started)
    return 0


def _report(args):
    from ._report import (
        analyse,
        check_drop,
        check_exact_limit,
        check_output,
        check_target,
        load_groups,
        load_model,
        load_table,
        write_report,
    )

    started = time.perf_counter()

    def log(msg):
        print(f"[skdecomp] {msg}", file=sys.stderr, flush=True)

    # cheap checks first: output folder, model file, data, options; then the plan
    # (model evaluations, time and memory within the budget); then the work
    from ._plan import check_model_object, plan_report

    action = check_output(args.out, overwrite=args.overwrite)
    model = load_model(args.model) if args.model else None
    if args.model:
        check_model_object(model, Path(args.model).name)
    X, y = load_table(args.data, args.target, parse_dates=model is None)
    log(f"read {X.shape[0]} rows and {X.shape[1]} columns besides the target "
        f"{args.target!r} from {Path(args.data).name}")
    drop = check_drop(args.drop, X, target=args.target)
    groups = load_groups(args.groups or "auto", X)
    check_target(y, model)
    check_exact_limit(args.methods, X, groups,
                      tree=model is None and args.estimator in ("hgb", "rf"))
    plan = plan_report(
        X, y, model=model, estimator=args.estimator,
        groups=None if args.groups is None else groups, methods=args.methods,
        n_rows=args.n_rows, drop=drop, budget=args.budget, max_memory=args.max_memory,
        imputer=args.imputer,
    )
    log(f"plan: {plan.summary()}"
        + (f" (budget {args.budget:.0f} s)" if args.budget is not None else ""))
    for change in plan.changes:
        log(f"to fit the budget: {change}")
    results = analyse(
        X, y, model=model, estimator=args.estimator, groups=plan.groups,
        methods=plan.methods, n_rows=plan.n_rows, background=plan.background,
        n_jobs=args.n_jobs, random_state=args.random_state, log=log, drop=plan.drop,
        verbose=_bars(), started=started, imputer=args.imputer,
    )
    if plan.changes:
        results["plan"] = {"changes": plan.changes, "estimate": plan.summary()}
    log(action)
    out = write_report(results, args.out, title=f"skdecomp report: {Path(args.data).name}",
                       overwrite=args.overwrite, started=started)
    for check in results["checks"]:
        if check["level"] == "warning":
            print(f"warning: {check['message']}", file=sys.stderr)
    _print_verdict(results)
    print(f"Report written to {out / 'index.html'} "
          f"({time.perf_counter() - started:.0f} s in all).")
    return 0


def _compile(args):
    """Compile the kernels of the common calls into Numba's on-disk cache.

    Each step is a small call of the public API (a few hundred synthetic
    rows), so the kernels are compiled for the types real calls use; later
    processes load them from the cache instead of compiling on their first
    call. The kernels are the same for any ``n_jobs``: threads run the one
    compiled version.
    """
    import numpy as np
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LogisticRegression, Ridge

    from skdecomp import AdaptiveGrouper, Explainer, PairwiseGrouper
    from skdecomp._methods import is_hierarchical, method_names
    from skdecomp._tree import numba_only

    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 10))
    y = X[:, 0] * X[:, 1] + X[:, 2] + 0.1 * rng.normal(size=200)
    label = (y > 0).astype(int)
    n_jobs = args.n_jobs
    # the hierarchical values need a hierarchy; their kernels are the exact ones
    exact = [m for m in method_names("exact", aliases=False) if not is_hierarchical(m)]
    sampled = method_names("sampled")

    def explain(model, methods):
        # one method and several, over columns and over a few groups: the tree
        # path picks its kernel by the number of groups and of methods
        for groups in (None, [[0, 1, 2], [3, 4], [5, 6, 7], [8, 9]]):
            explainer = Explainer(model, groups=groups, background=20, n_samples=96,
                                  n_jobs=n_jobs, random_state=0).fit(X)
            explainer.transform(X[:5])
            explainer.explain(X[:5], methods=methods)
            if set(methods) & set(exact):
                explainer.decompose(X[:5])

    hgb = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    steps = [
        ("tree path, regressor",
         lambda: explain(hgb, exact)),
        ("tree path, classifier",
         lambda: explain(HistGradientBoostingClassifier(max_iter=10, random_state=0)
                         .fit(X, label), exact)),
        ("tree path, random forest",
         lambda: explain(RandomForestRegressor(n_estimators=5, max_depth=4,
                                               random_state=0).fit(X, y), exact)),
        ("model calls, exact methods",
         lambda: explain(Ridge().fit(X, y), exact)),
        ("model calls, sampled methods",
         lambda: explain(Ridge().fit(X, y), sampled)),
        ("model calls, classifier",
         lambda: explain(LogisticRegression().fit(X, label), exact)),
        ("AdaptiveGrouper, tree path",
         lambda: AdaptiveGrouper(hgb, max_samples=30, n_jobs=n_jobs,
                                 random_state=0).fit(X)),
        ("AdaptiveGrouper, model calls",
         lambda: AdaptiveGrouper(Ridge().fit(X, y), max_samples=30, n_jobs=n_jobs,
                                 random_state=0).fit(X)),
        ("PairwiseGrouper",
         lambda: PairwiseGrouper(hgb, max_samples=30, n_jobs=n_jobs,
                                 random_state=0).fit(X)),
    ]
    start = time.perf_counter()
    # small calls are served in numpy; compile the kernels of larger ones
    with numba_only():
        for name, step in steps:
            t0 = time.perf_counter()
            step()
            print(f"{name:<32} {time.perf_counter() - t0:6.1f} s", flush=True)
    print(f"Compiled in {time.perf_counter() - start:.1f} s; later calls load the "
          "kernels from Numba's cache.")
    return 0


def _one_line(text, limit=600):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _message(exc):
    """One line naming the problem and the fix, for any error."""
    from ._plan import PlanError
    from ._report import DataError

    if isinstance(exc, (DataError, PlanError)):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "ran out of memory; explain fewer rows (--n-rows) or use a smaller table."
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return (f"{where}{exc.strerror or exc}; check the path, its permissions and "
                "the free space.")
    return (f"{type(exc).__name__}: {exc}. This is unexpected; rerun with --debug to see "
            "where it happened and report it to the skdecomp developers.")


def _run(args):
    try:
        return args.func(args)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("skdecomp: interrupted; no report was written.", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"skdecomp: error: {_one_line(_message(exc))}", file=sys.stderr)
        return 1


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _n_jobs(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value == 0:
        raise argparse.ArgumentTypeError(
            "0 jobs cannot run; give 1 or more, or -1 for all cores"
        )
    return value


def _budget(text):
    if text.strip().lower() in ("none", "inf", "unlimited"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number; give seconds (or megabytes), or 'none'"
        ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number or 'none', got {text}")
    return value


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2**32 - 1, got {value}")
    return value


def _images_parser(sub, common):
    img = sub.add_parser(
        "images",
        parents=[common],
        help="explain an image classifier (ONNX) on a folder of photos and write an "
        "HTML report",
        description="Read every .png, .jpg and .jpeg photo of a folder, run an ONNX "
        "image classifier on it, and explain its top class: AGREED's groups of "
        "pixels, every method's map on them, how far apart the maps are against "
        "their noise floor, each map's SRG, and a hierarchical (Owen) map per "
        "pixel; write index.html and results.json. A model file is read only as "
        "ONNX, which holds no code.",
    )
    img.add_argument("photos", help="folder of .png, .jpg and .jpeg photos")
    img.add_argument("--model", required=True, metavar="FILE.onnx",
                     help="the network as an ONNX file; pickles are refused")
    img.add_argument("--preprocess", nargs="+", metavar="VALUE",
                     help="required: MEAN STD in the 0..255 pixel scale, the network "
                     "getting (pixel - MEAN) / STD (six numbers: three per-channel "
                     "means, then three standard deviations), or 'none' when the "
                     "network scales its input itself")
    img.add_argument("--classes", metavar="FILE",
                     help="text file of the class names, one per line, in the order "
                     "of the network's outputs")
    img.add_argument("--size", nargs="+", type=_positive_int, metavar="PIXELS",
                     help="HEIGHT [WIDTH] of the photos, for a network whose input "
                     "size is free (default: read from the model)")
    img.add_argument("--output", choices=["probability", "logit"], default="probability",
                     help="explain the softmax probability of the class, or the "
                     "network's output as it is (for a network that ends in a "
                     "softmax) (default: probability)")
    img.add_argument("--budget", type=_positive_int, default=500, metavar="EVALUATIONS",
                     help="model evaluations of each photo's hierarchical map, its "
                     "AGREED included (default: 500)")
    img.set_defaults(func=_images)
    return img


def main(argv=None):
    """Run the command line; return the exit code."""
    from ._methods import method_names
    from ._plan import DEFAULT_BUDGET, DEFAULT_MEMORY, IMPUTERS
    from ._report import ESTIMATORS

    parser = argparse.ArgumentParser(
        prog="skdecomp",
        description="Explanations that agree: grouped functional decomposition of models.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", default="skdecomp-report",
                        help="report folder (default: skdecomp-report)")
    common.add_argument("--overwrite", action="store_true",
                        help="write into a folder holding other files; only "
                        "index.html and results.json are replaced")
    common.add_argument("--n-jobs", type=_n_jobs, default=None)
    common.add_argument("--random-state", type=_seed, default=0)
    common.add_argument("--debug", action="store_true",
                        help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", parents=[common],
                          help="explain a bundled dataset and model")
    demo.add_argument("--n-rows", type=_positive_int, default=3, help="rows to explain")
    demo.add_argument("--images", action="store_true",
                      help="explain the bundled EfficientNet-Lite0 on bundled photos "
                      "instead (the report of skdecomp images)")
    demo.set_defaults(func=_demo)

    comp = sub.add_parser(
        "compile",
        help="compile the kernels of the common calls ahead of their first use",
        description="Compile the Numba kernels of the common calls into the "
        "on-disk cache, so that the first call of every later process is fast.",
    )
    comp.add_argument("--n-jobs", type=_n_jobs, default=None,
                      help="threads of the compiling calls (the kernels are the "
                      "same for any number of threads)")
    comp.add_argument("--debug", action="store_true",
                      help="show the full traceback of an error")
    comp.set_defaults(func=_compile)

    rep = sub.add_parser(
        "report",
        parents=[common],
        help="explain a model of a table and write an HTML report",
        description="Load a table, fit or load a model, explain it per column and "
        "over AGREED groups, and write index.html and results.json.",
    )
    rep.add_argument("data", help="CSV or Parquet file")
    rep.add_argument("--target", required=True, help="name of the target column")
    src = rep.add_mutually_exclusive_group()
    src.add_argument("--model", help="a fitted model saved with skops (.skops)")
    src.add_argument("--estimator", choices=list(ESTIMATORS), default="hgb",
                     help="model to fit when --model is not given (default: hgb)")
    rep.add_argument("--groups", default=None,
                     help="auto (AGREED), columns, or a JSON file of column groups "
                     "(default: auto when it fits the budget)")
    rep.add_argument("--methods", nargs="+", default=None, metavar="METHOD",
                     help="explanation methods, among " + ", ".join(method_names()))
    rep.add_argument("--n-rows", type=_positive_int, default=None,
                     help="held-out rows to explain (default: 50, fewer to fit the "
                     "budget)")
    rep.add_argument("--budget", type=_budget, default=DEFAULT_BUDGET, metavar="SECONDS",
                     help="time the report may take, estimated before any model work; "
                     "rows, methods, grouping and columns are reduced to fit, or the "
                     f"report refuses (default: {DEFAULT_BUDGET:.0f}; 'none' for no limit)")
    rep.add_argument("--max-memory", type=_budget, default=DEFAULT_MEMORY, metavar="MB",
                     help="memory the report may hold at once, in megabytes "
                     f"(default: {DEFAULT_MEMORY:.0f}; 'none' for no limit)")
    rep.add_argument("--drop", nargs="+", default=None, metavar="COLUMN",
                     help="columns to leave out, e.g. an identifier")
    rep.add_argument("--imputer", choices=list(IMPUTERS), default="marginal",
                     help="the game every method explains, i.e. how the absent "
                     "columns of a row are filled: marginal, from background rows "
                     "independently of the present columns; path_dependent (tree "
                     "models), each tree weighs the branches of the absent columns by "
                     "the training rows that took them, as shap.TreeExplainer does; "
                     "conditional, drawn given the present columns from a Gaussian "
                     "copula fitted on the table (through model calls, even for trees) "
                     "(default: marginal)")
    rep.set_defaults(func=_report)
    _images_parser(sub, common)
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) > 1 and argv[0] == "report" and Path(argv[1]).is_dir():
        # the table report's options (--target, --budget in seconds) do not fit
        # photos: say which command does
        print(f"skdecomp: error: {argv[1]} is a folder; skdecomp report explains a "
              "table (a CSV or Parquet file). For a folder of photos run: skdecomp "
              f"images {argv[1]} --model MODEL.onnx --preprocess MEAN STD",
              file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if getattr(args, "methods", None):
        from ._report import DataError, check_methods

        try:
            check_methods(args.methods)
        except DataError as exc:
            rep.error(str(exc))
    return _run(args)


if __name__ == "__main__":
    sys.exit(main())
