"""The user guide's figure of image maps at a budget (``doc/_static/image_maps.png``).

One sample photo (the cat by default) and EfficientNet-Lite0 on ONNX Runtime:
the photo's colour tree cut into 8, 64 and 1,000 regions (no model call),
then the Owen map of ``Explainer(cnn, method="owen", hierarchy=
AdaptiveGrouper(), baseline="blur", n_samples=B)`` next to shap's
PartitionExplainer at the same budget and baseline, each with its SRG under
the blurred baseline. Each map on its own symmetric colour scale.

Run: python benchmarks/plot_image_maps.py [--photo cat] [--budget 500]
     [--out doc/_static/image_maps.png]
"""

# SPDX-License-Identifier: BSD-3-Clause

import argparse

import numpy as np

from skdecomp import AdaptiveGrouper, Explainer
from skdecomp._image import colour_tree
from skdecomp.datasets import load_pretrained_cnn, load_sample_photos
from skdecomp.metrics import symmetric_relevance_gain


def outline(ax, label_map):
    """Draw the borders of a label map's regions in white."""
    edge = np.zeros(label_map.shape, bool)
    edge[:, 1:] |= label_map[:, 1:] != label_map[:, :-1]
    edge[1:, :] |= label_map[1:, :] != label_map[:-1, :]
    overlay = np.zeros((*label_map.shape, 4))
    overlay[edge] = (1, 1, 1, 0.9)
    ax.imshow(overlay)


def main():
    import matplotlib.pyplot as plt
    import shap

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photo", default="cat")
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--out", default="doc/_static/image_maps.png")
    args = parser.parse_args()
    cnn = load_pretrained_cnn(runtime="onnx", n_threads=1)
    photo = load_sample_photos(names=[args.photo]).images[0]
    k = int(cnn.predict(photo[None])[0].argmax())
    B = args.budget

    tree = colour_tree(photo)
    explainer = Explainer(cnn, method="owen", hierarchy=AdaptiveGrouper(), baseline="blur",
                          target=k, n_samples=B).fit(photo[None])
    ours = explainer.explain(photo[None], methods=["owen"])["owen"].to_image()[0]
    blurred = np.asarray(explainer.background_, np.float32).reshape(photo.shape)

    def f(images):
        return cnn.predict(np.asarray(images, dtype=np.float32))[:, k:k + 1]

    sv = shap.PartitionExplainer(f, shap.maskers.Image(blurred, photo.shape))(
        photo[None].astype(np.float32), max_evals=B, silent=True)
    theirs = np.asarray(sv.values)[0, ..., 0].sum(axis=-1)
    scorer = Explainer(cnn, method="occlusion", baseline="blur", target=k).fit(photo[None])
    srg = [symmetric_relevance_gain(scorer, photo[None], attributions=m[None],
                                    n_steps=32).srg[0] for m in (ours, theirs)]

    fig, axes = plt.subplots(2, 4, figsize=(12, 7))
    for ax, n in zip(axes[0], (None, 8, 64, 1000)):
        ax.imshow(photo)
        if n is None:
            ax.set_title(f"photo (class {k}, p = {float(f(photo[None])[0, 0]):.2f})")
        else:
            outline(ax, tree.cut(n))
            ax.set_title(f"colour tree: {n} regions")
    axes[1, 0].imshow(blurred.astype(np.uint8))
    axes[1, 0].set_title("baseline: the blurred photo")
    n_players = explainer.n_groups_
    for ax, m, title, s in ((axes[1, 1], ours, f"skdecomp Owen, colour tree\n"
                             f"({n_players} regions), B = {B}", srg[0]),
                            (axes[1, 2], theirs, f"shap Partition\n"
                             f"(axis-aligned), B = {B}", srg[1])):
        lim = float(np.abs(m).max()) or 1.0
        ax.imshow(photo.mean(axis=-1), cmap="gray", alpha=0.35)
        im = ax.imshow(m, cmap="RdBu_r", vmin=-lim, vmax=lim, alpha=0.85)
        ax.set_title(f"{title}\nSRG {s:.3f}")
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
    axes[1, 3].axis("off")
    axes[1, 3].text(0, 0.5, "Red: raises the class probability.\nEach map on its own "
                    "symmetric scale.\nSRG: insertion AUC - deletion AUC\nunder the "
                    "blurred baseline\n(higher is better).", fontsize=10, va="center")
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}: SRG skdecomp {srg[0]:.3f}, shap {srg[1]:.3f}")


if __name__ == "__main__":
    main()
