"""The guide's scale-out recipes run exactly as written (doc/recipes)."""

import runpy
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

RECIPES = Path(__file__).resolve().parents[1] / "doc" / "recipes"


@pytest.mark.slow
def test_dask_recipe_as_written_with_an_empty_partition():
    pytest.importorskip("dask.dataframe")
    import dask

    with dask.config.set(scheduler="synchronous"):
        ns = runpy.run_path(str(RECIPES / "dask_partitions.py"), run_name="__main__")
        explainer, X, ddf = ns["explainer"], ns["X"], ns["ddf"]
        got = ns["phi"].compute()
        pd.testing.assert_frame_equal(got, explainer.transform(X), rtol=1e-12,
                                      atol=1e-12)
        # a filter that empties some partitions: the recipe's function as written
        few = ddf[ddf["age"] > 0.1]
        empty = ddf[ddf["age"] > 10]  # no row left in any partition
        out = empty.map_partitions(ns["explain"], ns["shipped"], meta=ns["meta"])
        assert len(out.compute()) == 0
        kept = few.map_partitions(ns["explain"], ns["shipped"], meta=ns["meta"]).compute()
        pd.testing.assert_frame_equal(kept, explainer.transform(X[X["age"] > 0.1]),
                                      rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_spark_recipe_as_written_keeps_a_row_key():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java")
    # as a script runs it: functions of __main__ travel to the workers by value
    ns = runpy.run_path(str(RECIPES / "spark_partitions.py"), run_name="__main__")
    try:
        explainer, X, names = ns["explainer"], ns["X"], ns["names"]
        phi = ns["phi"].toPandas().sort_values("row_id")
        np.testing.assert_array_equal(phi["row_id"].to_numpy(), np.arange(len(X)))
        np.testing.assert_array_equal(phi[names].to_numpy(),
                                      np.asarray(explainer.transform(X)))
        joined = ns["explained"].toPandas()
        assert len(joined) == len(X) and "phi_age" in joined.columns
    finally:
        ns["spark"].stop()


@pytest.mark.slow
def test_dask_photos_recipe_as_written_equals_the_serial_run():
    pytest.importorskip("dask")
    pytest.importorskip("onnxruntime")
    ns = runpy.run_path(str(RECIPES / "dask_photos.py"), run_name="__main__")
    results, photos = ns["results"], ns["photos"]
    assert len(results) == len(photos)
    assert ns["_load"].cache_info().misses == 1  # one network for the process's tasks
    for (target, heatmap), photo in zip(results, photos):
        serial_target, serial = ns["explain"](photo)
        assert target == serial_target and heatmap.shape == photo.shape[:2]
        np.testing.assert_array_equal(heatmap, serial)  # deterministic at a budget
