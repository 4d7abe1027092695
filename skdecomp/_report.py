"""The analysis behind ``skdecomp report`` and ``skdecomp demo``, and its HTML page."""

# SPDX-License-Identifier: BSD-3-Clause

import base64
import html
import io
import json
import os
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["DataError", "load_table", "load_model", "make_model", "analyse", "write_report"]

PICKLE_SUFFIXES = {".pkl", ".pickle", ".joblib", ".sav", ".p"}
# modules whose types an skops file may hold without being trusted by hand
TRUSTED_PREFIXES = ("sklearn.", "numpy.", "scipy.", "skdecomp.", "builtins.", "collections.")


class DataError(Exception):
    """A problem with the user's data or model; the message says what to fix."""


# -- inputs --------------------------------------------------------------------------
def load_table(path, target):
    """Read a CSV or Parquet file and split off the target column."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file.")
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            try:
                df = pd.read_parquet(path)
            except ImportError as exc:
                raise DataError(
                    f"{path}: reading Parquet needs pyarrow; install it with "
                    "'pip install pyarrow' or give a CSV file."
                ) from exc
        else:
            df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty; give a table with a header row and data rows.")
    except (UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise DataError(f"{path} could not be read as a table ({exc}).")
    if df.shape[0] == 0:
        raise DataError(f"{path} has a header but no data rows.")
    if target not in df.columns:
        raise DataError(
            f"target column {target!r} is not in {path.name}; its columns are "
            f"{list(map(str, df.columns))}. Pass one of them with --target."
        )
    y = df[target]
    if y.isna().any():
        raise DataError(
            f"target column {target!r} has {int(y.isna().sum())} missing values; "
            "drop those rows first."
        )
    X = df.drop(columns=[target])
    if X.shape[1] == 0:
        raise DataError(f"{path.name} has no columns besides the target {target!r}.")
    X.columns = [str(c) for c in X.columns]
    for col in X.columns:
        if X[col].dtype == object or pd.api.types.is_string_dtype(X[col]):
            X[col] = X[col].astype("category")
    return X, y


def is_classification(y, model=None):
    """Whether to treat the target as classes.

    A given model decides by its type. Otherwise non-numeric or boolean
    targets are classes, and so are integer targets with at most 20 distinct
    values; everything else is a regression target.
    """
    if model is not None:
        from sklearn.base import is_classifier

        return bool(is_classifier(model))
    y = pd.Series(y)
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return True
    values = y.to_numpy()
    integral = np.all(np.equal(np.mod(values, 1), 0))
    return bool(integral and y.nunique() <= 20)


def make_model(kind, X, y, random_state=None):
    """A pipeline that encodes non-numeric columns, then the chosen model.

    Returns the unfitted pipeline and a note on what was encoded.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression, RidgeCV
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    clf = is_classification(y)
    models = {
        "hgb": (HistGradientBoostingClassifier if clf else HistGradientBoostingRegressor)(
            random_state=random_state
        ),
        "rf": (RandomForestClassifier if clf else RandomForestRegressor)(
            n_estimators=100, random_state=random_state
        ),
        "linear": LogisticRegression(max_iter=1000) if clf else RidgeCV(),
        "mlp": (MLPClassifier if clf else MLPRegressor)(
            hidden_layer_sizes=(64,), max_iter=500, random_state=random_state
        ),
    }
    categorical = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    numeric = [c for c in X.columns if c not in categorical]
    transformers = []
    if categorical:
        transformers.append(
            (
                "categorical",
                make_pipeline(
                    SimpleImputer(strategy="most_frequent"),
                    OneHotEncoder(handle_unknown="ignore"),
                ),
                categorical,
            )
        )
    if numeric:
        transformers.append(
            ("numeric", make_pipeline(SimpleImputer(), StandardScaler()), numeric)
        )
    pre = ColumnTransformer(transformers)
    note = (
        f"non-numeric columns {categorical} are one-hot encoded inside the model "
        "pipeline and explained as raw columns"
        if categorical
        else "all columns are numeric"
    )
    return make_pipeline(pre, models[kind]), note


