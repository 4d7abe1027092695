"""The colour tree of an image and the image maps built on it.

The tree's leaves tile the image, every merge joins touching regions, its
cuts nest; ``AdaptiveGrouper()`` starts from its cut on photos; the Owen
value over the tree below AGREED's groups keeps the explanation's budget,
fit included, counted by a wrapping callable; the map is deterministic.
"""

import numpy as np
import pytest
from scipy.cluster.hierarchy import is_valid_linkage

from skdecomp import AdaptiveGrouper, Explainer
from skdecomp._image import colour_tree, lab_colours, region_adjacency

from ._cnn import photos


def _members(Z, n_leaves):
    members = {k: {k} for k in range(n_leaves)}
    for t, (a, b, _, size) in enumerate(Z):
        merged = members.pop(int(a)) | members.pop(int(b))
        assert len(merged) == size
        members[n_leaves + t] = merged
        yield merged, members


def _check_adjacent_merges(Z, label_map):
    n = int(label_map.max()) + 1
    edges = {tuple(e) for e in region_adjacency(label_map).tolist()}
    members = {k: {k} for k in range(n)}
    for t, (a, b, _, _) in enumerate(Z):
        A, B = members.pop(int(a)), members.pop(int(b))
        assert any((min(p, q), max(p, q)) in edges for p in A for q in B), t
        members[n + t] = A | B


