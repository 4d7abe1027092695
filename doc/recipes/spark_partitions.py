"""Explain a Spark DataFrame partition by partition with one broadcast explainer."""

import os
import sys

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.types import DoubleType, LongType, StructField, StructType
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import Explainer

# Spark's workers must run a Python that has skdecomp installed
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
spark = SparkSession.builder.master("local[2]").getOrCreate()

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=50, random_state=0).fit(X, y)
columns = list(X.columns)
# the large table, as a Spark DataFrame with a key for every row
sdf = spark.createDataFrame(X.assign(row_id=np.arange(len(X))))
X_sample = X.sample(200, random_state=0)  # rows that fit in memory

explainer = Explainer(model, background=100, random_state=0).fit(X_sample)
shipped = spark.sparkContext.broadcast(explainer)  # sent once to every worker
names = list(explainer.get_feature_names_out())
schema = StructType([StructField("row_id", LongType())]
                    + [StructField(n, DoubleType()) for n in names])


def explain(frames):
    e = shipped.value
    for part in frames:
        phi = pd.DataFrame(np.asarray(e.transform(part[columns])), columns=names)
        phi.insert(0, "row_id", part["row_id"].to_numpy())  # the key, to join back
        yield phi


phi = sdf.mapInPandas(explain, schema)
explained = sdf.join(phi.withColumnsRenamed({n: f"phi_{n}" for n in names}), "row_id")
explained.show(3)
