"""``skdecomp images`` and ``skdecomp demo --images``: the image report from one command.

A tiny ONNX network (exported from ``tests/_cnn.small_cnn``) on three small
photos: exit code, strict JSON, one entry per photo, finite scores, the page
naming every photo (and showing it in headless Chromium), and the refusals
that come before any model work.
"""

import contextlib
import io
import json
import math
import os
import pickle

import numpy as np
import pytest

from skdecomp.__main__ import main

pytest.importorskip("onnxruntime")
pytest.importorskip("torch")
pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")

HOSTILE = "<img src=x onerror=console.error('pwned')>"
#: every class name holds markup: whichever class the network picks, the page
#: must show it as text
CLASSES = [f"{HOSTILE} {i}" for i in range(5)]
PHOTO_KEYS = {
    "file", "class", "class_name", "probability", "top", "blurred_probability",
    "change", "agreed", "methods", "n_samples", "maps", "agreement", "hierarchical",
    "group_pixels", "attributions", "evaluations", "seconds", "verdict",
}


def _refuse_nan(name):
    raise ValueError(f"results.json holds {name}, which strict JSON has not")


def _strict(text):
    return json.loads(text, parse_constant=_refuse_nan)


def run_cli(args):
    """Exit code, stdout and stderr of ``skdecomp ARGS``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A 16x16 ONNX classifier of 5 classes, three photos and a class-names file."""
    from tests._cnn import onnx_session, photos, small_cnn

    d = tmp_path_factory.mktemp("images")
    onnx_session(small_cnn(n_classes=5), (3, 16, 16), d / "net.onnx")
    folder = d / "photos"
    folder.mkdir()
    imgs = photos(n=3, size=24, seed=1)
    # not square, and of several formats: cropped to the network's shape
    Image.fromarray(imgs[0][:, :20]).save(folder / "b-first.png")
    Image.fromarray(imgs[1]).save(folder / "a second.jpg", quality=95)
    Image.fromarray(imgs[2][:18]).convert("L").save(folder / "c.JPEG")
    (folder / "notes.txt").write_text("not a photo, and not read")
    classes = d / "classes.txt"
    classes.write_text("\n".join(CLASSES) + "\n")
    return {"dir": d, "model": d / "net.onnx", "photos": folder, "classes": classes}


@pytest.fixture(scope="module")
def report(inputs):
    out = inputs["dir"] / "report"
    code, stdout, stderr = run_cli([
        "images", inputs["photos"], "--model", inputs["model"], "--preprocess",
        "127.5", "127.5", "--classes", inputs["classes"], "--out", out, "--n-jobs", "1",
        "--budget", "200",
    ])
    return {"code": code, "stdout": stdout, "stderr": stderr, "out": out}


def test_images_report_exit_code_and_strict_json(report):
    assert report["code"] == 0, report["stderr"]
    results = _strict((report["out"] / "results.json").read_text())
    assert results["kind"] == "images"
    assert results["input_shape"] == [16, 16, 3]
    assert results["preprocess"] == {"mean": 127.5, "std": 127.5}
    assert "undefined" not in results  # every number is finite
    files = [p["file"] for p in results["photos"]]
    assert files == ["a second.jpg", "b-first.png", "c.JPEG"]  # sorted, .txt left out
    for entry in results["photos"]:
        assert set(entry) == PHOTO_KEYS
        assert 0 <= entry["class"] < 5
        assert entry["class_name"] == CLASSES[entry["class"]]
        K = entry["agreed"]["n_groups"]
        assert sum(entry["group_pixels"]) == 16 * 16 and len(entry["group_pixels"]) == K
        assert entry["methods"] == results["methods"]
        assert {"occlusion", "arch", "kernel_shap", "lime", "rise"} == set(entry["methods"])
        # the sampled methods' budget is the smallest all of them accept for K groups
        assert entry["n_samples"] == 8 * K
        for m in entry["methods"]:
            assert len(entry["attributions"][m]) == K
            assert math.isfinite(entry["maps"][m]["srg"])
            assert -1 <= entry["maps"][m]["srg"] <= 1
        h = entry["hierarchical"]
        assert h["method"] == "owen" and h["budget"] == 200
        assert math.isfinite(h["srg"]) and 0 < h["evaluations"] <= 200
        a = entry["agreement"]
        assert a["distance"] >= 0 and a["noise_floor"] > 0
        assert isinstance(a["beyond_noise"], bool)
        assert np.asarray(a["pairwise"]).shape == (5, 5)
        assert entry["verdict"] and all(isinstance(s, str) for s in entry["verdict"])
        # every model evaluation counted, AGREED's within its bound
        assert entry["agreed"]["evaluations"] <= 10 * 128
        assert entry["evaluations"] > entry["agreed"]["evaluations"] + h["evaluations"]
    assert results["verdict"]
    assert results["seconds"] > 0


def test_images_report_progress_and_estimate(report):
    err = report["stderr"]
    assert "[skdecomp] estimate: at most" in err and "ms each" in err
    for i, name in enumerate(["a second.jpg", "b-first.png", "c.JPEG"], 1):
        assert f"[skdecomp] photo {i}/3 {name}: " in err
    assert err.index("estimate") < err.index("photo 1/3")
    assert "Report written to" in report["stdout"]


def test_images_page_names_every_photo_and_escapes(report):
    page = (report["out"] / "index.html").read_text()
    for name in ["a second.jpg", "b-first.png", "c.JPEG"]:
        assert name in page
    assert page.count("data:image/png;base64,") == 6  # two figures per photo
    assert "What SRG is" in page and "Higher is better" in page
    assert HOSTILE not in page  # a class name reaches the page as text
    assert "&lt;img src=x onerror=" in page