def two_colour_image(size=24):
    """Left half red, right half blue, a green square in the middle."""
    img = np.zeros((size, size, 3), dtype=np.uint8)
    img[:, : size // 2] = (200, 30, 30)
    img[:, size // 2 :] = (30, 30, 200)
    q = size // 4
    img[q : size - q, q : size - q] = (30, 200, 30)
    return img


def test_leaves_tile_the_image_and_merges_join_touching_regions():
    img = photos(1, seed=5)[0]  # (32, 32, 3)
    tree = colour_tree(img)
    assert tree.n_blocks == 32 * 32  # one pixel a leaf below 12,544 pixels
    for k in (1, 2, 7, 50, 1024):
        lm = tree.cut(k)
        assert lm.shape == (32, 32)
        assert sorted(np.unique(lm)) == list(range(k))  # a tiling into k regions
    Z = tree.linkage(50)
    assert is_valid_linkage(Z) and Z.shape == (49, 4)
    _check_adjacent_merges(Z, tree.cut(50))
    # the cuts nest: every region of the cut into 50 inside one of the cut into 7
    pairs = np.unique(np.c_[tree.cut(50).ravel(), tree.cut(7).ravel()], axis=0)
    assert len(pairs) == 50
    # linkage_between: the merges from 50 regions up to 7, ending in the 7 regions
    below, top = tree.linkage_between(50, 7)
    assert below.shape == (43, 4) and top.shape == (7,)
    members = list(_members(below, 50))[-1][1]
    cut50, cut7 = tree.cut(50).ravel(), tree.cut(7).ravel()
    for r, node in enumerate(top):
        leaves = members[int(node)]
        assert set(np.unique(cut50[cut7 == r])) == leaves


def test_colours_decide_the_first_split():
    img = two_colour_image()
    lm = colour_tree(img).cut(3)
    # three regions: the red half, the blue half and the green square, each of one colour
    for r in range(3):
        assert len(np.unique(img[lm == r], axis=0)) == 1
    # blocks above 12,544 pixels: square blocks of pixels as leaves
    big = np.repeat(np.repeat(img, 6, axis=0), 6, axis=1)  # 144x144
    tree = colour_tree(big, max_blocks=1000)
    assert tree.n_blocks <= 1000
    assert sorted(np.unique(tree.cut(3))) == [0, 1, 2]


def test_lab_colours_against_known_values():
    # CIELAB (D65) of white, black and pure red; 0..1 floats and uint8 read alike
    rgb = np.array([[[255, 255, 255], [0, 0, 0], [255, 0, 0]]], dtype=np.uint8)
    lab = lab_colours(rgb)
    np.testing.assert_allclose(lab[0, 0], [100, 0, 0], atol=0.05)
    np.testing.assert_allclose(lab[0, 1], [0, 0, 0], atol=1e-9)
    np.testing.assert_allclose(lab[0, 2], [53.24, 80.09, 67.20], atol=0.05)
    np.testing.assert_allclose(lab_colours(rgb / 255.0), lab, atol=1e-9)
    np.testing.assert_allclose(lab_colours(rgb.astype(np.float32)), lab, atol=1e-4)
    skimage = pytest.importorskip("skimage.color")
    photo = photos(1, seed=2)[0]
    np.testing.assert_allclose(lab_colours(photo), skimage.rgb2lab(photo), atol=0.05)


def test_cut_refuses_an_impossible_number_of_regions():
    tree = colour_tree(two_colour_image(8))
    for bad in (0, 65):
        with pytest.raises(ValueError, match="1 to 64 regions"):
            tree.cut(bad)


class CountingModel:
    """A callable image model: a smooth nonlinear score, counting the images it sees."""

    def __init__(self):
        self.images = 0
        rng = np.random.default_rng(0)
        self.w = rng.normal(size=(32, 32, 3)) / 500.0

    def __call__(self, images):
        images = np.asarray(images, dtype=np.float64).reshape(-1, 32, 32, 3)
        self.images += len(images)
        s = (images * self.w).sum(axis=(1, 2, 3))
        left = images[:, :, :16].mean(axis=(1, 2, 3)) / 255.0
        right = images[:, :, 16:].mean(axis=(1, 2, 3)) / 255.0
        return s + 4.0 * left * right  # the two halves interact


@pytest.mark.parametrize("budget", [60, 200])
def test_owen_over_the_colour_tree_keeps_the_whole_budget(budget):
    img = photos(1, seed=4)[0]
    model = CountingModel()
    e = Explainer(model, method="owen", hierarchy=AdaptiveGrouper(), baseline="blur",
                  n_samples=budget)
    e.fit(img[None])
    values = e.transform(img[None])
    assert model.images <= budget  # AGREED's evaluations included
    assert model.images >= budget - 10  # and the budget is used
    # the players are regions of the colour tree: two per evaluation, at most its pixels
    assert e.n_groups_ == min(32 * 32, 2 * budget)
    f_x = model(img[None].astype(np.float32))[0]
    np.testing.assert_allclose(values.sum(), f_x - e.expected_value_, rtol=1e-6)
    # deterministic: the same map again
    again = Explainer(model, method="owen", hierarchy=AdaptiveGrouper(), baseline="blur",
                      n_samples=budget).fit(img[None]).transform(img[None])
    np.testing.assert_array_equal(values, again)


def test_the_tree_below_agreed_nests_agreed_groups():
    img = photos(1, seed=4)[0]
    g = AdaptiveGrouper(CountingModel(), baseline="blur", max_evaluations=80).fit(img[None])
    initial = g.initial_label_maps_[0]
    K0 = int(initial.max()) + 1
    assert K0 == 8  # 80 evaluations, 10 per initial region
    Z = g.linkage(0, n_leaves=100)
    assert is_valid_linkage(Z) and Z.shape == (99, 4)
    leaves = g.leaf_label_map(100)
    _check_adjacent_merges(Z[: 100 - K0], leaves)
    # after the colour tree's merges, the clusters are AGREED's initial groups
    for t, (_, members) in enumerate(_members(Z, 100)):
        if t == 100 - K0 - 1:
            clusters = dict(members)
    regions = [set(np.unique(leaves[initial == k])) for k in range(K0)]
    assert sorted(map(sorted, clusters.values())) == sorted(map(sorted, regions))
    with pytest.raises(ValueError, match="from the 8 initial groups"):
        g.linkage(0, n_leaves=3)
    fixed = AdaptiveGrouper(CountingModel(), initial_groups=initial).fit(img[None])
    with pytest.raises(ValueError, match="reads the colour tree"):
        fixed.linkage(0, n_leaves=100)


def test_adaptive_grouper_on_a_224_pixel_photo_keeps_to_its_budget():
    photo = photos(1, size=224, seed=6)[0]
    rng = np.random.default_rng(1)
    w = rng.normal(size=(224, 224, 3)) / 5e4
    seen = {"images": 0}

    def model(images):
        images = np.asarray(images, dtype=np.float64).reshape(-1, 224, 224, 3)
        seen["images"] += len(images)
        top = images[:, :112].mean(axis=(1, 2, 3)) / 255.0
        bottom = images[:, 112:].mean(axis=(1, 2, 3)) / 255.0
        return (images * w).sum(axis=(1, 2, 3)) + 3.0 * top * bottom

    g = AdaptiveGrouper(model, baseline="blur").fit(photo[None])
    # 128 regions of the colour tree to start from, 10 evaluations each at most
    assert int(g.initial_label_maps_[0].max()) + 1 == 128
    assert seen["images"] <= 1280 < 3000
    share = max(p["largest_share"] for p in g.path_ if p["chosen"])
    assert share <= 0.25 or not g.useful_partition_
