"""Owen values of image patches over AGREED's merge tree of the image.

The leaves are the patches (the explainer's groups), AGREED's merges nest
them, and AGREED's final groups are the blocks under the root: the totals
of those blocks are the grouped Shapley values of AGREED's groups (Owen's
quotient property), a flat tree gives the Shapley map, and the patch values
add up to f(x) - f(b). 32x32 photos, 16 patches of 8x8 pixels, so that the
values are exact where they are compared to 1e-10.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdecomp import AdaptiveGrouper, Explainer, ImageModel, PatchGrouper  # noqa: E402
from skdecomp._hierarchy import Hierarchy  # noqa: E402
from skdecomp._methods._owen import owen_coalition_count  # noqa: E402

from ._cnn import photos, small_cnn  # noqa: E402

TARGET = 1
N_GROUPS = 4  # AGREED's n_groups (it may stop before)


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class Counted:
    """A torch module that counts the images it is given and their dtypes."""

    def __init__(self, module):
        self.module = module
        self.images = 0
        self.dtypes = set()
        module.register_forward_hook(self._hook)

    def _hook(self, module, inputs, output):
        self.images += inputs[0].shape[0]
        self.dtypes.add(inputs[0].dtype)

    def reset(self):
        self.images = 0
        self.dtypes = set()


@pytest.fixture(scope="module")
def net():
    torch.set_num_threads(1)
    return Counted(small_cnn())


@pytest.fixture(scope="module")
def image():
    return photos(1, seed=3)[0]  # (32, 32, 3) uint8


def agreed(estimator=None, **params):
    return AdaptiveGrouper(estimator, initial_groups=PatchGrouper(8), n_groups=N_GROUPS,
                           **params)


def owen_explainer(net, image, hierarchy=None, groups="patches", **params):
    return Explainer(net.module, method="owen",
                     groups=PatchGrouper(8) if groups == "patches" else groups,
                     hierarchy=agreed() if hierarchy is None else hierarchy,
                     baseline="blur", target=TARGET, **params).fit(image[None])


@pytest.fixture(scope="module")
def fitted(net, image):
    """The Owen explainer over AGREED's tree and its exact patch values."""
    torch.set_num_threads(1)
    explainer = owen_explainer(net, image)
    return explainer, explainer.explain(image[None], methods=["owen"])["owen"]


def pixel_sets(label_map):
    return {frozenset(np.flatnonzero(label_map.ravel() == k)) for k in np.unique(label_map)}


def node_pixel_sets(explainer, nodes, image):
    """The pixels of every node of the explainer's hierarchy."""
    h = explainer.hierarchy_
    channels = image.shape[2]
    return {frozenset(int(c) // channels for k in h.leaves[a]
                      for c in explainer.groups_[k]) for a in nodes}


def reference_grouper(explainer, image):
    """AGREED fitted on its own as the explainer fits it (model, target, baseline)."""
    return agreed(ImageModel(small_cnn()), target=TARGET,
                  baseline=explainer.background_.reshape(image.shape)).fit(image[None])


# -- the tree is AGREED's merge tree ---------------------------------------------------
def test_the_hierarchy_is_agreeds_merge_tree_over_the_patches(fitted, image):
    explainer, _ = fitted
    h = explainer.hierarchy_
    assert explainer.n_groups_ == h.n_players == 16
    grouper = reference_grouper(explainer, image)
    n_final = int(grouper.label_maps_[0].max()) + 1
    # the blocks under the root are AGREED's final groups
    root_children = h.children[-1]
    assert len(root_children) == n_final
    assert node_pixel_sets(explainer, root_children, image) == pixel_sets(
        grouper.label_maps_[0])
    # and every level of the tree is a partition along AGREED's merges
    for n in range(n_final, 17):
        assert node_pixel_sets(explainer, h.cut(n), image) == pixel_sets(
            grouper.cut_label_map(n))


