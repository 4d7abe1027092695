"""Coverage of the standard errors of the sampled attributions, and the alternatives.

Game: a random smooth function of K = 12 columns with interactions of all
orders (``tests/conftest.random_function``), 6 background rows, 20
explained rows, 20 seeds. Reference: the exact Shapley values for
``kernel_shap`` and ``permutation_shap``, the value with every coalition
for ``lime`` and ``rise``. For each budget the script prints the share of
the intervals ``estimate +- 1.96 se`` that hold the reference and the
median over terms of (mean se over seeds) / (sd of the estimates over seeds).

Standard errors compared (``--alternatives``):

- ``draws`` (the one skdecomp uses): one term per independent draw of the
  linearised estimator, its spread per stratum;
- ``batches``: the draws split into B = 10 batches, each batch solved on its
  own (KernelSHAP: the whole layers and a tenth of the drawn pairs), se =
  sd of the batch estimates / sqrt(B);
- ``orders``: permutation SHAP with one term per permutation, ignoring that
  a permutation and its reverse are drawn together.

Run: ``python benchmarks/bench_standard_errors.py [--alternatives]`` (about a
minute on two cores).
"""

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import skdecomp._methods._sampled as sampled  # noqa: E402
from skdecomp import Explainer  # noqa: E402
from skdecomp._methods._errors import Draws, Reach  # noqa: E402
from skdecomp._methods._kernels import (  # noqa: E402
    coalition_gram,
    coalition_moments,
    constrained_least_squares,
)
from tests.conftest import random_function  # noqa: E402

K, N_BG, N_ROWS, B = 12, 6, 20, 10


def measure(method, budgets, seeds, reference):
    f = random_function(3, K)
    X = np.random.RandomState(0).normal(size=(200, K))
    ex = Explainer(f, background=X[:N_BG], random_state=0).fit(X)
    rows = X[100:100 + N_ROWS]
    target = reference(ex, rows)
    for b in budgets:
        est, se = [], []
        for s in range(seeds):
            errors = {}
            out = sampled.sampled_attributions(
                ex.game_, rows, [method], np.random.RandomState(s), n_samples=b,
                errors=errors,
            )
            est.append(out[method])
            se.append(errors[method])
        est, se = np.array(est), np.array(se)
        cover = np.mean(np.abs(est - target) <= 1.96 * se)
        ratio = np.median(se.mean(axis=0) / est.std(axis=0, ddof=1))
        print(f"  {method:17s} n_samples={b:5d} coverage={cover:.3f} "
              f"se/sd={ratio:.2f} mean se={se.mean():.4f}", flush=True)


def shapley(ex, rows):
    return ex.set_params(method="shapley").transform(rows)


def full(method):
    def reference(ex, rows):
        return sampled.sampled_attributions(
            ex.game_, rows, [method], np.random.RandomState(0), n_samples=1 << K
        )[method]
    return reference


def kernel_batches(budget):
    def estimator(k, rng):
        Z, w, pairs, draws = sampled._kernel_design(k, budget, rng)
        solve, _ = sampled._kernel_solver(Z, w)
        batch = np.random.RandomState(0).permutation(pairs.shape[0]) % B

        def terms(values, base, phi, spread):
            out = []
            for b in range(B):
                wb = w.copy()
                for c in range(2):
                    wb[pairs[:, c]] = np.where(batch == b, w[pairs[:, c]] * B, 0.0)
                moments = coalition_moments(Z, wb, values - base[:, None])
                est, _ = constrained_least_squares(
                    coalition_gram(Z, wb), moments, phi.sum(axis=1)
                )
                out.append(est / B)
            t = np.stack(out, axis=1)
            # a batch estimate within the range of the game's values
            return t, Reach(np.full(t.shape, 1.0 / B), np.zeros(t.shape[::2]), spread)

        return Z, solve, terms, None if draws is None else Draws(np.zeros(B), [np.inf])
    return estimator


def permutation_alternative(kind):
    def factory(budget):
        def estimator(k, rng):
            orders, Z, index = sampled._permutation_design(k, budget, rng)
            rank = np.argsort(orders, axis=1)

            def solve(values, base, total):
                return sampled.permutation_attributions(orders, index, values)

            def terms(values, base, phi, spread):
                t = _terms(values)
                return t, Reach(np.full(t.shape, 1.0 / n), np.zeros(t.shape[::2]),
                                spread)

            def _terms(values):
                steps = values[:, index[:, 1:]] - values[:, index[:, :-1]]
                c = np.take_along_axis(steps, rank[None], axis=2) / orders.shape[0]
                if kind == "orders":
                    return c
                # the mean of the pairs of each batch, over B
                pair = (c[:, 0::2] + c[:, 1::2]) * (orders.shape[0] // 2)
                label = np.arange(pair.shape[1]) % B
                return np.stack(
                    [pair[:, label == b].mean(1) / B for b in range(B)], axis=1
                )

            n = orders.shape[0] if kind == "orders" else B
            return Z, solve, terms, Draws(np.zeros(n), [np.inf])
        return estimator
    return factory


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alternatives", action="store_true")
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    budgets = [100, 400, 1600]
    print("draws (skdecomp)")
    measure("permutation_shap", budgets, args.seeds, shapley)
    measure("kernel_shap", budgets, args.seeds, shapley)
    measure("lime", budgets, args.seeds, full("lime"))
    measure("rise", budgets, args.seeds, full("rise"))
    if not args.alternatives:
        return
    kernel, permutation = sampled._kernel_estimator, sampled._permutation_estimator
    print(f"batches (B = {B})")
    sampled._kernel_estimator = kernel_batches
    measure("kernel_shap", budgets, args.seeds, shapley)
    sampled._kernel_estimator = kernel
    sampled._permutation_estimator = permutation_alternative("batches")
    measure("permutation_shap", [400, 1600], args.seeds, shapley)
    print("orders (one term per permutation)")
    sampled._permutation_estimator = permutation_alternative("orders")
    measure("permutation_shap", budgets, args.seeds, shapley)
    sampled._permutation_estimator = permutation


if __name__ == "__main__":
    main()