@pytest.mark.parametrize("case", ["missing", "letters", "unit scale", "count"])
def test_images_refuses_without_a_said_preprocessing(inputs, tmp_path, case):
    given = {"missing": [], "letters": ["--preprocess", "mean", "std"],
             "unit scale": ["--preprocess", "0.5", "0.5"],
             "count": ["--preprocess", "1", "2", "3"]}[case]
    code, _, err = run_cli(["images", inputs["photos"], "--model", inputs["model"],
                            "--out", tmp_path / "out", *given])
    assert code == 1
    assert "--preprocess" in err and "none" in err
    if case == "unit scale":
        assert "multiply MEAN and STD by 255" in err
    assert not (tmp_path / "out").exists()


def test_images_refuses_an_empty_folder(inputs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("no photos here")
    code, _, err = run_cli(["images", empty, "--model", inputs["model"],
                            "--preprocess", "none", "--out", tmp_path / "out"])
    assert code == 1
    assert "holds no photo" in err and ".png" in err


def test_images_names_the_files_that_are_not_images(inputs, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    Image.fromarray(np.zeros((16, 16, 3), np.uint8)).save(folder / "fine.png")
    (folder / "broken.jpg").write_text("this is text, not a JPEG")
    (folder / "half.png").write_bytes((folder / "fine.png").read_bytes()[:40])
    code, _, err = run_cli(["images", folder, "--model", inputs["model"],
                            "--preprocess", "none", "--out", tmp_path / "out"])
    assert code == 1
    assert "2 file(s) could not be read as images" in err
    assert "broken.jpg" in err and "half.png" in err and "fine.png (" not in err


class _Bait:
    """Unpickling it creates a folder: the sign that a file was unpickled."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


@pytest.mark.parametrize("name", ["model.pkl", "model.onnx", "model.joblib", "model.bin"])
def test_images_never_unpickles_a_model_file(inputs, tmp_path, name):
    # the bait works: unpickling it creates its marker
    probe = tmp_path / "probe"
    pickle.loads(pickle.dumps(_Bait(probe)))
    assert probe.is_dir()
    marker = tmp_path / "unpickled"
    path = tmp_path / name
    path.write_bytes(pickle.dumps(_Bait(marker)))
    code, _, err = run_cli(["images", inputs["photos"], "--model", path,
                            "--preprocess", "none", "--out", tmp_path / "out"])
    assert code == 1
    assert not marker.exists()
    assert "ONNX" in err
    if name != "model.bin":
        assert "pickle" in err


def test_images_refuses_a_text_file_named_onnx(inputs, tmp_path):
    path = tmp_path / "fake.onnx"
    path.write_text("not a protobuf")
    code, _, err = run_cli(["images", inputs["photos"], "--model", path,
                            "--preprocess", "none", "--out", tmp_path / "out"])
    assert code == 1
    assert "could not be read as an ONNX model" in err


def test_images_free_size_needs_size(inputs, tmp_path):
    import warnings

    import torch

    from skdecomp._report._photos import load_onnx_model

    class Net(torch.nn.Module):  # any size: a convolution, then the mean over pixels
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 5, 3, padding=1)

        def forward(self, x):
            return self.conv(x).mean(dim=(2, 3))

    path = tmp_path / "free.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Net().eval(), torch.zeros(1, 3, 16, 16), str(path),
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}, "y": {0: "n"}},
                          dynamo=False)
    code, _, err = run_cli(["images", inputs["photos"], "--model", path,
                            "--preprocess", "none", "--out", tmp_path / "out"])
    assert code == 1
    assert "leaves the image size free" in err and "--size" in err
    _, shape = load_onnx_model(path, "none", size=(12, 20))
    assert shape == (12, 20, 3)
    # a fixed size is the network's: another --size is refused
    code, _, err = run_cli(["images", inputs["photos"], "--model", inputs["model"],
                            "--preprocess", "none", "--size", "32",
                            "--out", tmp_path / "out"])
    assert code == 1 and "takes 16x16" in err


def test_report_on_a_folder_points_to_images(inputs, capsys):
    assert main(["report", str(inputs["photos"]), "--model", "m.onnx"]) == 2
    assert "skdecomp images" in capsys.readouterr().err


def test_image_report_in_headless_chromium(report, tmp_path):
    from tests.test_report_browser import _chromium, console_errors, probe

    chromium = _chromium()
    page = report["out"] / "index.html"
    assert console_errors(chromium, page, tmp_path) == []
    seen = probe(chromium, page, tmp_path)
    assert seen["errors"] == [] and seen["scripts"] == 0
    assert seen["sections"] == ["verdict", "srg", "photo-0", "photo-1", "photo-2", "method"]
    keys = sorted(f["key"] for f in seen["figures"])
    assert keys == ["maps"] * 3 + ["pixels"] * 3
    assert all(f["decoded"] and f["width"] > 100 for f in seen["figures"]), seen["figures"]


@pytest.mark.slow
def test_demo_images(tmp_path, monkeypatch):
    import skdecomp.__main__ as cli

    # the demo's own path on one of its two photos (the cat's AGREED fit is the longer)
    monkeypatch.setattr(cli, "DEMO_PHOTOS", ("espresso",))
    out = tmp_path / "demo"
    code, stdout, _ = run_cli(["demo", "--images", "--out", out])
    assert code == 0
    results = _strict((out / "results.json").read_text())
    assert [p["file"] for p in results["photos"]] == ["espresso.png"]
    assert results["photos"][0]["class_name"] == "espresso"
    assert all(math.isfinite(p["hierarchical"]["srg"]) for p in results["photos"])
    assert "[skdecomp] photo 1/1 espresso.png" in stdout
    assert "espresso.png" in (out / "index.html").read_text()
