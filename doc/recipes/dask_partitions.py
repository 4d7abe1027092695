"""Explain a dask DataFrame partition by partition with one fitted explainer."""

import dask
import dask.dataframe as dd
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor

from skdecomp import Explainer

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = HistGradientBoostingRegressor(max_iter=50, random_state=0).fit(X, y)
ddf = dd.from_pandas(X, npartitions=4)  # the large table, as a dask DataFrame
X_sample = X.sample(200, random_state=0)  # rows that fit in memory

explainer = Explainer(model, background=100, random_state=0).fit(X_sample)
explainer.set_output(transform="pandas")
shipped = dask.delayed(explainer, traverse=False)  # one task, sent once
meta = explainer.transform(X_sample.iloc[:1]).iloc[:0]


def explain(part, e):
    # an empty partition (after a filter, say) has nothing to explain
    return e.transform(part) if len(part) else meta


phi = ddf.map_partitions(explain, shipped, meta=meta)  # rows keep their index
phi.compute()  # or phi.to_parquet("attributions/")
