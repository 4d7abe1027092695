"""Accuracy of the sampled Shapley estimators at equal budgets: skdecomp, shap, shapiq.

Model: ``MLPClassifier(hidden_layer_sizes=(64,), max_iter=300, random_state=0)``
fitted on the first 1200 rows of scikit-learn's digits (8 x 8 images). The
explained output is the probability of each explained row's predicted class
(``predict_proba``). Background: 10 training rows; explained rows: test rows.

Two cases:

- K = 64, one group per pixel. Reference: the mean of ``--ref-seeds`` runs of
  skdecomp's ``permutation_shap`` with ``n_samples=2**16``. Permutation
  sampling is unbiased and of another family than the regression estimators
  compared, so the reference favours none of them; its standard error is
  printed and is far below the errors compared.
- K = 16, groups of 2 x 2 pixels. Reference: the exact Shapley values
  (``Explainer(method="shapley")``, all 2**16 coalitions).

Every estimator gets the same budget of coalitions per explained row, each
costing one model call per background row:

- skdecomp ``kernel_shap`` and ``permutation_shap`` with ``n_samples=budget``;
- ``shap.KernelExplainer(...).shap_values(nsamples=budget, l1_reg=False)`` and
  ``shap.PermutationExplainer(...)(max_evals=budget)``, on the same
  background. For K = 16 the model is wrapped so that shap's features are the
  groups (feature k tells which row, x or background row j, gives group k);
- shapiq's ``KernelSHAP(pairing_trick=True)`` with ``budget + 2`` (it counts
  the empty and the full coalitions), on the game of the groups on which x
  differs from some background row (shap and skdecomp drop the others too).

The MSE is the mean over explained rows and groups of the squared error
against the reference. For each budget the script prints the MSE of every
seed, the medians over seeds and the ratios of skdecomp to shap and shapiq.

Run: ``python benchmarks/bench_sampled_accuracy.py [--rows 5] [--seeds 5]
[--ref-seeds 8]`` (about two minutes on two cores with the defaults).
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.neural_network import MLPClassifier

from skdecomp import Explainer

BUDGETS = (1024, 2048, 4096)


def patches():
    """The 16 groups of 2 x 2 pixels of an 8 x 8 image."""
    idx = np.arange(64).reshape(8, 8)
    return [idx[i : i + 2, j : j + 2].ravel().tolist()
            for i in range(0, 8, 2) for j in range(0, 8, 2)]


def setup(n_rows):
    X, y = load_digits(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # not fully converged at 300 iterations
        mlp = MLPClassifier(hidden_layer_sizes=(64,), max_iter=300,
                            random_state=0).fit(X[:1200], y[:1200])
    rng = np.random.RandomState(0)
    background = X[rng.choice(1200, 10, replace=False)]
    rows = X[1200 + 12 * np.arange(n_rows)]
    return X, mlp, background, rows


class Problem:
    """One explained row: its output, groups, and the game for shap and shapiq."""

    def __init__(self, mlp, X, x, background, groups):
        self.c = int(mlp.predict(x[None])[0])
        self.f = lambda A: mlp.predict_proba(A)[:, self.c]
        self.x, self.background = x, background
        self.groups = [np.asarray(g) for g in groups]
        self.K = len(groups)
        self.labels = np.empty(x.size, dtype=np.int64)
        for k, g in enumerate(self.groups):
            self.labels[g] = k
        self.dummy = np.array([np.all(background[:, g] == x[g]) for g in self.groups])
        self.explainer = Explainer(
            mlp, groups=[list(g) for g in groups], background=background,
            method="kernel_shap", response_method="predict_proba", target=self.c,
        ).fit(X)

    def ours(self, method, budget, seed):
        ex = self.explainer.set_params(method=method, n_samples=budget,
                                       random_state=seed)
        return ex.transform(self.x[None])[0]

    # shap's features are the groups: u[k] = 0 takes group k from x, u[k] = j + 1
    # from background row j (0 for the groups equal on every background row)
    def group_model(self, U):
        U = np.asarray(U, dtype=np.int64)
        src = U[:, self.labels]
        z = self.background[np.maximum(src - 1, 0), np.arange(self.x.size)]
        return self.f(np.where(src == 0, self.x[None, :], z))

    def shap_inputs(self):
        if self.K == self.x.size:
            return self.f, self.background, self.x[None]
        n_bg = self.background.shape[0]
        U = np.repeat(np.arange(1, n_bg + 1)[:, None], self.K, axis=1)
        U[:, self.dummy] = 0
        return self.group_model, U, np.zeros((1, self.K), dtype=np.int64)

    def shap_kernel(self, budget, seed):
        import shap

        model, data, x = self.shap_inputs()
        np.random.seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            phi = shap.KernelExplainer(model, data).shap_values(
                x, nsamples=budget, l1_reg=False, silent=True
            )
        return np.asarray(phi).reshape(-1)

    def shap_permutation(self, budget, seed):
        import shap

        model, data, x = self.shap_inputs()
        return shap.PermutationExplainer(model, data, seed=seed)(
            x, max_evals=budget, silent=True
        ).values[0]

    def shapiq_kernel(self, budget, seed):
        from shapiq.approximator import KernelSHAP

        live = np.flatnonzero(~self.dummy)
        n = live.size
        out = np.zeros(self.K)
        if n < 2:
            out[live] = self.f(self.x[None])[0] - self.f(self.background).mean()
            return out

        def game(coalitions):
            masks = np.zeros((coalitions.shape[0], self.K), dtype=bool)
            masks[:, live] = coalitions
            cols = masks[:, self.labels]
            H = np.where(cols[:, None, :], self.x[None, None, :], self.background[None])
            out = self.f(H.reshape(-1, self.x.size))
            return out.reshape(cols.shape[0], -1).mean(axis=1)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = KernelSHAP(n=n, pairing_trick=True, random_state=seed).approximate(
                min(budget + 2, 2**n), game
            )
        out[live] = [values[(k,)] for k in range(n)]
        return out


ESTIMATORS = {
    "kernel ours": lambda p, b, s: p.ours("kernel_shap", b, s),
    "kernel shap": lambda p, b, s: p.shap_kernel(b, s),
    "kernel shapiq": lambda p, b, s: p.shapiq_kernel(b, s),
    "perm ours": lambda p, b, s: p.ours("permutation_shap", b, s),
    "perm shap": lambda p, b, s: p.shap_permutation(b, s),
}


def compare(problems, references, budgets, seeds, estimators=ESTIMATORS):
    """MSE[name][budget]: per seed, the mean squared error over rows and groups."""
    mse = {name: {b: [] for b in budgets} for name in estimators}
    for b in budgets:
        for seed in seeds:
            for name, run in estimators.items():
                errors = [np.mean((run(p, b, seed) - ref) ** 2)
                          for p, ref in zip(problems, references)]
                mse[name][b].append(float(np.mean(errors)))
    return mse


def report(title, mse, budgets, seeds):
    print(f"\n== {title}")
    names = list(mse)
    print("budget seed " + " ".join(f"{n:>14s}" for n in names))
    for b in budgets:
        for i, seed in enumerate(seeds):
            cells = " ".join(f"{mse[n][b][i]:14.3e}" for n in names)
            print(f"{b:6d} {seed:4d} {cells}")
    print("\nmedians over seeds")
    print("budget " + " ".join(f"{n:>14s}" for n in names)
          + "  kernel ours/shap  ours/shapiq  perm ours/shap")
    for b in budgets:
        med = {n: np.median(mse[n][b]) for n in names}
        print(f"{b:6d} " + " ".join(f"{med[n]:14.3e}" for n in names)
              + f"  {med['kernel ours'] / med['kernel shap']:16.2f}"
              + f"  {med['kernel ours'] / med['kernel shapiq']:11.2f}"
              + f"  {med['perm ours'] / med['perm shap']:14.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--ref-seeds", type=int, default=8)
    args = parser.parse_args()
    start = time.perf_counter()
    X, mlp, background, rows = setup(args.rows)
    seeds = list(range(args.seeds))

    pixels = [[j] for j in range(64)]
    problems = [Problem(mlp, X, x, background, pixels) for x in rows]
    references, stderr = [], []
    for p in problems:
        runs = np.array([p.ours("permutation_shap", 2**16, 1000 + s)
                         for s in range(args.ref_seeds)])
        references.append(runs.mean(axis=0))
        stderr.append(np.mean(runs.var(axis=0, ddof=1)) / args.ref_seeds)
    print(f"digits MLP, predicted-class probability, background 10 rows, "
          f"{args.rows} explained rows, seeds {seeds}")
    print(f"K = 64: dummy pixels per row {[int(p.dummy.sum()) for p in problems]}; "
          f"reference: permutation_shap, {args.ref_seeds} x 2**16 coalitions; "
          f"its squared standard error {np.mean(stderr):.1e}")
    mse = compare(problems, references, BUDGETS, seeds)
    report("K = 64 pixels, against the high-budget permutation reference", mse,
           BUDGETS, seeds)
    print(f"({time.perf_counter() - start:.0f} s)")

    problems = [Problem(mlp, X, x, background, patches()) for x in rows]
    exact = [p.explainer.set_params(method="shapley").transform(p.x[None])[0]
             for p in problems]
    mse = compare(problems, exact, BUDGETS, seeds)
    report("K = 16 patches of 2 x 2 pixels, against the exact Shapley values", mse,
           BUDGETS, seeds)
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
