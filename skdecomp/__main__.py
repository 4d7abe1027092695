"""Command line of skdecomp: ``skdecomp demo`` (also ``python -m skdecomp demo``)."""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys
from pathlib import Path


def _demo(args):
    import numpy as np
    import pandas as pd
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import HistGradientBoostingRegressor

    from skdecomp import Explainer

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = HistGradientBoostingRegressor(max_iter=100, random_state=args.random_state)
    model.fit(X, y)
    print(
        f"Model: HistGradientBoostingRegressor on the diabetes data "
        f"({X.shape[0]} rows, {X.shape[1]} columns)."
    )
    explainer = Explainer(model, background=100, random_state=args.random_state)
    explainer.fit(X)
    rows = X.iloc[: args.n_rows]
    methods = ["shapley", "banzhaf", "occlusion", "arch"]
    res = explainer.explain(rows, methods=methods)
    names = explainer.get_feature_names_out()
    pd.set_option("display.width", 120)
    for i in range(len(rows)):
        table = pd.DataFrame({m: res[m][i] for m in methods}, index=names)
        print(f"\nRow {rows.index[i]}: f(x) = {model.predict(rows.iloc[[i]])[0]:.2f}, "
              f"E_B f = {explainer.expected_value_:.2f}")
        print(table.round(2).to_string())
    scale = np.var(model.predict(X))
    print("\nDisagreement between methods (mean squared difference / Var f):")
    for a in range(len(methods)):
        for b in range(a + 1, len(methods)):
            d = np.mean((res[methods[a]] - res[methods[b]]) ** 2) / scale
            print(f"  {methods[a]:>9} vs {methods[b]:<9} {d:.4f}")
    dec = explainer.decompose(rows)
    inter = np.mean(sum(dec.order(s) ** 2 for s in range(2, dec.n_groups + 1)))
    print(f"\nBetween-group interaction mass E[(sum_|U|>=2 F_U)^2] / Var f: "
          f"{inter / scale:.4f}; it is what makes the methods disagree.")

    from ._report import analyse, write_report

    y = y.rename("disease progression")
    results = analyse(X, y, model=model, groups="auto", n_rows=args.n_rows * 5,
                      random_state=args.random_state, n_jobs=args.n_jobs,
                      log=lambda msg: print(f"[skdecomp] {msg}"))
    out = write_report(results, args.out, title="skdecomp demo: diabetes")
    for key, part in results["partitions"].items():
        print(f"{key:>8} partition: {len(part['group_names'])} groups, mean disagreement "
              f"{part['mean_disagreement_l2']:.4f}")
    print(f"Report written to {out / 'index.html'}")
    return 0


def _report(args):
    from ._report import DataError, analyse, load_groups, load_model, load_table, write_report

    try:
        X, y = load_table(args.data, args.target)
        model = load_model(args.model) if args.model else None
        groups = load_groups(args.groups, X)
        results = analyse(
            X, y, model=model, estimator=args.estimator, groups=groups,
            methods=args.methods, n_rows=args.n_rows, n_jobs=args.n_jobs,
            random_state=args.random_state,
            log=lambda msg: print(f"[skdecomp] {msg}", file=sys.stderr),
        )
        out = write_report(results, args.out, title=f"skdecomp report: {Path(args.data).name}")
    except DataError as exc:
        print(f"skdecomp: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"skdecomp: error: {exc}", file=sys.stderr)
        return 1
    for note in results["notes"]:
        print(f"note: {note}", file=sys.stderr)
    print(f"Report written to {out / 'index.html'}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="skdecomp",
        description="Explanations that agree: grouped functional decomposition of models.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="explain a bundled dataset and model")
    demo.add_argument("--n-rows", type=int, default=3, help="rows to explain")
    demo.add_argument("--random-state", type=int, default=0)
    demo.add_argument("--n-jobs", type=int, default=None)
    demo.add_argument("--out", default="skdecomp-report", help="report folder")
    demo.set_defaults(func=_demo)

    rep = sub.add_parser(
        "report",
        help="explain a model of a table and write an HTML report",
        description="Load a table, fit or load a model, explain it per column and "
        "over AGREED groups, and write index.html and results.json.",
    )
    rep.add_argument("data", help="CSV or Parquet file")
    rep.add_argument("--target", required=True, help="name of the target column")
    src = rep.add_mutually_exclusive_group()
    src.add_argument("--model", help="a fitted model saved with skops (.skops)")
    src.add_argument("--estimator", choices=["hgb", "rf", "linear", "mlp"], default="hgb",
                     help="model to fit when --model is not given (default: hgb)")
    rep.add_argument("--groups", default="auto",
                     help="auto (AGREED), columns, or a JSON file of column groups")
    rep.add_argument("--methods", nargs="+", default=None, help="explanation methods")
    rep.add_argument("--n-rows", type=int, default=20, help="rows to explain")
    rep.add_argument("--out", default="skdecomp-report", help="report folder")
    rep.add_argument("--n-jobs", type=int, default=None)
    rep.add_argument("--random-state", type=int, default=0)
    rep.set_defaults(func=_report)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