# -- (a) the quotient property ---------------------------------------------------------
@pytest.mark.parametrize("hierarchy", ["unfitted", "with estimator", "fitted"])
def test_totals_over_agreed_groups_are_their_grouped_shapley_values(net, image, fitted,
                                                                    hierarchy):
    explainer, owen = fitted
    if hierarchy != "unfitted":
        grouper = agreed(ImageModel(net.module), target=TARGET)
        if hierarchy == "fitted":  # fitted by the user on the image, as the explainer would
            grouper = agreed(ImageModel(net.module), target=TARGET,
                             baseline=explainer.background_.reshape(image.shape))
            grouper.fit(image[None])
        explainer = owen_explainer(net, image, hierarchy=grouper)
        owen = explainer.explain(image[None], methods=["owen"])["owen"]
        np.testing.assert_allclose(owen.values, fitted[1].values, rtol=0, atol=1e-12)
    h = explainer.hierarchy_
    blocks = h.children[-1]
    totals = owen.at_level(len(blocks)).values
    groups = [np.concatenate([explainer.groups_[k] for k in h.leaves[a]]).tolist()
              for a in h.cut(len(blocks))]
    shapley = Explainer(net.module, method="shapley", groups=groups, baseline="blur",
                        target=TARGET).fit(image[None]).transform(image[None])
    np.testing.assert_allclose(totals, shapley, rtol=0, atol=1e-10)
    # the same, summing the patches of every group
    by_hand = [owen.values[0, h.leaves[a]].sum() for a in h.cut(len(blocks))]
    np.testing.assert_allclose(by_hand, shapley[0], rtol=0, atol=1e-10)


# -- (b) flat hierarchies --------------------------------------------------------------
@pytest.fixture(scope="module")
def gray():
    """A cheaper CNN on grey 32x32 images (2**16 coalitions in about a second)."""
    torch.manual_seed(0)
    module = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 4, stride=4), torch.nn.ReLU(),
        torch.nn.Conv2d(4, 4, 3, padding=1), torch.nn.Tanh(),
        torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten(), torch.nn.Linear(16, 3),
    ).eval()
    img = photos(1, channels=1, seed=4)[0]  # (32, 32) uint8
    torch.set_num_threads(1)
    explainer = Explainer(module, groups=PatchGrouper(8), baseline="blur",
                          target=TARGET).fit(img[None])
    shapley = explainer.explain(img[None], methods=["shapley"])["shapley"].values
    return module, img, explainer.groups_, shapley


@pytest.mark.parametrize("flat", ["one block per patch", "all patches in one block",
                                  "singleton blocks"])
def test_a_flat_hierarchy_gives_the_shapley_map(gray, flat):
    module, img, patches, shapley = gray
    columns = [p.tolist() for p in patches]
    hierarchy = {
        "one block per patch": [[c] for c in columns],
        "all patches in one block": [columns],
        # one internal node per patch, each with its patch alone
        "singleton blocks": Hierarchy(16, [[k] for k in range(16)]
                                      + [list(range(16, 32))]),
    }[flat]
    explainer = Explainer(module, method="owen", groups=PatchGrouper(8),
                          hierarchy=hierarchy, baseline="blur", target=TARGET).fit(img[None])
    if flat != "singleton blocks":
        assert explainer.hierarchy_.is_flat()
    owen = explainer.explain(img[None], methods=["owen"])["owen"].values
    np.testing.assert_allclose(owen, shapley, rtol=0, atol=1e-10)


# -- (c) efficiency --------------------------------------------------------------------
def probability(module, images):
    x = torch.from_numpy(np.ascontiguousarray(
        np.asarray(images, dtype=np.float32).transpose(0, 3, 1, 2)))
    with torch.no_grad():
        return torch.softmax(module(x), dim=1)[:, TARGET].numpy().astype(np.float64)


