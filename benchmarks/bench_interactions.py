"""Exact interaction indices: skdecomp against shapiq's ExactComputer.

Both compute an interaction index of order 2 exactly from the same group
game: the model's mean prediction over the same background rows with the
columns of a coalition of groups taken from the explained row,
``v(S) = mean_b f(x_S, z^b_-S)``, over all 2^K coalitions. skdecomp calls
``Explainer(model, groups=..., background=bg).interactions(X, index=...,
max_order=2)``; shapiq runs ``ExactComputer`` on a ``shapiq.Game`` whose
value function builds the same hybrid rows, for all coalitions at once, and
calls the model once on them (equal work: 2^K x n_background rows per
explained row, for each). Every call starts afresh: neither reuses the game
values of an earlier index.

The model is a fitted ``MLPRegressor`` (model calls; no tree path) on
``2 * K`` columns in K groups of two, a target with pair and triple
interactions. For each K (10, 11, 12 by default) and index (k-SII, SII,
STII, FSII, Moebius) the script prints the time of each, the ratio
shapiq / skdecomp, and the largest absolute difference between the values
(shapiq leaves out the terms it knows are 0; they count as 0). Then the
index step alone, from coalition values already computed: skdecomp's
Moebius transform and ``index_values``, against ``ExactComputer`` on a game
that looks the values up.

Measured (shapiq 1.4.1, a shared 2-core machine under load, so times move
by up to 2x between runs; 2 rows, 20 background rows): with model calls,
skdecomp takes 0.07-0.3 s at K = 10 and 0.5-1.0 s at K = 12, shapiq
0.7-1.9 s and 5.6-8.7 s, 6.5-20x more; the index step alone takes
skdecomp 1-14 ms and shapiq 0.3-2.8 s, 130-1000x more. The values agree to
3e-15 (1.1e-10 for FSII, which shapiq computes by least squares).

Run: ``python benchmarks/bench_interactions.py [--groups 10 11 12] [--rows 2]
[--background 20] [--repeat 1] [--repeat-index 3]``
"""

import argparse
import time
import warnings
from importlib.metadata import version

import numpy as np
import shapiq
from sklearn.neural_network import MLPRegressor

from skdecomp import Explainer
from skdecomp._decomposition._kernels import moebius_transform
from skdecomp._methods._indices import index_terms, index_values

INDICES = ["k-SII", "SII", "STII", "FSII", "Moebius"]


class GroupGame(shapiq.Game):
    """v(S): mean model output over the background, groups in S from x."""

    def __init__(self, model, x, background, groups):
        self.model = model
        self.x = np.asarray(x, dtype=np.float64)
        self.background = np.asarray(background, dtype=np.float64)
        n_cols = self.background.shape[1]
        # group -> column mask, to turn coalitions into column masks
        self.members = np.zeros((len(groups), n_cols), dtype=bool)
        for g, cols in enumerate(groups):
            self.members[g, cols] = True
        super().__init__(n_players=len(groups), normalize=False)

    def value_function(self, coalitions):
        coalitions = np.asarray(coalitions, dtype=bool)
        cols = (coalitions.astype(np.int64) @ self.members.astype(np.int64)) > 0
        n, (B, d) = len(coalitions), self.background.shape
        Z = np.where(cols[:, None, :], self.x[None, None, :], self.background[None])
        out = self.model.predict(Z.reshape(n * B, d))
        return out.reshape(n, B).mean(axis=1)


class LookupGame(shapiq.Game):
    """A game of given values, in mask order (bit k set when player k is in S)."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)
        n_players = self.values.size.bit_length() - 1
        self.bits = 1 << np.arange(n_players)
        super().__init__(n_players=n_players, normalize=False)

    def value_function(self, coalitions):
        return self.values[np.asarray(coalitions, dtype=np.int64) @ self.bits]


def _best(fn, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _shapiq_rows(games, index, terms):
    """Values (n_rows, n_terms) of a fresh ExactComputer per row."""
    out = np.zeros((len(games), len(terms)))
    for i, game in enumerate(games):
        iv = shapiq.ExactComputer(game, n_players=game.n_players)(index, 2)
        lookup = iv.interaction_lookup
        out[i] = [iv.values[lookup[t]] if t in lookup else 0.0 for t in terms]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[10, 11, 12])
    parser.add_argument("--rows", type=int, default=2)
    parser.add_argument("--background", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=1,
                        help="best of this many calls, model calls included")
    parser.add_argument("--repeat-index", type=int, default=3,
                        help="best of this many calls of the index step alone")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    rng = np.random.default_rng(0)
    print(f"shapiq {version('shapiq')}; {args.rows} explained rows, "
          f"{args.background} background rows, best of {args.repeat} calls "
          f"({args.repeat_index} for the index step alone)")
    end_to_end, index_step = [], []
    for K in args.groups:
        d = 2 * K
        X = rng.normal(size=(1000, d))
        y = X[:, 0] * X[:, 2] + X[:, 4] * X[:, 6] * X[:, 8] + X[:, 1] - X[:, 3] * X[:, 5]
        model = MLPRegressor(hidden_layer_sizes=(32,), max_iter=200,
                             random_state=0).fit(X, y)
        groups = [[2 * g, 2 * g + 1] for g in range(K)]
        bg, rows = X[:args.background], X[500:500 + args.rows]
        explainer = Explainer(model, groups=groups, background=bg).fit(X)
        assert explainer.algorithm_.startswith("model_agnostic"), explainer.algorithm_
        terms = index_terms(K, 2)
        games = [GroupGame(model, x, bg, groups) for x in rows]
        explainer.interactions(rows[:1], index="SII")  # warm-up
        for index in INDICES:
            t_ours, ours = _best(lambda: explainer.interactions(rows, index=index,
                                                                max_order=2), args.repeat)
            assert ours.terms == terms
            t_ref, ref = _best(lambda: _shapiq_rows(games, index, terms), args.repeat)
            diff = float(np.max(np.abs(ours.values - ref)))
            end_to_end.append((K, index, t_ours, t_ref, diff))
        # the index step alone, from the coalition values of the first row
        values = GroupGame(model, rows[0], bg, groups).value_function(
            ((np.arange(1 << K)[:, None] >> np.arange(K)) & 1).astype(bool))
        moebius_transform(values[None])  # warm-up (compiled, cached)
        for index in INDICES:
            t_ours, ours = _best(
                lambda: index_values(moebius_transform(values[None]), index, 2)[0],
                args.repeat_index)
            t_ref, ref = _best(lambda: _shapiq_rows([LookupGame(values)], index, terms)[0],
                               args.repeat_index)
            diff = float(np.max(np.abs(ours - ref)))
            index_step.append((K, index, t_ours, t_ref, diff))

    head = (f"{'K':>3} {'index':<8} {'skdecomp s':>11} {'shapiq s':>10} "
            f"{'shapiq/skdecomp':>16} {'max |diff|':>11}")
    for title, table in [
        (f"model calls + index ({args.rows} rows, {args.background} background rows)",
         end_to_end),
        ("index step alone (one row, from the 2^K coalition values)", index_step),
    ]:
        print(f"\n{title}\n{head}")
        for K, index, a, b, diff in table:
            print(f"{K:>3} {index:<8} {a:>11.4f} {b:>10.4f} {b / a:>16.1f} {diff:>11.1e}")


if __name__ == "__main__":
    main()
