"""AGREED on a classifier's additive scale against its probability scale.

Labels are drawn from seeded block functions used as logits
(``y ~ Bernoulli(sigmoid(f(x)))``, :func:`skdecomp.datasets.make_block_function`,
d = 8), and a HistGradientBoostingClassifier and an MLPClassifier are fitted
to them. AdaptiveGrouper then groups each model with the true number of
groups, once on the default scale (``response_method="auto"``: the decision
function of the boosting model, the log-odds of the MLP's probabilities) and
once on ``predict_proba``. The script prints, per seed and model, the
adjusted Rand index (ARI) of both partitions against the true blocks, and
how many seeds the default scale is no worse on.

Run: ``python benchmarks/bench_output_scale.py [--seeds 10] [--n-rows 6000]``.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.neural_network import MLPClassifier

from skdecomp import AdaptiveGrouper
from skdecomp.datasets import make_block_function
from skdecomp._partition import group_labels


def models(seed):
    return {
        "HGB": HistGradientBoostingClassifier(max_iter=200, random_state=seed),
        "MLP": MLPClassifier((64, 64), max_iter=300, random_state=seed),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-rows", type=int, default=6000)
    parser.add_argument("--max-samples", type=int, default=100)
    args = parser.parse_args()
    wins = {}
    print(f"{'seed':>4} {'model':>5} {'K':>2} {'ARI auto':>9} {'ARI proba':>10} {'scale':>18}")
    start = time.perf_counter()
    for seed in range(args.seeds):
        data = make_block_function(args.n_rows, n_features=8, random_state=seed)
        rng = np.random.RandomState(seed)
        y = (rng.uniform(size=args.n_rows) < 1 / (1 + np.exp(-data.target))).astype(int)
        truth = group_labels(data.groups, 8)
        K = len(data.groups)
        for name, model in models(seed).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(data.data, y)
            ari = {}
            for rm in ("auto", "predict_proba"):
                g = AdaptiveGrouper(model, max_samples=args.max_samples, n_groups=K,
                                    response_method=rm, random_state=seed).fit(data.data)
                ari[rm] = adjusted_rand_score(truth, g.labels_)
                if rm == "auto":
                    scale = g.response_method_
            wins.setdefault(name, []).append(ari["auto"] >= ari["predict_proba"] - 1e-12)
            print(f"{seed:>4} {name:>5} {K:>2} {ari['auto']:>9.2f} "
                  f"{ari['predict_proba']:>10.2f} {scale:>18}", flush=True)
    for name, w in wins.items():
        print(f"{name}: default scale no worse in {sum(w)} of {len(w)} seeds")
    print(f"total time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
