"""Writing the report's files safely."""

# SPDX-License-Identifier: BSD-3-Clause

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from .._json import strict_json
from ._common import MARKER, PSEUDO_FILESYSTEMS, REPORT_FILES, STAGING_PREFIX, DataError
from ._figures import make_figures
from ._page import render_html


def _digest(data):
    return hashlib.sha256(data).hexdigest()


def _read_nofollow(path):
    """Bytes of a regular file, refusing to follow a symbolic link."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _foreign_entries(out):
    """Names in ``out`` that an earlier report did not write, or that changed since."""
    try:
        recorded = json.loads(_read_nofollow(out / MARKER))["files"]
        if not isinstance(recorded, dict):
            recorded = {}
    except (OSError, ValueError, KeyError, TypeError):
        recorded = {}
    foreign = []
    with os.scandir(out) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith(STAGING_PREFIX):
                continue  # another run's staging folder; never touched
            regular = entry.is_file(follow_symlinks=False)
            if regular and name == MARKER and recorded:
                continue
            if regular and name in REPORT_FILES and name in recorded:
                try:
                    if _digest(_read_nofollow(out / name)) == recorded[name]:
                        continue
                except OSError:
                    pass
            foreign.append(name)
    return sorted(foreign)


def _probe_writable(folder, label):
    """Create and remove a folder in ``folder``, as the report will."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    except OSError as exc:
        raise DataError(
            f"--out {label}: cannot write in {folder} ({exc.strerror or exc}); "
            "choose a folder you can write to."
        ) from exc


def check_output(out_dir, overwrite=False):
    """Check that the report can be written to ``out_dir``, before any model work.

    Parameters
    ----------
    out_dir : str or path-like
        The report folder. It may be missing (its parent must exist), empty,
        or hold an earlier report; other files in it need ``overwrite``.
    overwrite : bool, default=False
        Whether to write into a folder holding files the report did not
        write; only the report's own files are then replaced.

    Returns
    -------
    action : str
        What writing the report will do, for the log.
    """
    label = os.fspath(out_dir)
    out = Path(os.path.abspath(label))
    if not out.name:
        raise DataError(f"--out {label}: give a folder for the report, not the root.")
    parent = out.parent
    real_parent = os.path.realpath(parent)
    for fs in PSEUDO_FILESYSTEMS:
        if real_parent == fs or real_parent.startswith(fs + os.sep):
            raise DataError(
                f"--out {label} is under {fs}, a system folder that holds no files; "
                "choose a folder in your home or working directory."
            )
    if os.path.islink(out):
        raise DataError(
            f"--out {label} is a symbolic link; skdecomp does not follow links when "
            "it writes. Give the folder itself, or a new folder."
        )
    if not parent.is_dir():
        raise DataError(
            f"--out {label}: the folder {parent} that should hold it does not exist; "
            f"create it first (mkdir -p {parent}) or choose another --out."
        )
    if not out.exists():
        _probe_writable(parent, label)
        return f"writing the report to the new folder {out}"
    if not out.is_dir():
        raise DataError(
            f"--out {label} is a file, not a folder; give a folder for index.html "
            "and results.json (a new one is created)."
        )
    _probe_writable(out, label)
    for name in (*REPORT_FILES, MARKER):
        target = out / name
        if target.is_dir() and not target.is_symlink():
            raise DataError(
                f"--out {label} holds a folder named {name}; move it away or "
                "choose another --out."
            )
    foreign = _foreign_entries(out)
    if not foreign:
        if any((out / name).exists() for name in REPORT_FILES):
            return f"replacing the earlier skdecomp report in {out}"
        return f"writing the report to the empty folder {out}"
    if not overwrite:
        shown = ", ".join(foreign[:5])
        if len(foreign) > 5:
            shown += f" and {len(foreign) - 5} more"
        raise DataError(
            f"--out {label} already holds files skdecomp did not write ({shown}); "
            "choose a new or empty folder, or pass --overwrite to replace only "
            "index.html and results.json there."
        )
    return (
        f"replacing index.html and results.json in {out} (--overwrite); its other "
        "files are left alone"
    )


def _write_file(folder, name, data):
    """Write ``data`` (bytes) to a new file ``folder / name``, flushed to disk."""
    with open(folder / name, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_report(results, out_dir, title="skdecomp report", overwrite=False,
                 started=None, html=None):
    """Write ``index.html`` and ``results.json`` into ``out_dir``, atomically.

    Both files are written to a staging folder first (next to ``out_dir``
    when it does not exist yet, inside it when it does, so that moving them
    is a rename on one file system) and moved into place only when complete.
    A failure leaves an earlier report untouched. Symbolic links in
    ``out_dir`` are replaced, never followed.

    Parameters
    ----------
    results : dict
        What :func:`analyse` returns.
    out_dir : str or path-like
        The report folder; see :func:`check_output`.
    title : str, default="skdecomp report"
        Title of the page.
    overwrite : bool, default=False
        Whether to write into a folder holding files the report did not write.
    started : float or None, default=None
        ``time.perf_counter()`` when the work began; the report's time is then
        the wall time from it to the page, figures included.
    html : callable or None, default=None
        ``html(results)`` gives the page (the results with ``seconds``); None
        draws the tabular report's figures and page.

    Returns
    -------
    out : Path
        The report folder.
    """
    check_output(out_dir, overwrite=overwrite)
    out = Path(os.path.abspath(os.fspath(out_dir)))
    if html is None:
        figures = make_figures(results)

        def html(results):
            return render_html(results, figures, title)

    if started is not None:
        results = dict(results, seconds=round(time.perf_counter() - started, 2))
    files = {
        "results.json": json.dumps(strict_json(results), indent=2,
                                   allow_nan=False).encode("utf-8"),
        "index.html": html(results).encode("utf-8"),
    }
    existing = out.is_dir()
    staging_dir = out if existing else out.parent
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=staging_dir))
    moved = []
    try:
        for name, data in files.items():
            _write_file(staging, name, data)
        marker = {"files": {name: _digest(data) for name, data in files.items()}}
        _write_file(staging, MARKER, json.dumps(marker).encode("utf-8"))
        if existing:
            # os.replace swaps the directory entry: a symbolic link is replaced
            for name in (*files, MARKER):
                os.replace(staging / name, out / name)
                moved.append(name)
        else:
            # mkdtemp makes a private folder; give it the mode a new folder gets
            probe = staging / "mode"
            os.mkdir(probe)
            mode = os.stat(probe).st_mode & 0o777
            os.rmdir(probe)
            os.chmod(staging, mode)
            os.rename(staging, out)
            staging = None
    except OSError as exc:
        state = (
            f"only {', '.join(moved)} were replaced" if moved
            else "nothing there was changed"
        )
        raise DataError(
            f"could not write the report to {out} ({exc.strerror or exc}); {state}. "
            "Free some space or choose another --out."
        ) from exc
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return out
