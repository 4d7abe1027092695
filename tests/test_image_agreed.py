"""Per-image AGREED at the default: informative partitions at a bounded cost."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdecomp import AdaptiveGrouper, ImageModel, PatchGrouper  # noqa: E402

from ._cnn import photos  # noqa: E402

SIZE, PATCH = 32, 4  # 64 patches of 4x4 pixels


class Planted(torch.nn.Module):
    """Patches 27 and 28 interact only with each other; the rest is additive.

    Within a patch the output is nonlinear (no interaction between groups).
    """

    def forward(self, x):  # NCHW
        p = torch.nn.functional.avg_pool2d(x.mean(dim=1, keepdim=True), PATCH)[:, 0]
        p = p.reshape(len(x), -1)
        additive = torch.tanh(p).sum(dim=1) * 0.1
        pair = 4.0 * p[:, 27] * p[:, 28]
        return (additive + pair)[:, None]


class Spread(torch.nn.Module):
    """Every pair of patches interacts: the square of the mean."""

    def forward(self, x):
        return (x.mean(dim=(1, 2, 3)) ** 2 * 10)[:, None]


def test_planted_pair_is_merged_and_nothing_else():
    image = photos(1, size=SIZE).astype(float) / 255 + 0.5
    model = ImageModel(Planted().eval(), output="logit")
    g = AdaptiveGrouper(model, initial_groups=PatchGrouper(PATCH), baseline="zeros").fit(image)
    initial = g.initial_label_maps_[0]
    pair = {int(initial[3 * PATCH, 3 * PATCH]), int(initial[3 * PATCH, 4 * PATCH])}
    assert pair == {27, 28}
    # one merge: the two planted patches, nothing else
    assert g.n_groups_ == 63
    merged = [k for k in range(g.n_groups_) if np.unique(initial[g.label_map_ == k]).size > 1]
    assert len(merged) == 1
    assert set(np.unique(initial[g.label_map_ == merged[0]]).tolist()) == pair
    assert g.useful_partition_ and g.stop_reasons_ == ["price"]
    assert g.remaining_share_ < 1e-6
    # at most 10 evaluations per initial patch
    assert g.model_calls_ <= 10 * 64


def test_spread_interactions_give_no_giant_group_and_say_so():
    image = photos(1, size=SIZE).astype(float) / 255 + 0.5
    model = ImageModel(Spread().eval(), output="logit")
    g = AdaptiveGrouper(model, initial_groups=PatchGrouper(PATCH), baseline="zeros",
                        group_penalty=0.0).fit(image)
    sizes = np.bincount(g.label_map_.ravel())
    assert sizes.max() <= SIZE * SIZE // 4  # never more than a quarter of the image
    assert g.max_group_size_ == SIZE * SIZE // 4
    chosen = [p for p in g.path_ if p["chosen"]]
    assert len(chosen) == 1 and chosen[0]["n_groups"] == g.n_groups_
    # a quarter of the image cannot hold interactions spread over all of it
    assert not g.useful_partition_
    assert g.remaining_share_ > 0.5
    assert g.model_calls_ <= 10 * 64


def test_path_records_the_trade_off():
    image = photos(1, size=SIZE)
    model = ImageModel(Spread().eval(), output="logit", preprocess=(127.0, 128.0))
    g = AdaptiveGrouper(model, initial_groups=PatchGrouper(PATCH)).fit(image)
    path = g.path_
    assert path[0]["n_groups"] == 64 and path[0]["merged"] is None
    assert path[0]["effective_n_groups"] == pytest.approx(64)
    for before, after in zip(path, path[1:]):
        assert after["n_groups"] == before["n_groups"] - 1
        assert after["largest_share"] >= before["largest_share"]
        assert after["model_evaluations"] <= g.model_calls_
    assert path[-1]["n_groups"] < g.n_groups_  # the path goes past the stop
    for entry in path:
        # the shares of the groups of the partition with n groups along the path
        lm = g.cut_label_map(entry["n_groups"])
        assert lm.max() + 1 == entry["n_groups"]
        p = np.bincount(lm.ravel()) / lm.size
        assert entry["largest_share"] == pytest.approx(p.max())
        assert entry["effective_n_groups"] == pytest.approx(np.exp(-np.sum(p * np.log(p))))


def test_paper_rule_still_available():
    image = photos(1, size=16)
    model = ImageModel(Spread().eval(), output="logit")
    g = AdaptiveGrouper(model, initial_groups=PatchGrouper(4), rel_tol=0.25).fit(image)
    assert g.strategy_ == "paper"
    assert g.max_group_size_ is None


def test_a_number_of_groups_takes_the_papers_rule():
    image = photos(1, size=16)
    model = ImageModel(Spread().eval(), output="logit")
    g = AdaptiveGrouper(model, initial_groups=PatchGrouper(4), n_groups=3).fit(image)
    assert g.strategy_ == "paper" and g.n_groups_ == 3
    lazy = AdaptiveGrouper(model, initial_groups=PatchGrouper(4), n_groups=3,
                           strategy="pairs").fit(image)
    assert lazy.strategy_ == "pairs" and lazy.n_groups_ == 3


class QuadrantPair(torch.nn.Module):
    """The top-left and top-right quadrants interact; the rest is additive."""

    def forward(self, x):  # NCHW
        q = torch.nn.functional.avg_pool2d(x.mean(dim=1, keepdim=True), SIZE // 2)
        q = q.reshape(len(x), 4)  # top-left, top-right, bottom-left, bottom-right
        return (torch.tanh(q).sum(dim=1) * 0.1 + 4.0 * q[:, 0] * q[:, 1])[:, None]


def test_agreed_from_superpixels_merges_the_interacting_segments():
    from skdecomp import SuperpixelGrouper

    # four flat quadrants of distinct colours: SLIC finds them
    image = np.zeros((1, SIZE, SIZE, 3))
    h = SIZE // 2
    for (r, c), colour in zip([(0, 0), (0, 1), (1, 0), (1, 1)],
                              [(0.9, 0.1, 0.1), (0.1, 0.9, 0.1), (0.1, 0.1, 0.9),
                               (0.9, 0.9, 0.1)]):
        image[0, r * h:(r + 1) * h, c * h:(c + 1) * h] = colour
    model = ImageModel(QuadrantPair().eval(), output="logit")
    slic = SuperpixelGrouper("slic", segmentation_params={"n_segments": 4,
                                                          "compactness": 10})
    g = AdaptiveGrouper(model, initial_groups=slic, baseline="zeros",
                        max_group_size=SIZE * SIZE).fit(image)
    initial = g.initial_label_maps_[0]
    assert np.unique(initial).size == 4
    top = {int(initial[0, 0]), int(initial[0, -1])}
    assert g.n_groups_ == 3
    merged = [k for k in range(g.n_groups_) if np.unique(initial[g.label_map_ == k]).size > 1]
    assert len(merged) == 1
    assert set(np.unique(initial[g.label_map_ == merged[0]]).tolist()) == top
    assert g.remaining_share_ < 1e-6
