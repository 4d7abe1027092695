"""Every gallery example runs to the end and draws its figures (Agg backend)."""

import runpy
from pathlib import Path

import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 5


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(path, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    plt.close("all")
    monkeypatch.chdir(tmp_path)
    try:
        runpy.run_path(str(path), run_name="__main__")
        numbers = plt.get_fignums()
        assert numbers, f"{path.name} drew no figure"
        for n in numbers:
            out = tmp_path / f"{path.stem}_{n}.png"
            plt.figure(n).savefig(out)
            assert out.stat().st_size > 0
            assert plt.figure(n).get_axes()
    finally:
        plt.close("all")