def load_model(path):
    """Load a scikit-learn model saved with skops; refuse pickle files."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such model file.")
    head = path.read_bytes()[:2]
    if path.suffix.lower() in PICKLE_SUFFIXES or head[:1] == b"\x80":
        raise DataError(
            f"{path.name} is a pickle file. Loading a pickle can run any code it "
            "contains, so skdecomp refuses it. Convert it where you trust it: "
            "'import joblib, skops.io as sio; sio.dump(joblib.load(\"model.pkl\"), "
            "\"model.skops\")', then pass --model model.skops."
        )
    if not zipfile.is_zipfile(path):
        raise DataError(
            f"{path.name} is not an skops file; save the model with "
            "'skops.io.dump(model, \"model.skops\")'."
        )
    try:
        import skops.io as sio
    except ImportError as exc:  # pragma: no cover - skops is a dependency
        raise DataError("loading models needs skops: pip install skops") from exc
    try:
        untrusted = sio.get_untrusted_types(file=path)
    except Exception as exc:
        raise DataError(f"{path.name} is unreadable as an skops file ({exc}).") from exc
    foreign = [t for t in untrusted if not t.startswith(TRUSTED_PREFIXES)]
    if foreign:
        raise DataError(
            f"{path.name} holds types outside scikit-learn, NumPy and SciPy: "
            f"{foreign}. Load and check it yourself with skops.io.load(..., "
            "trusted=[...]) and explain it from Python."
        )
    try:
        return sio.load(path, trusted=untrusted)
    except Exception as exc:
        raise DataError(f"{path.name} could not be loaded ({exc}).") from exc


def load_groups(spec, X):
    """``auto``, ``columns`` or a JSON file with a list or dict of column lists."""
    if spec in ("auto", "columns"):
        return spec
    path = Path(spec)
    if not path.exists():
        raise DataError(f"--groups {spec}: no such file; use auto, columns or a JSON file.")
    try:
        groups = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise DataError(f"{path.name} is not valid JSON ({exc}).") from exc
    if not isinstance(groups, (list, dict)):
        raise DataError(
            f"{path.name} must hold a list of column lists or an object mapping "
            "group names to column lists."
        )
    return groups


# -- analysis ------------------------------------------------------------------------
EXACT_DEFAULT = ["shapley", "banzhaf", "occlusion", "arch"]
SAMPLED_DEFAULT = ["kernel_shap", "permutation_shap", "lime"]


def _explain_partition(model, X, groups, methods, *, n_rows, background, random_state,
                       n_jobs, notes, target=None):
    from . import metrics
    from ._explainer import MAX_EXACT_GROUPS, Explainer

    from ._partition import resolve_groups

    positions, names = resolve_groups(
        None if groups is None else groups, X.shape[1], list(X.columns)
    )
    K = len(positions)
    chosen = list(methods) if methods else None
    if chosen is None:
        chosen = EXACT_DEFAULT if K <= MAX_EXACT_GROUPS else SAMPLED_DEFAULT
        if K > MAX_EXACT_GROUPS:
            notes.append(
                f"{K} groups are more than exact enumeration allows (at most "
                f"{MAX_EXACT_GROUPS}); using the sampled methods {SAMPLED_DEFAULT}."
            )
    rows = X.iloc[:n_rows]
    explainer = Explainer(
        model,
        method=chosen[0],
        groups=groups,
        background=background,
        target=target,
        random_state=random_state,
        n_jobs=n_jobs,
    ).fit(X)
    # one set of model calls serves every exact method
    res = {m: np.asarray(a, dtype=float) for m, a in explainer.explain(rows, methods=chosen).items()}
    scale = float(np.var(explainer.game_.predict(explainer.game_.check_X(X)))) or 1.0
    pair = metrics.disagreement(res, measure="l2")
    rank = metrics.disagreement(res, measure="spearman")
    return {
        "group_names": [str(n) for n in names],
        "groups": [[str(X.columns[j]) for j in pos] for pos in positions],
        "methods": chosen,
        "attributions": {m: a.tolist() for m, a in res.items()},
        "importance": {m: np.mean(np.abs(a), axis=0).tolist() for m, a in res.items()},
        "disagreement_l2": (np.asarray(pair.pairwise) / scale).tolist(),
        "disagreement_spearman": np.asarray(rank.pairwise).tolist(),
        "mean_disagreement_l2": float(pair.score) / scale,
        "output": explainer.output_names_[0] if explainer.n_outputs_ == 1 else None,
        "n_rows": int(len(rows)),
    }


def analyse(X, y, *, model=None, estimator="hgb", groups="auto", methods=None,
            n_rows=20, background=50, n_jobs=None, random_state=0, log=print):
    """Fit or take a model, explain it per column and over AGREED groups.

    Returns a JSON-serialisable dict of results.
    """
    notes = []
    t0 = time.perf_counter()
    if model is None:
        model, note = make_model(estimator, X, y, random_state=random_state)
        notes.append(note)
        log(f"fitting a {estimator} model on {X.shape[0]} rows, {X.shape[1]} columns")
        model.fit(X, y)
    else:
        try:
            model.predict(X.iloc[:2])
        except Exception as exc:
            raise DataError(
                f"the model cannot predict on the table's columns ({exc}); give "
                "the table it was trained on (same columns, same encoding)."
            ) from exc
    classification = is_classification(y, model)
    target_class = None
    if classification and hasattr(model, "classes_") and len(model.classes_) > 2:
        # explain the most frequent class; one output keeps the report readable
        target_class = pd.Series(y).mode().iloc[0]
        notes.append(f"multiclass target: explaining the probability of class {target_class!r}")

    partitions = {}
    history = None
    if isinstance(groups, (list, dict)):
        partitions["given"] = groups
    else:
        partitions["columns"] = None
        if groups == "auto":
            from ._grouping._groupers import AdaptiveGrouper

            log("grouping interacting columns with AGREED")
            grouper = AdaptiveGrouper(
                model,
                max_samples=min(50, X.shape[0]),
                n_groups=None,
                target=target_class,
                n_jobs=n_jobs,
                random_state=random_state,
            ).fit(X)
            partitions["agreed"] = {
                str(name): [str(X.columns[j]) for j in cols]
                for name, cols in zip(grouper.group_names_, grouper.groups_)
            }
            history = {
                "initial_loss": float(grouper.initial_loss_),
                "final_loss": float(grouper.loss_),
                "merges": [
                    {
                        "groups": [[int(j) for j in g] for g in h["groups"]],
                        "names": [str(n) for n in h["names"]],
                        "loss_before": float(h["loss_before"]),
                        "loss_after": float(h["loss_after"]),
                        "n_groups": int(h["n_groups"]),
                    }
                    for h in grouper.history_
                ],
            }
    results = {}
    for key, part in partitions.items():
        log(f"explaining {n_rows} rows over the {key} partition")
        results[key] = _explain_partition(
            model, X, part, methods, n_rows=min(n_rows, X.shape[0]),
            background=min(background, X.shape[0]), random_state=random_state,
            n_jobs=n_jobs, notes=notes, target=target_class,
        )
    return {
        "n_rows": int(X.shape[0]),
        "columns": [str(c) for c in X.columns],
        "target": str(y.name),
        "task": "classification" if classification else "regression",
        "model": type(model).__name__ if not hasattr(model, "steps") else
        " > ".join(type(s).__name__ for _, s in model.steps),
        "partitions": results,
        "agreed": history,
        "notes": notes,
        "seconds": round(time.perf_counter() - t0, 2),
    }


# -- HTML ------------------------------------------------------------------------------
def _e(text):
    return html.escape(str(text), quote=True)


def _table(header, rows, fmt="{:.3g}"):
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append(f"<td class='num'>{_e(fmt.format(v))}</td>")
            else:
                cells.append(f"<td>{_e(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f"<img alt='figure' src='data:image/png;base64,{data}'>"


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:1.8em}table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
td,th{border:1px solid #ddd;padding:.25em .6em}th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}img{max-width:100%}
.note{background:#fff8e1;border-left:4px solid #f0c000;padding:.4em .8em;margin:.4em 0}
"""