def test_patch_values_add_up_to_f_x_minus_f_b(net, image, fitted):
    explainer, owen = fitted
    model = ImageModel(net.module)  # the model the explainer calls
    f_x = model.predict(image[None])[0, TARGET]
    f_b = model.predict(explainer.background_.reshape(1, *image.shape))[0, TARGET]
    assert owen.base_values[0] == explainer.expected_value_ == f_b
    assert abs(owen.values.sum() - (f_x - f_b)) < 1e-10
    # and by hand: the softmax of the module on the image and on its blurred self
    by_hand = probability(net.module, image[None]) - probability(
        net.module, explainer.background_.reshape(1, *image.shape))
    assert owen.values.sum() == pytest.approx(by_hand[0], rel=1e-4, abs=1e-7)


# -- the sampled path: float32 hybrids, batches, cost, standard errors ------------------
def test_the_exact_path_costs_the_hierarchys_coalitions(net, image, fitted):
    explainer, owen = fitted
    count = owen_coalition_count(explainer.hierarchy_)
    assert count < 2**16 - 2  # far fewer than the flat tree's
    net.reset()
    again = explainer.explain(image[None], methods=["owen"])["owen"]
    assert net.images <= count + 1  # the coalitions and f(x)
    assert net.dtypes == {torch.float32}
    assert again.standard_errors is None
    np.testing.assert_array_equal(again.values, owen.values)


def test_the_sampled_owen_value_on_images(net, image, fitted):
    explainer, exact = fitted
    count = owen_coalition_count(explainer.hierarchy_)
    budget = count // 3
    sampled = owen_explainer(net, image, n_samples=budget, random_state=0)
    net.reset()
    res = sampled.explain(image[None], methods=["owen"])["owen"]
    assert 0 < net.images <= budget + 1
    assert net.dtypes == {torch.float32}
    # every consistent order's marginal contributions add up to f(x) - f(b)
    assert abs(res.values.sum() - exact.values.sum()) < 1e-10
    se = res.standard_errors
    assert np.isfinite(se).all() and (se > 0).all()
    assert (np.abs(res.values - exact.values) <= 5 * se).all()
    # the same draws in batches of 7 images
    small = Explainer(ImageModel(net.module, batch_memory=7 * 32 * 32 * 3 * 4),
                      method="owen", groups=PatchGrouper(8), hierarchy=agreed(),
                      baseline="blur", target=TARGET, n_samples=budget,
                      random_state=0).fit(image[None])
    batched = small.explain(image[None], methods=["owen"])["owen"]
    np.testing.assert_allclose(batched.values, res.values, rtol=0, atol=1e-6)
    # a budget that holds the hierarchy's coalitions gives the exact value
    whole = owen_explainer(net, image, n_samples=count, random_state=0)
    np.testing.assert_allclose(whole.transform(image[None]), exact.values, rtol=0,
                               atol=1e-12)


# -- the binary tree of linkage() and the partition recursion -------------------------
def test_linkage_is_agreeds_merges_then_adjacent_pairs_up_to_one_group(net, image):
    grouper = agreed(ImageModel(net.module), target=TARGET, baseline="blur").fit(image[None])
    Z = grouper.linkage()
    assert Z.shape == (15, 4)
    h = Explainer(net.module, method="owen", groups=PatchGrouper(8), hierarchy=Z,
                  baseline="blur", target=TARGET).fit(image[None]).hierarchy_
    assert all(len(ch) == 2 for ch in h.children)
    channels = image.shape[2]

    def pixels(nodes):
        return {frozenset(int(c) // channels for k in h.leaves[a]
                          for c in grouper.initial_groups_[k]) for a in nodes}

    # along AGREED's merges (and its path past the stop) every cut is its partition
    lowest = min(p["n_groups"] for p in grouper.path_)
    for n in range(lowest, 17):
        assert pixels(h.cut(n)) == pixel_sets(grouper.cut_label_map(n))
    # above them, every merge joins two groups that touch
    lm = grouper.initial_label_maps_[0]
    for a in range(16 + 16 - lowest, h.n_nodes):
        left, right = (np.isin(lm, h.leaves[c]) for c in h.children[a - 16])
        sideways = (left[:, 1:] & right[:, :-1]) | (left[:, :-1] & right[:, 1:])
        vertical = (left[1:, :] & right[:-1, :]) | (left[:-1, :] & right[1:, :])
        assert sideways.any() or vertical.any()


