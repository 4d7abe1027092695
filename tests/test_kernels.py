import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from skdecomp._decomposition._kernels import (
    inverse_moebius_transform,
    moebius_transform,
    popcounts,
    size_weighted_attributions,
)
from skdecomp._game._kernels import mean_over_background

from ._naive import moebius, powerset


def _as_dict(row, K):
    return {S: row[sum(1 << k for k in S)] for S in powerset(range(K))}


@pytest.mark.parametrize("K", [0, 1, 2, 3, 5, 7])
def test_moebius_matches_inclusion_exclusion(K, rng):
    v = rng.normal(size=(4, 1 << K))
    F = moebius_transform(v)
    for r in range(4):
        expected = moebius(_as_dict(v[r], K), K)
        for U, val in expected.items():
            assert F[r, sum(1 << k for k in U)] == pytest.approx(val, abs=1e-12)
    np.testing.assert_allclose(inverse_moebius_transform(F), v, atol=1e-12)


def test_parallel_equals_serial_and_inputs_untouched(rng):
    v = rng.normal(size=(50, 1 << 6))
    v.setflags(write=False)
    F = moebius_transform(v)
    np.testing.assert_array_equal(moebius_transform(v, n_jobs=2), F)
    w = np.array([0.0] + [1.0 / s for s in range(1, 7)])
    np.testing.assert_array_equal(
        size_weighted_attributions(F, w), size_weighted_attributions(F, w, n_jobs=2)
    )
    assert not v.flags.writeable


def test_size_weighted_attributions_explicit(rng):
    K = 4
    F = rng.normal(size=(3, 1 << K))
    w = rng.normal(size=K + 1)
    phi = size_weighted_attributions(F, w)
    for r in range(3):
        for k in range(K):
            expected = sum(
                w[len(U)] * F[r, sum(1 << j for j in U)]
                for U in powerset(range(K))
                if k in U
            )
            assert phi[r, k] == pytest.approx(expected, abs=1e-12)


def test_popcounts_and_mean():
    np.testing.assert_array_equal(popcounts(4), [bin(m).count("1") for m in range(16)])
    p = np.arange(12, dtype=float).reshape(6, 2)
    np.testing.assert_allclose(mean_over_background(p, 3), p.reshape(2, 3, 2).mean(1))


def test_bad_tables():
    with pytest.raises(ValueError, match="2\\*\\*K"):
        moebius_transform(np.zeros((2, 6)))
    with pytest.raises(ValueError, match="size_weights"):
        size_weighted_attributions(np.zeros((2, 8)), np.zeros(3))


def test_same_numbers_without_jit(rng):
    """The kernels give identical numbers with NUMBA_DISABLE_JIT=1."""
    script = textwrap.dedent(
        """
        import numpy as np
        from skdecomp._decomposition._kernels import moebius_transform, size_weighted_attributions
        from skdecomp import Explainer
        from sklearn.linear_model import LinearRegression
        rng = np.random.default_rng(1)
        v = rng.normal(size=(5, 32))
        F = moebius_transform(v)
        phi = size_weighted_attributions(F, np.array([0, 1, .5, 1/3, .25, .2]))
        X = rng.normal(size=(30, 4)); y = X[:, 0] * X[:, 1] + X[:, 2]
        e = Explainer(lambda Z: Z[:, 0] * Z[:, 1] + np.sin(Z[:, 2]) * Z[:, 3],
                      background=7, random_state=0).fit(X)
        np.save(OUT, np.concatenate([F.ravel(), phi.ravel(), e.transform(X[:3]).ravel()]))
        """
    )
    results = []
    for disable in ("0", "1"):
        out = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"skd_jit_{disable}_{os.getpid()}.npy")
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        subprocess.run(
            [sys.executable, "-c", f"OUT = {out!r}\n" + script], env=env, check=True
        )
        results.append(np.load(out))
        os.remove(out)
    np.testing.assert_array_equal(results[0], results[1])


def test_moebius_properties_hypothesis():
    """Round trip and efficiency on arbitrary tables (property based)."""
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays

    @settings(max_examples=40, deadline=None)
    @given(
        st.integers(0, 6).flatmap(
            lambda K: arrays(
                np.float64,
                (2, 1 << K),
                elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
            )
        )
    )
    def check(v):
        K = v.shape[1].bit_length() - 1
        F = moebius_transform(v)
        np.testing.assert_allclose(inverse_moebius_transform(F), v, atol=1e-8)
        w = np.array([0.0] + [1.0 / s for s in range(1, K + 1)])
        phi = size_weighted_attributions(F, w)
        np.testing.assert_allclose(phi.sum(axis=1), v[:, -1] - v[:, 0], atol=1e-7)

    check()


def test_no_kernel_is_compiled_twice_for_threads():
    """Threads run the one serial compilation of a kernel, which releases the GIL.

    A ``parallel=True`` twin would compile the whole kernel a second time on
    the first call with ``n_jobs`` > 1; every kernel that callers run on
    threads is compiled with ``nogil=True`` instead.
    """
    import importlib
    import pkgutil

    import skdecomp
    from numba.core.registry import CPUDispatcher

    threaded = []
    for info in pkgutil.walk_packages(skdecomp.__path__, "skdecomp."):
        if not info.name.endswith("_kernels"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                assert not obj.targetoptions.get("parallel"), name
                if obj.targetoptions.get("nogil"):
                    threaded.append(name)
    for name in ("_tree_class_attributions_chunk", "_pd_attributions_chunk",
                 "_tree_attributions_leaf_chunk", "_tree_ternary_chunk",
                 "_tree_anchored_sums_chunk", "_owen_pd_chunk", "_moebius"):
        assert name in threaded