def render_html(results, figures=None, title="skdecomp report"):
    """A self-contained HTML page; every user-provided string is escaped."""
    figures = figures or {}
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>Target <b>{_e(results['target'])}</b> ({_e(results['task'])}), "
        f"model <code>{_e(results['model'])}</code>, {results['n_rows']} rows, "
        f"{len(results['columns'])} columns. Analysis took {results['seconds']} s.</p>",
    ]
    for note in results["notes"]:
        parts.append(f"<div class='note'>{_e(note)}</div>")
    labels = {"columns": "One group per column", "agreed": "AGREED groups",
              "given": "Given groups"}
    for key, part in results["partitions"].items():
        parts.append(f"<h2>{_e(labels.get(key, key))}</h2>")
        parts.append(
            f"<p>Mean disagreement between methods (squared difference / Var f): "
            f"<b>{part['mean_disagreement_l2']:.4g}</b>. Lower means the explanations "
            "can be trusted to say the same thing.</p>"
        )
        if key in figures:
            parts.extend(figures[key])
        rows = [
            [name, " + ".join(cols)] + [part["importance"][m][k] for m in part["methods"]]
            for k, (name, cols) in enumerate(zip(part["group_names"], part["groups"]))
        ]
        parts.append("<p>Mean absolute attribution per group and method:</p>")
        parts.append(_table(["group", "columns"] + part["methods"], rows))
        dis = part["disagreement_l2"]
        parts.append("<p>Pairwise disagreement (squared difference / Var f):</p>")
        parts.append(_table([""] + part["methods"],
                            [[m] + [float(v) for v in dis[i]] for i, m in enumerate(part["methods"])]))
    if results.get("agreed"):
        a = results["agreed"]
        parts.append("<h2>How AGREED merged the columns</h2>")
        parts.append(
            f"<p>Between-group interaction loss fell from {a['initial_loss']:.4g} "
            f"to {a['final_loss']:.4g}.</p>"
        )
        if "agreed_curve" in figures:
            parts.extend(figures["agreed_curve"])
        parts.append(_table(["merged", "groups after", "loss after"],
                            [[" + ".join(h["names"]), str(h["n_groups"]), h["loss_after"]]
                             for h in a["merges"]]))
    parts.append("<p>Made with skdecomp.</p></body></html>")
    return "\n".join(parts)


