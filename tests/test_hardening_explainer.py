"""Explainers over image models and tables: inputs, targets, outputs, budgets."""

import hashlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdecomp import AdaptiveGrouper, Explainer, PatchGrouper  # noqa: E402
from skdecomp._image import ImageModel  # noqa: E402
from skdecomp._methods._indices import index_order  # noqa: E402
from skdecomp._methods._sampled_indices import _MAX_HELD, _n_basis, index_budget  # noqa: E402
from skdecomp.metrics import infidelity  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self, kind="tensor"):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.head = torch.nn.Linear(4, 3)
        self.kind = kind

    def forward(self, x):
        y = self.head(torch.relu(self.bn(self.conv(x))).mean((2, 3)))
        if self.kind == "tuple":
            return y, y * 0
        if self.kind == "dict":
            return {"logits": y, "aux": y * 0}
        return y


@pytest.fixture(scope="module")
def images():
    return np.random.RandomState(0).rand(3, 8, 8, 3).astype(np.float32)


@pytest.mark.parametrize("kind, output", [("tuple", lambda o: o[0]),
                                          ("dict", lambda o: o["logits"])])
def test_output_picks_from_a_tuple_or_dict(images, kind, output):
    plain = ImageModel(Net().eval(), output="logit", target=1, preprocess="none")
    picked = ImageModel(Net(kind).eval(), output=output, target=1, preprocess="none")
    for method in ("occlusion", "integrated_gradients"):
        a = Explainer(plain, groups=PatchGrouper(4), baseline="zeros",
                      method=method).fit(images[:1]).transform(images[:1])
        b = Explainer(picked, groups=PatchGrouper(4), baseline="zeros",
                      method=method).fit(images[:1]).transform(images[:1])
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # without a callable, a tuple is refused with what to do
    with pytest.raises(ValueError, match="give output= a callable"):
        Explainer(ImageModel(Net(kind).eval(), output="logit", target=1,
                             preprocess="none"),
                  groups=PatchGrouper(4), baseline="zeros").fit(images[:1])


def test_a_class_name_as_the_explainer_target(images):
    model = ImageModel(Net().eval(), class_names=["cat", "dog", "bird"],
                       preprocess="none")
    by_name = Explainer(model, groups=PatchGrouper(4), baseline="zeros",
                        target="dog").fit(images[:1])
    by_index = Explainer(model, groups=PatchGrouper(4), baseline="zeros",
                         target=1).fit(images[:1])
    np.testing.assert_array_equal(by_name.transform(images[:1]),
                                  by_index.transform(images[:1]))
    assert by_name.output_names_ == ["dog"]
    with pytest.raises(ValueError, match=r"'cow' is not a class .*'cat', 'dog', 'bird'"):
        Explainer(model, groups=PatchGrouper(4), baseline="zeros",
                  target="cow").fit(images[:1])


def test_background_given_as_images(images):
    model = ImageModel(Net().eval(), target=0, preprocess="none")
    rows = Explainer(model, groups=PatchGrouper(4),
                     background=images[:2].reshape(2, -1)).fit(images)
    for bg in (images[:2], list(images[:2])):
        ex = Explainer(model, groups=PatchGrouper(4), background=bg).fit(images)
        np.testing.assert_array_equal(ex.transform(images[2:]), rows.transform(images[2:]))
    one = Explainer(model, groups=PatchGrouper(4), background=images[0]).fit(images)
    flat = Explainer(model, groups=PatchGrouper(4),
                     background=images[0].reshape(1, -1)).fit(images)
    np.testing.assert_array_equal(one.transform(images[2:]), flat.transform(images[2:]))


def test_order_three_interactions_of_forty_groups_at_the_default_budget():
    spec, order = index_order("k-SII", 3, 40)
    budget = index_budget(order, 40, False, None, None, spec)
    assert (_n_basis(40, order) + 1) * (budget + 2) <= _MAX_HELD
    # a budget the user asks for is kept, or refused if too large
    with pytest.raises(ValueError, match="lower max_order or n_samples"):
        index_budget(order, 40, False, 40_000, None, spec)


@pytest.mark.slow
def test_order_three_interactions_of_forty_groups_run():
    rng = np.random.RandomState(0)
    X = rng.randn(30, 40)
    ex = Explainer(lambda A: A[:, 0] * A[:, 1] * A[:, 2] + A.sum(axis=1),
                   background=X[:1]).fit(X)
    res = ex.interactions(X[:1], max_order=3)
    assert res.values.shape == (1, 1 + 40 + 780 + 9880)
    assert np.all(np.isfinite(res.standard_errors))


def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _module_digest(module):
    return _digest(*(t.detach().numpy() for t in module.state_dict().values()))


def test_no_call_modifies_what_the_user_passed(images):
    net = Net().eval()
    model = ImageModel(net, target=0, preprocess="none")
    background = images[:1] * 0.5
    before = (_digest(images), _digest(background), _module_digest(net),
              model.get_params(deep=False).keys())
    ex = Explainer(model, groups=PatchGrouper(4), background=background,
                   n_samples=40, random_state=0).fit(images)
    ex.explain(images[1:], methods=["occlusion", "arch", "shapley", "kernel_shap",
                                    "permutation_shap", "lime", "rise",
                                    "integrated_gradients"])
    infidelity(ex, images[1:], attributions=ex.transform(images[1:]), n_samples=16,
               random_state=0)
    AdaptiveGrouper(model, initial_groups=PatchGrouper(4), baseline="zeros",
                    max_evaluations=200).fit(images[:1])
    assert before == (_digest(images), _digest(background), _module_digest(net),
                      model.get_params(deep=False).keys())
    assert not net.training


@pytest.mark.slow
def test_polars_frames_are_read_without_pyarrow():
    pytest.importorskip("polars")
    code = textwrap.dedent('''
        import sys

        class NoArrow:  # as if pyarrow were not installed
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "pyarrow":
                    raise ModuleNotFoundError("No module named 'pyarrow'")

        sys.meta_path.insert(0, NoArrow())
        import warnings
        import numpy as np, pandas as pd, polars as pl
        from sklearn.compose import make_column_transformer
        from sklearn.linear_model import Ridge
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder
        from skdecomp import Explainer
        rng = np.random.default_rng(0)
        data = {"a": rng.normal(size=30), "b": rng.normal(size=30),
                "n": rng.integers(0, 5, size=30), "ok": rng.random(30) < 0.5,
                "t": rng.choice(["x", "y", "z"], size=30).tolist()}
        Xp = pl.DataFrame(data).with_columns(
            pl.col("t").cast(pl.Enum(["x", "y", "z"])).alias("e"))
        Xd = pd.DataFrame(data).assign(
            e=pd.Categorical(data["t"], categories=["x", "y", "z"], ordered=True))
        y = data["a"] + data["b"] * (np.array(data["t"]) == "x")
        def model():
            return make_pipeline(make_column_transformer(
                (OneHotEncoder(), ["t", "e"]), remainder="passthrough"), Ridge())
        for X in (Xp, Xp.lazy()):
            on_polars, on_pandas = model().fit(Xp, y), model().fit(Xd, y)
            a = Explainer(on_polars, background=10, random_state=0).fit(X).transform(Xp[:3])
            b = Explainer(on_pandas, background=10, random_state=0).fit(Xd).transform(Xd[:3])
            np.testing.assert_allclose(a, b, atol=1e-12)
        assert "pyarrow" not in sys.modules
        print("ok")
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
