"""
===============================================
Saliency maps on images: AGREED versus squares
===============================================

On an image, explainers attribute the prediction to groups of pixels. With
square patches, the patches interact and the explainers disagree. AGREED
merges patches into groups that do not interact, and the saliency maps of
all explainers coincide.

The image is explained against one baseline image ``b`` (here blank). As in
the AGREED paper, the grouping of one image ``x`` is learned on the two-point
sample ``{x, b}`` used both as explained points and as background. The
grouping starts from a fixed grid of 2x2-pixel patches of the 8x8 digits
bundled with scikit-learn; merges are not restricted to neighbouring patches
here, so a group can be split in several pieces.
"""

# %%
# A classifier of digits
# ----------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.neural_network import MLPClassifier

from skdecomp import AdaptiveGrouper, Explainer
from skdecomp.metrics import disagreement
from skdecomp.plot import SaliencyDisplay

X, y = load_digits(return_X_y=True)
X = X / 16.0
model = MLPClassifier(hidden_layer_sizes=(32,), max_iter=400, random_state=0)
model.fit(X[:1200], y[:1200])
print(f"test accuracy: {model.score(X[1200:], y[1200:]):.3f}")


# %%
# Square patches and their label maps
# -----------------------------------
def patches(size):
    """Groups of pixel positions for a grid of size x size patches of an 8x8 image."""
    label_map = (np.arange(8)[:, None] // size) * (8 // size) + np.arange(8)[
        None, :
    ] // size
    return [
        np.flatnonzero(label_map.ravel() == k).tolist()
        for k in range(label_map.max() + 1)
    ]


def label_map_of(groups):
    out = np.empty(64, dtype=int)
    for k, g in enumerate(groups):
        out[g] = k
    return out.reshape(8, 8)


baseline = np.zeros(64)
methods = ["arch", "shapley", "banzhaf", "occlusion"]


def explain(x, groups, target):
    explainer = Explainer(model, groups=groups, background=baseline, target=target)
    explainer.fit(x[None])
    result = explainer.explain(x[None], methods=methods)
    return {m: result[m][0] for m in methods}


# %%
# Three groupings of one image
# ----------------------------
# SQUARE-16: 2x2 patches; SQUARE-4: 4x4 patches; AGREED-4: four groups
# merged from the 2x2 patches.
x = X[1300]
target = model.predict(x[None])[0]
agreed = AdaptiveGrouper(
    model, n_samples=2, initial_groups=patches(2), n_groups=4, target=target
).fit(np.vstack([x, baseline]))
groupings = {
    "SQUARE-16": patches(2),
    "SQUARE-4": patches(4),
    "AGREED-4": agreed.groups_,
}
fig, axes = plt.subplots(3, 1 + len(methods), figsize=(11, 8), layout="constrained")
scores = {}
for row, (name, groups) in zip(axes, groupings.items()):
    phi = explain(x, groups, target)
    scores[name] = disagreement(phi, measure="l2").score
    disp = SaliencyDisplay.from_result(
        x.reshape(8, 8), label_map_of(groups), phi, ax=row
    )
    disp.axes_[0].set_title(
        f"{name}\ndisagreement {scores[name]:.1e}", fontsize="small"
    )
fig.suptitle(f"Explaining the probability of class {target}")

# %%
# The same on several images
# --------------------------
# Mean pairwise L2 disagreement of the four explainers, for each grouping.
results = {name: [] for name in groupings}
for i in range(1300, 1310):
    x = X[i]
    target = model.predict(x[None])[0]
    agreed = AdaptiveGrouper(
        model, n_samples=2, initial_groups=patches(2), n_groups=4, target=target
    ).fit(np.vstack([x, baseline]))
    for name, groups in [
        ("SQUARE-16", patches(2)),
        ("SQUARE-4", patches(4)),
        ("AGREED-4", agreed.groups_),
    ]:
        results[name].append(disagreement(explain(x, groups, target)).score)

fig, ax = plt.subplots(layout="constrained")
ax.boxplot(list(results.values()), tick_labels=list(results))
ax.set_yscale("log")
ax.set_ylabel("disagreement between explainers (L2)")
ax.set_title("10 test digits")

# %%
# A saliency map straight from the model
# --------------------------------------
# ``from_estimator`` takes the image and a patch size (or a label map) and
# explains the predicted class against a blank baseline.
SaliencyDisplay.from_estimator(
    model, X[1300].reshape(8, 8), patch_size=4, methods=methods
)
