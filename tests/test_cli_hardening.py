"""The command line refuses bad input early, in one line, and never runs a model file.

Each test reproduces a finding of the command-line review and shows it fixed.
"""

import errno
import json
import os
import subprocess
import sys
import tracemalloc
import zipfile

import numpy as np
import pandas as pd
import pytest

from skdecomp import _report
from skdecomp._report import _analysis, _output
from skdecomp.__main__ import main

skops_io = pytest.importorskip("skops.io")


def run_cli(args, capsys):
    """Run the command line in this process; return (code, stdout, stderr)."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err, *fragments):
    lines = [line for line in err.splitlines() if not line.startswith("[skdecomp]")]
    assert len(lines) == 1, err
    assert lines[0].startswith("skdecomp: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], err


@pytest.fixture
def no_model_work(monkeypatch):
    """Fail the test if a model is fitted, loaded or explained."""

    def forbidden(*args, **kwargs):
        raise AssertionError("model work started before the input was checked")

    monkeypatch.setattr(_report, "analyse", forbidden)
    monkeypatch.setattr(_analysis, "make_model", forbidden)


@pytest.fixture
def small_csv(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=30), "b": rng.normal(size=30)})
    df["y"] = df["a"] - 2 * df["b"]
    path = tmp_path / "small.csv"
    df.to_csv(path, index=False)
    return path


def quick_report(data, out, *extra):
    """Arguments of a fast report: a linear model, one partition, two rows."""
    return ["report", data, "--target", "y", "--out", out, "--estimator", "linear",
            "--groups", "columns", "--n-rows", "2", *extra]


# -- code execution from --model -------------------------------------------------------
def craft_skops(path, func, code):
    """An skops file of a fitted LinearRegression whose state calls ``builtins.func``.

    The schema is edited so that one attribute is built as ``func(code)``
    (skops' ConstructorFromReduceNode calls the named type with its content).
    """
    from sklearn.linear_model import LinearRegression

    model = LinearRegression().fit(np.arange(20.0).reshape(10, 2), np.arange(10.0))
    model.payload_ = (code,)
    skops_io.dump(model, path)
    with zipfile.ZipFile(path) as z:
        files = {name: z.read(name) for name in z.namelist()}
    schema = json.loads(files["schema.json"])
    attrs = schema["content"]["content"]
    attrs["payload_"] = {
        "__class__": func,
        "__module__": "builtins",
        "__loader__": "ConstructorFromReduceNode",
        "content": attrs.pop("payload_"),
    }
    files["schema.json"] = json.dumps(schema).encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


@pytest.mark.parametrize("func", ["exec", "eval"])
def test_skops_file_calling_a_builtin_is_refused(func, small_csv, tmp_path, capsys,
                                                 no_model_work):
    # finding: TRUSTED_PREFIXES trusted every builtins. type, so exec/eval ran
    marker = tmp_path / f"pwned-by-{func}"
    code = (f"open({str(marker)!r}, 'w').close()" if func == "exec"
            else f"__import__('pathlib').Path({str(marker)!r}).touch()")
    evil = craft_skops(tmp_path / "evil.skops", func, code)
    assert f"builtins.{func}" in skops_io.get_untrusted_types(file=evil)

    code_, _, err = run_cli(["report", small_csv, "--target", "y", "--model", evil,
                             "--out", tmp_path / "rep"], capsys)
    assert code_ == 1
    assert_one_line_error(err, f"builtins.{func}", "skops.io.load")
    assert not marker.exists()
    with pytest.raises(_report.DataError, match=f"builtins.{func}"):
        _report.load_model(evil)
    assert not marker.exists()
    assert not (tmp_path / "rep").exists()


def test_allowed_model_types_hold_no_callables():
    # finding: the prefix test let builtin functions through
    import builtins
    import collections

    allowed = _report.allowed_model_types()
    for name in ("exec", "eval", "getattr", "__import__", "open", "compile", "setattr"):
        assert f"builtins.{name}" not in allowed
    for name in allowed:
        module, _, attr = name.rpartition(".")
        if module in ("builtins", "collections"):
            obj = getattr(builtins if module == "builtins" else collections, attr)
            assert isinstance(obj, type), name
    assert "sklearn.tree._tree.Tree" in allowed
    assert "numpy.ndarray" in allowed


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_common_models_still_load(tmp_path):
    # the allow-list must not lock out the models the CLI itself fits
    from sklearn.compose import make_column_transformer
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestRegressor
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=40), "c": rng.choice(["x", "y"], 40)})
    y = X["a"] + (X["c"] == "x")
    pre = make_column_transformer((OneHotEncoder(), ["c"]), remainder="passthrough")
    models = [
        make_pipeline(pre, HistGradientBoostingClassifier(max_iter=3)).fit(X, y > 0.5),
        make_pipeline(pre, RandomForestRegressor(n_estimators=2)).fit(X, y),
        make_pipeline(pre, MLPRegressor(hidden_layer_sizes=(3,), max_iter=5)).fit(X, y),
        make_pipeline(pre, KNeighborsRegressor(n_neighbors=3)).fit(X, y),
    ]
    for k, model in enumerate(models):
        path = tmp_path / f"m{k}.skops"
        skops_io.dump(model, path)
        loaded = _report.load_model(path)
        np.testing.assert_allclose(loaded.predict(X), model.predict(X))


def test_load_model_reads_a_few_bytes_not_the_file(tmp_path):
    # finding: load_model read a whole (1 GB) file to check two bytes
    big = tmp_path / "big.skops"
    with open(big, "wb") as f:
        f.truncate(200 * 2**20)  # sparse: 200 MB of zeros, no disk used
    tracemalloc.start()
    try:
        with pytest.raises(_report.DataError, match="not an skops file"):
            _report.load_model(big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    pickle_like = tmp_path / "model.bin"
    pickle_like.write_bytes(b"\x80\x04" + b"\0" * 100)
    with pytest.raises(_report.DataError, match="pickle"):
        _report.load_model(pickle_like)


# -- --out follows symlinks and overwrites -----------------------------------------------
def test_symlink_in_out_is_never_followed(small_csv, tmp_path, capsys):
    # finding: a results.json symlink made the report overwrite a file outside --out
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    out = tmp_path / "rep"
    out.mkdir()
    (out / "results.json").symlink_to(outside)

    code, _, err = run_cli(quick_report(small_csv, out), capsys)
    assert code == 1
    assert_one_line_error(err, "did not write", "results.json", "--overwrite")
    assert outside.read_text() == "keep me"

    code, _, err = run_cli(quick_report(small_csv, out, "--overwrite"), capsys)
    assert code == 0, err
    assert outside.read_text() == "keep me"
    assert not (out / "results.json").is_symlink()
    assert json.loads((out / "results.json").read_text())["target"] == "y"


def test_out_symlink_itself_is_refused(small_csv, tmp_path, capsys, no_model_work):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    code, _, err = run_cli(quick_report(small_csv, link), capsys)
    assert code == 1
    assert_one_line_error(err, "symbolic link")
    assert list(real.iterdir()) == []


def test_foreign_files_need_overwrite_and_are_kept(small_csv, tmp_path, capsys):
    # finding: an existing index.html/results.json was replaced without a word
    out = tmp_path / "rep"
    out.mkdir()
    (out / "index.html").write_text("my own page")
    (out / "notes.txt").write_text("my notes")
    code, _, err = run_cli(quick_report(small_csv, out), capsys)
    assert code == 1
    assert_one_line_error(err, "index.html", "notes.txt", "--overwrite")
    assert (out / "index.html").read_text() == "my own page"

    code, _, err = run_cli(quick_report(small_csv, out, "--overwrite"), capsys)
    assert code == 0, err
    assert (out / "notes.txt").read_text() == "my notes"
    assert "<!DOCTYPE html>" in (out / "index.html").read_text()


def test_earlier_report_is_replaced_but_edited_one_is_not(small_csv, tmp_path, capsys):
    out = tmp_path / "rep"
    assert run_cli(quick_report(small_csv, out), capsys)[0] == 0
    code, _, err = run_cli(quick_report(small_csv, out), capsys)
    assert code == 0, err
    assert "replacing the earlier skdecomp report" in err
    (out / "index.html").write_text("edited by hand")
    code, _, err = run_cli(quick_report(small_csv, out), capsys)
    assert code == 1
    assert_one_line_error(err, "index.html", "--overwrite")
    assert (out / "index.html").read_text() == "edited by hand"


def test_failed_write_leaves_previous_report_intact(small_csv, tmp_path, capsys,
                                                   monkeypatch):
    # finding: when index.html could not be written, results.json was already replaced
    out = tmp_path / "rep"
    assert run_cli(quick_report(small_csv, out), capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    write = _output._write_file

    def failing(folder, name, data):
        if name == "index.html":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write(folder, name, data)

    monkeypatch.setattr(_output, "_write_file", failing)
    code, _, err = run_cli(quick_report(small_csv, out, "--n-rows", "3"), capsys)
    assert code == 1
    assert_one_line_error(err, "could not write the report", "nothing there was changed")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    leftovers = [p for p in [*tmp_path.iterdir(), *out.iterdir()]
                 if p.name.startswith(_output.STAGING_PREFIX)]
    assert leftovers == []


def test_failed_write_to_new_folder_leaves_nothing(small_csv, tmp_path, capsys,
                                                   monkeypatch):
    def failing(folder, name, data):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(_output, "_write_file", failing)
    out = tmp_path / "rep"
    code, _, err = run_cli(quick_report(small_csv, out), capsys)
    assert code == 1
    assert_one_line_error(err, "could not write the report")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.csv"]


# -- output problems are found before the model work -------------------------------------
@pytest.mark.parametrize(
    "case, message",
    [
        ("file", "is a file, not a folder"),
        ("proc", "under /proc"),
        ("no-parent", "does not exist"),
        ("read-only", "cannot write"),
        ("report-name-is-folder", "holds a folder named index.html"),
    ],
)
def test_output_problems_found_before_model_work(case, message, small_csv, tmp_path,
                                                 capsys, no_model_work, monkeypatch):
    # finding: FileExistsError etc. as tracebacks, after the model was fitted
    if case == "file":
        out = tmp_path / "taken"
        out.write_text("")
    elif case == "proc":
        out = "/proc/skdecomp-report"
    elif case == "no-parent":
        out = tmp_path / "missing" / "rep"
    elif case == "read-only":
        out = tmp_path / "ro"
        out.mkdir()
        out.chmod(0o500)
        if os.access(out, os.W_OK):  # root ignores permissions
            out.chmod(0o700)
            real_mkdtemp = _output.tempfile.mkdtemp

            def mkdtemp(*args, dir=None, **kwargs):
                if dir is not None and os.fspath(dir) == os.fspath(out):
                    raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), dir)
                return real_mkdtemp(*args, dir=dir, **kwargs)

            monkeypatch.setattr(_output.tempfile, "mkdtemp", mkdtemp)
    else:
        out = tmp_path / "rep"
        (out / "index.html").mkdir(parents=True)
    monkeypatch.setattr(_report, "load_table", lambda *a: pytest.fail("data was read"))
    code, _, err = run_cli(quick_report(small_csv, out, "--overwrite"), capsys)
    assert code == 1
    assert_one_line_error(err, message)


def test_output_error_in_a_subprocess_has_no_traceback(small_csv, tmp_path):
    out = tmp_path / "taken"
    out.write_text("")
    r = subprocess.run(
        [sys.executable, "-m", "skdecomp", "report", str(small_csv), "--target", "y",
         "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "is a file, not a folder" in r.stderr


def test_demo_checks_its_output_first(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "skdecomp-report").write_text("")
    monkeypatch.setattr(
        "sklearn.ensemble.HistGradientBoostingRegressor.fit",
        lambda *a, **k: pytest.fail("the demo fitted before checking --out"),
    )
    code, _, err = run_cli(["demo"], capsys)
    assert code == 1
    assert_one_line_error(err, "is a file, not a folder")
    code, _, err = run_cli(["demo", "--n-rows", "0"], capsys)
    assert code == 2 and "--n-rows" in err


# -- groups files ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "groups, message",
    [
        ([["a", ["b"]]], 'holds ["b"], which is not a column name'),
        ({"g": ["a", "nope"]}, "unknown column 'nope'"),
        ([["a"], ["a", "b"]], "groups overlap"),
        ([["a"]], "groups miss columns ['b']"),
        ([[True, "b"]], "holds true"),
        ("a", "must hold a list of column lists"),
    ],
)
def test_bad_groups_file_refused_before_model_work(groups, message, small_csv, tmp_path,
                                                   capsys, no_model_work):
    # finding: nested lists in --groups gave a TypeError traceback after the fit
    path = tmp_path / "groups.json"
    path.write_text(json.dumps(groups))
    code, _, err = run_cli(["report", small_csv, "--target", "y", "--groups", path,
                            "--out", tmp_path / "rep"], capsys)
    assert code == 1
    assert_one_line_error(err, message)


# -- accepted nonsense -------------------------------------------------------------------
@pytest.mark.parametrize("value", ["-5", "0", "two"])
def test_n_rows_is_a_usage_error_before_data_is_read(value, tmp_path, capsys,
                                                     no_model_work):
    # finding: --n-rows -5 explained 195 rows and exited 0
    code, _, err = run_cli(["report", tmp_path / "absent.csv", "--target", "y",
                            "--n-rows", value], capsys)
    assert code == 2
    assert "--n-rows" in err and "no such file" not in err


@pytest.mark.parametrize("n_rows", [-5, 0, 2.5, True])
def test_analyse_refuses_a_bad_n_rows(n_rows):
    with pytest.raises(_report.DataError, match="n_rows"):
        _report.analyse(None, None, n_rows=n_rows)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--methods", "shap"], "unknown methods ['shap']"),
        (["--n-jobs", "0"], "--n-jobs"),
        (["--random-state", "-1"], "--random-state"),
    ],
)
def test_other_options_are_usage_errors(args, message, small_csv, capsys, no_model_work):
    code, _, err = run_cli(["report", small_csv, "--target", "y", *args], capsys)
    assert code == 2
    assert message in err


def write_table(tmp_path, y, n_columns=2):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(len(y), n_columns)),
                      columns=[f"x{j}" for j in range(n_columns)])
    df["y"] = y
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "y, message",
    [
        ([3.0] * 20, "has the same value (3.0) in all 20 rows"),
        (["a"] * 20, "has the same value ('a') in all 20 rows"),
        ([np.nan] * 20, "has no values (all 20 are missing)"),
        ([f"id{i}" for i in range(200)], "200 distinct values in 200 rows"),
        ([f"c{i % 12}" for i in range(20)], "at most 10 classes"),
        ([1.0, 2.0], "only 2 data row(s)"),
        ([1.0], "only 1 data row(s)"),
        ([1.0, np.inf] * 10, "infinite values"),
    ],
)
def test_target_checked_before_fitting(y, message, tmp_path, capsys, no_model_work):
    # findings: a constant target failed inside the explainer; 200 text classes fitted
    # for 663 s; a one-row CSV gave a report
    path = write_table(tmp_path, y)
    code, _, err = run_cli(["report", path, "--target", "y", "--out", tmp_path / "rep"],
                           capsys)
    assert code == 1
    assert_one_line_error(err, message)
    assert not (tmp_path / "rep").exists()


def test_integer_target_with_mostly_distinct_values_is_regression():
    from skdecomp._report import is_classification

    assert not is_classification(np.arange(12))
    assert is_classification(np.arange(12) % 3)


def test_exact_methods_with_too_many_columns_refused_before_fit(tmp_path, capsys,
                                                                no_model_work):
    path = write_table(tmp_path, np.arange(20.0), n_columns=17)
    # without a tree model, exact Shapley values enumerate 2**17 coalitions
    code, _, err = run_cli(["report", path, "--target", "y", "--methods", "shapley",
                            "--estimator", "linear", "--out", tmp_path / "rep"], capsys)
    assert code == 1
    assert_one_line_error(err, "17 columns", "at most 16")


def test_unexpected_error_is_one_line_and_debug_shows_traceback(small_csv, tmp_path,
                                                                capsys, monkeypatch):
    # finding: the CLI caught only ValueError; anything else was a traceback
    def broken(*args, **kwargs):
        raise TypeError("boom\nsecond line")

    monkeypatch.setattr(_report, "analyse", broken)
    code, _, err = run_cli(quick_report(small_csv, tmp_path / "rep"), capsys)
    assert code == 1
    assert_one_line_error(err, "TypeError: boom second line", "--debug")
    with pytest.raises(TypeError, match="boom"):
        main([str(a) for a in quick_report(small_csv, tmp_path / "rep", "--debug")])
    assert not (tmp_path / "rep").exists()


# -- files that are not what their name says ----------------------------------------------
def _parquet_bytes():
    pytest.importorskip("pyarrow")
    import io

    buffer = io.BytesIO()
    pd.DataFrame({"a": np.arange(30.0), "y": np.arange(30.0)}).to_parquet(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "name, content, fragments",
    [
        ("empty.parquet", lambda: b"", ["is empty (0 bytes)"]),
        ("table.parquet", lambda: b"a,b,y\n1,2,3\n4,5,6\n",
         ["is not a Parquet file", "'a,b,y'", "rename it to end in .csv"]),
        ("noise.parquet", lambda: bytes(range(256)), ["is not a Parquet file", "PAR1"]),
        ("cut.parquet", lambda: _parquet_bytes()[:200], ["is cut off"]),
        ("table.csv", _parquet_bytes, ["is a Parquet file, not a CSV file", ".parquet"]),
    ],
)
def test_file_of_the_wrong_format_is_a_one_line_data_error(name, content, fragments,
                                                           tmp_path, capsys,
                                                           no_model_work):
    # finding: pyarrow's ArrowInvalid was reported as an unexpected error
    path = tmp_path / name
    path.write_bytes(content())
    code, _, err = run_cli(quick_report(path, tmp_path / "rep"), capsys)
    assert code == 1
    assert_one_line_error(err, *fragments)
    assert "unexpected" not in err


def test_damaged_parquet_file_is_a_one_line_data_error(tmp_path, capsys, no_model_work):
    data = bytearray(_parquet_bytes())
    data[4:-8] = b"\x00" * (len(data) - 12)  # the markers kept, the content lost
    path = tmp_path / "damaged.parquet"
    path.write_bytes(bytes(data))
    code, _, err = run_cli(quick_report(path, tmp_path / "rep"), capsys)
    assert code == 1
    assert_one_line_error(err, "could not be read as a Parquet file", "damaged")
