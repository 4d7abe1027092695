"""Several sampled methods from one design: cost, accuracy and coverage.

``Explainer.explain(methods=[...])`` with two or more of ``kernel_shap``,
``permutation_shap``, ``lime`` and ``rise`` draws one design of coalitions
(KernelSHAP's) and evaluates it once; each method is an estimator over those
values (see the user guide, "Several sampled methods, one set of model calls"). Three parts:

``--part cost``
    Model evaluations (rows sent to the model) and CPU seconds of ``explain``
    with all four methods against each method alone, at the same
    ``n_samples`` (the default, ``2 K + 2048``): an MLP on a table of K = 10
    (scikit-learn's diabetes) and K = 40 columns (``make_friedman1`` with 40
    features), 10 background rows, 40 explained rows (the least CPU time of
    three calls); and the pretrained CNN
    (EfficientNet-Lite0 on ONNX Runtime) on a sample photo over 196 squares
    of 16 px, against its blurred photo. Target: at most 1.2 times the most
    expensive method alone.
``--part accuracy``
    Random games with exact values, K = 8, 10 and 12 groups (one background
    row: the game is the model): ``order3``, random Moebius coefficients of
    orders 1 to 3, and ``smooth``, tanh of a random quadratic form. Each
    method's mean squared error against its value with every coalition, from
    the shared design and from its own design at the same ``n_samples``
    (four games x 20 seeds each). Target: shared / own <= 1.
``--part coverage``
    The share of 95 % intervals ``value +- 1.96 se`` that hold the exact
    value, for each method and for the difference of every two methods
    (``difference_standard_errors``), over 40 seeds, on the coverage
    benchmark's games (``bench_coverage_games.py``: smooth, AND, majority
    over 6 and 8 groups, 4 background rows and one). Target: at least 0.90.

Measured on 2 cores (``benchmarks/results/shared_design_*.txt``):

- cost, together over the most expensive method alone: model evaluations
  0.63 (K = 10: LIME and RISE alone draw more), 1.00 (K = 40) and 1.00 (the
  CNN); CPU seconds 0.43 (K = 10), 1.08 (K = 40: 0.68 s against 0.63 s
  for KernelSHAP alone) and 0.96 (the CNN: 23.8 s against 22.9 to 24.8 s
  each alone). The standard errors of four methods and six differences are
  sums of matrix products of the factored terms (``_shared._Spreads``);
  built as one array of terms per unit and group they took 2.7 times
  KernelSHAP's CPU time at K = 40;
- accuracy: shared over own MSE 1.00 for KernelSHAP (the same estimate),
  0.18 to 0.30 for permutation SHAP, 0.13 to 0.79 for LIME, 0.03 to 0.19
  for RISE;
- coverage: 0.900 to 1.000 for every method and difference (lowest:
  KernelSHAP on smooth/1 with 6 groups).

Run: ``python benchmarks/bench_shared_design.py --part cost|accuracy|coverage``.
"""

import argparse
import itertools
import time

import numpy as np

from skdecomp import Explainer

METHODS = ["kernel_shap", "permutation_shap", "lime", "rise"]


class Counted:
    """A model that counts the rows it is asked for."""

    def __init__(self, f):
        self.f = f
        self.rows = 0

    def __call__(self, X):
        self.rows += len(X)
        return self.f(X)