def test_the_partition_recursion_over_linkage_on_images(net, image):
    grouper = agreed(ImageModel(net.module), target=TARGET, baseline="blur").fit(image[None])
    Z = grouper.linkage()
    exact = owen_explainer(net, image, hierarchy=Z)
    phi_exact = exact.transform(image[None])[0]
    errors = []
    for budget in (2, 20, 60):
        e = owen_explainer(net, image, hierarchy=Z, n_samples=budget,
                           method_params={"estimator": "partition"})
        net.reset()
        res = e.explain(image[None], methods=["owen"])["owen"]
        assert net.images <= budget + 1 and net.dtypes == {torch.float32}
        assert res.standard_errors is None
        assert abs(res.values.sum() - phi_exact.sum()) < 1e-10
        # the root's two children are exact
        for child in e.hierarchy_.children[-1]:
            leaves = e.hierarchy_.leaves[child]
            assert abs(res.values[0, leaves].sum() - phi_exact[leaves].sum()) < 1e-10
        errors.append(np.abs(res.values[0] - phi_exact).sum())
    assert errors[-1] < errors[0]


# -- groups=None and (d) errors --------------------------------------------------------
def test_groups_none_takes_the_groupers_initial_groups(net, image, fitted):
    explainer, owen = fitted
    other = owen_explainer(net, image, groups=None)
    assert other.n_groups_ == 16
    assert [g.tolist() for g in other.groups_] == [g.tolist() for g in explainer.groups_]
    np.testing.assert_allclose(other.transform(image[None]), owen.values, rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("groups, problem", [
    (PatchGrouper(4), "is a part of one of them"),
    (PatchGrouper(16), "covers pixels of 4 of them"),
])
def test_initial_groups_other_than_the_explainers_groups_raise(net, image, groups,
                                                               problem):
    with pytest.raises(ValueError, match=problem) as err:
        owen_explainer(net, image, groups=groups)
    message = str(err.value)
    assert "initial groups" in message and "explainer's" in message
    assert "the AdaptiveGrouper's merge tree" in message
    assert "PatchGrouper(patch_size=8)" in message and "groups=None" in message


def test_a_fitted_grouper_over_other_patches_raises(net, image):
    grouper = agreed(ImageModel(net.module), target=TARGET).fit(image[None])
    with pytest.raises(ValueError, match="is a part of one of them"):
        owen_explainer(net, image, hierarchy=grouper, groups=PatchGrouper(4))


def test_groups_beside_a_colour_tree_grouper_raise_before_agreed_runs(net, image):
    # AdaptiveGrouper() starts from its colour tree, whose regions are the players
    net.reset()
    with pytest.raises(ValueError, match="starts from its colour tree"):
        owen_explainer(net, image, hierarchy=AdaptiveGrouper(n_groups=N_GROUPS))
    assert net.images <= 2  # f(b) and f(x) at most: AGREED never ran


def test_an_image_grouper_without_merge_tree_raises(net, image):
    with pytest.raises(ValueError, match="keeps no merge path"):
        owen_explainer(net, image, hierarchy=PatchGrouper(8))


def test_linkage_and_cut_label_map_of_a_grouper_fitted_on_a_table():
    from sklearn.linear_model import LinearRegression

    X = np.random.default_rng(0).normal(size=(40, 4))
    grouper = AdaptiveGrouper(LinearRegression().fit(X, X[:, 0] * X[:, 1])).fit(X)
    for method in ("linkage", "cut_label_map"):
        args = () if method == "linkage" else (2,)
        with pytest.raises(ValueError, match=rf"{method}\(\) is for a grouper fitted on "
                           "images"):
            getattr(grouper, method)(*args)
