"""Command line of skdecomp: ``skdecomp demo`` (also ``python -m skdecomp demo``)."""

# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys


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
              f"E_B f = {explainer.baseline_:.2f}")
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
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