def make_figures(results):
    """Figures embedded in the report (empty when matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        return {}
    from .plot import AttributionDisplay, DisagreementDisplay, GroupingDisplay

    figures = {}
    for key, part in results["partitions"].items():
        res = {m: np.asarray(a, dtype=float) for m, a in part["attributions"].items()}
        n_groups = len(part["group_names"])
        fig, axes = plt.subplots(
            1, 2, figsize=(12, 0.35 * min(n_groups, 20) + 2.5),
            gridspec_kw={"width_ratios": [2, 1]},
        )
        AttributionDisplay.from_result(
            {m: np.abs(a).mean(axis=0) for m, a in res.items()},
            group_names=part["group_names"], kind="bar", ax=axes[0],
        )
        axes[0].set_xlabel("mean |attribution|")
        axes[0].set_title(f"Mean |attribution| over {part['n_rows']} rows")
        # the same normalised matrix as the table below (squared difference / Var f)
        DisagreementDisplay.from_result(
            {"pairwise": np.asarray(part["disagreement_l2"]), "names": part["methods"]},
            measure="l2 / Var f", ax=axes[1],
        )
        figures[key] = [_png(fig)]
    agreed = results.get("agreed")
    if agreed and agreed["merges"]:
        fig, ax = plt.subplots(figsize=(7, 4))
        GroupingDisplay.from_result(
            agreed["merges"], initial_loss=agreed["initial_loss"], ax=ax
        )
        figures["agreed_curve"] = [_png(fig)]
    return figures


def write_report(results, out_dir, title="skdecomp report"):
    """Write ``index.html`` and ``results.json`` into ``out_dir``."""
    out = Path(out_dir)
    os.makedirs(out, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "index.html").write_text(render_html(results, make_figures(results), title),
                                    encoding="utf-8")
    return out
