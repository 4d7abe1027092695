"""Record the report's analysis of two tables, to compare later versions against.

Run from the repository root::

    python tests/data/record_report_analysis.py

It writes ``tests/data/report_analysis.json``: the results of
``skdecomp._report.analyse`` (without the wall time) for the demo (the diabetes
data, a gradient-boosted model, per column and over AGREED groups) and for a
small messy mixed table (an identifier, a constant column, a leak, missing
values, many-level categories and dates), and for the four-block example
on which AGREED merges columns. ``tests/test_report.py`` recomputes
both and compares them with tolerances.
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the checkout's package, not an installed one
sys.path.insert(0, str(HERE.parents[1]))


def demo_case():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X, y.rename("disease progression"), dict(estimator="hgb", groups="auto",
                                                    n_rows=20, background=30)


def messy_case():
    from skdecomp.datasets import make_mixed_table

    data = make_mixed_table(240, n_numeric=4, n_categorical=6, id_column=True,
                            constant_column=True, leak=True, random_state=0)
    return data.data, data.target, dict(estimator="hgb", groups="auto", n_rows=15,
                                        background=20)


def blocks_case():
    import pandas as pd

    from skdecomp.datasets import make_agreed_example

    data = make_agreed_example(200, noise=0.05, random_state=0)
    X, y = data.data, data.target
    X = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    return X, pd.Series(y, name="y"), dict(estimator="hgb", groups="auto", n_rows=15,
                                           background=20)


CASES = {"demo": demo_case, "messy": messy_case, "blocks": blocks_case}


def run(name):
    from skdecomp._report import analyse

    X, y, kwargs = CASES[name]()
    res = analyse(X, y, random_state=0, log=lambda msg: None, **kwargs)
    res.pop("seconds")
    return json.loads(json.dumps(res))


if __name__ == "__main__":
    out = {name: run(name) for name in CASES}
    path = HERE / "report_analysis.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")