def _cost_row(name, make, X_rows, n_samples=None):
    out = {}
    for methods in [[m] for m in METHODS] + [METHODS]:
        model = Counted(make())
        ex = make_explainer(model, n_samples)
        ex.explain(X_rows, methods=methods)  # compiled kernels loaded: not timed
        model.rows = 0
        times = []
        for _ in range(3):  # the least of three
            t = time.process_time()
            ex.explain(X_rows, methods=methods)
            times.append(time.process_time() - t)
        out["+".join(methods)] = (model.rows // 3, min(times))
    _print_cost(name, out)


def _print_cost(name, out):
    worst = max(out[m][0] for m in METHODS)
    worst_t = max(out[m][1] for m in METHODS)
    together = out["+".join(METHODS)]
    print(f"{name}")
    for key, (rows, sec) in out.items():
        print(f"  {key:45s} {rows:9d} evaluations {sec:8.2f} CPU s")
    print(f"  together / most expensive alone: evaluations {together[0] / worst:.2f}, "
          f"CPU {together[1] / worst_t:.2f}; together / sum alone: "
          f"{together[0] / sum(out[m][0] for m in METHODS):.2f}", flush=True)


def part_cost():
    global make_explainer
    from sklearn.datasets import load_diabetes, make_friedman1
    from sklearn.neural_network import MLPRegressor

    for K, (X, y) in [(10, load_diabetes(return_X_y=True)),
                      (40, make_friedman1(400, n_features=40, random_state=0))]:
        mlp = MLPRegressor(hidden_layer_sizes=(32,), max_iter=400,
                           random_state=0).fit(X, y)
        bg = X[:10]

        def make_explainer(model, n, bg=bg, X=X):
            return Explainer(model, background=bg, n_samples=n, random_state=0).fit(X)

        _cost_row(f"MLP, K = {K} columns, 10 background rows, 40 rows",
                  lambda mlp=mlp: mlp.predict, X[100:140])
    from skdecomp import PatchGrouper
    from skdecomp._image._model import ImageModel
    from skdecomp.datasets import load_pretrained_cnn, load_sample_photos

    cnn = load_pretrained_cnn(runtime="onnx")
    photo = load_sample_photos(size=224).images[0]
    # count the images the network sees
    forward = ImageModel.forward
    seen = Counted(None)

    def counted(self, x):
        seen.rows += len(x)
        return forward(self, x)

    ImageModel.forward = counted

    target = int(cnn.predict(photo[None]).argmax())

    def make_explainer(model, n):
        return Explainer(cnn, groups=PatchGrouper(16), baseline="blur", n_samples=n,
                         target=target, random_state=0).fit(photo[None])

    out = {}
    for methods in [[m] for m in METHODS] + [METHODS]:
        ex = make_explainer(None, None)
        seen.rows = 0
        t = time.process_time()
        ex.explain(photo[None], methods=methods)
        out["+".join(methods)] = (seen.rows, time.process_time() - t)
    ImageModel.forward = forward
    _print_cost("EfficientNet-Lite0 (ONNX Runtime), one photo, 196 squares of 16 px", out)


def _game(K, seed, kind):
    r = np.random.RandomState(seed)
    if kind == "order3":
        terms = [(r.choice(K, o, replace=False), r.randn() / o)
                 for o in (1, 2, 3) for _ in range(2 * K)]

        def f(M):
            return sum(c * np.prod(M[:, t], axis=1) for t, c in terms)
    else:
        w, W = r.randn(K), r.randn(K, K) / K

        def f(M):
            return np.tanh(M @ w / 2 + ((M @ W) * M).sum(axis=1))
    return f


def part_accuracy(n_games=4, n_seeds=20):
    print("MSE against the value with every coalition, mean over games and seeds")
    print(f"{'K':>3} {'game':7} {'n_samples':>9} " + " ".join(
        f"{m:>26}" for m in METHODS))
    for K, B in [(8, 100), (10, 200), (12, 400)]:
        for kind in ("order3", "smooth"):
            own = {m: [] for m in METHODS}
            shared = {m: [] for m in METHODS}
            for g in range(n_games):
                f = _game(K, g, kind)
                x, z = np.ones((1, K)), np.zeros((1, K))
                ref = Explainer(f, background=z, n_samples=1 << K).fit(x).explain(
                    x, methods=METHODS)
                for s in range(n_seeds):
                    ex = Explainer(f, background=z, n_samples=B, random_state=s).fit(x)
                    together = ex.explain(x, methods=METHODS)
                    for m in METHODS:
                        alone = ex.explain(x, methods=[m])[m].values
                        own[m].append(np.mean((alone - ref[m].values) ** 2))
                        shared[m].append(np.mean((together[m].values - ref[m].values) ** 2))
            cells = [f"{np.mean(shared[m]):.2e}/{np.mean(own[m]):.2e}="
                     f"{np.mean(shared[m]) / np.mean(own[m]):.2f}" for m in METHODS]
            print(f"{K:3d} {kind:7} {B:9d} " + " ".join(f"{c:>26}" for c in cells))


def part_coverage(n_seeds=40):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).with_name("bench_coverage_games.py")
    spec = importlib.util.spec_from_file_location("games", path)
    games = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(games)
    keys = METHODS + [f"{a}-{b}" for a, b in itertools.combinations(METHODS, 2)]
    cases = [(g, n) for g in games.GAMES for n in games.BACKGROUNDS]
    for K in (6, 8):
        budget = 8 * K  # KernelSHAP's smallest budget, the largest of the four
        print(f"K = {K}, n_samples = {budget}: coverage over {n_seeds} seeds")
        print(f"{'':38}" + " ".join(f"{g + '/' + str(n):>11}" for g, n in cases))
        held = {key: [] for key in keys}
        for name, n_bg in cases:
            f, X, bg, rows = games.problem(name, n_bg, K)
            ref = Explainer(f, background=bg, n_samples=1 << K).fit(X).explain(
                rows, methods=METHODS)
            hits = {key: [] for key in keys}
            for s in range(n_seeds):
                res = Explainer(f, background=bg, n_samples=budget, random_state=s).fit(
                    X).explain(rows, methods=METHODS)
                for m in METHODS:
                    err = np.abs(res[m].values - ref[m].values)
                    hits[m].append(err <= 1.96 * res[m].standard_errors + 1e-9)
                for a, b in itertools.combinations(METHODS, 2):
                    err = np.abs((res[a].values - res[b].values)
                                 - (ref[a].values - ref[b].values))
                    se = res[a].difference_standard_errors[b]
                    hits[f"{a}-{b}"].append(err <= 1.96 * se + 1e-9)
            for key in keys:
                held[key].append(np.mean(hits[key]))
        for key in keys:
            print(f"  {key:36}" + " ".join(f"{v:11.3f}" for v in held[key]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["cost", "accuracy", "coverage"],
                        default="accuracy")
    args = parser.parse_args()
    {"cost": part_cost, "accuracy": part_accuracy, "coverage": part_coverage}[args.part]()
