"""Explanations of images in pixel layouts: per pixel, shap's and captum's.

A mixin of :class:`~skdecomp.Explanation`: the group values of an
explanation of images spread over the pixels of their groups
(:meth:`to_image`), over its pixels and channels in shap's image layout
(``to_shap``), or carried by every pixel and channel as captum's
attributions with a ``feature_mask`` are (:meth:`to_captum`).
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd

__all__ = ["ImageLayoutsMixin"]


class ImageLayoutsMixin:
    """Pixel layouts of an explanation of images (its ``label_map``)."""

    def to_image(self):
        """The values as maps over the pixels of the explained images.

        The value of a group is spread evenly over its pixels: each pixel
        of group k gets ``values[..., k] / n_pixels_k``, so the sum over a
        group's pixels is the group's value and the sum over the image is
        the sum of the values. The channels of a pixel share it.

        Returns
        -------
        image : ndarray of shape (n_rows, H, W) or (n_rows, H, W, n_outputs)
            One map per row; the output axis is there when ``values`` has
            one (several outputs), and a dropped row axis is dropped here
            too.

        Raises
        ------
        ValueError
            If the explanation has no ``label_map``: it explains rows of a
            table, or some of its groups were selected (select after
            ``to_image``, or select pixels of the map).
        """
        lm = self.label_map
        if lm is None:
            raise ValueError(
                "to_image needs the pixel groups of an explanation of images "
                "(label_map), and this explanation has none: it explains rows of a "
                "table, was built without label_map=, or is a selection of some of "
                "its groups. Explain images with an Explainer fitted on images, and "
                "call to_image before selecting groups."
            )
        counts = np.bincount(lm.ravel(), minlength=self._v.shape[1])
        per_pixel = self._v / counts[None, :, None]  # (rows, groups, outputs)
        image = per_pixel[:, lm, :]  # (rows, H, W, outputs)
        return image[self._first(0) + (slice(None), slice(None)) + self._first(2)]

    def _pixel_channels(self):
        """Values per pixel and channel (rows, H, W, C, outputs) and the images (rows, H, W, C).

        Every axis is kept: the arrays of an explanation hold them all.
        """
        self.to_image()  # the checks of a map over pixels
        lm = self.label_map
        raw = self._raw
        n_pixels = lm.size
        if raw is None or isinstance(raw, pd.DataFrame) or np.ndim(raw) != 2 or (
                np.shape(raw)[1] % n_pixels):
            raise ValueError(
                "this explanation of images does not hold the explained images; "
                "explain them with Explainer.explain or transform."
            )
        C = np.shape(raw)[1] // n_pixels
        images = np.asarray(raw).reshape(-1, *lm.shape, C)
        counts = np.bincount(lm.ravel(), minlength=self._v.shape[1])
        v = (self._v / counts[None, :, None])[:, lm, :]  # (rows, H, W, outputs)
        return np.repeat(v[:, :, :, None, :] / C, C, axis=3), images

    def to_captum(self):
        """The values in captum's layout: the shape of the input tensor, (n, C, H, W).

        As captum's attributions with a ``feature_mask`` (e.g.
        ``FeatureAblation``, ``ShapleyValueSampling``, ``Lime``), every pixel
        and channel of a group carries the group's whole value (not a share
        of it, as in :meth:`to_image`), so ``explainer.explain(images,
        methods=["occlusion"])["occlusion"].to_captum()`` is captum's
        ``FeatureAblation(forward).attribute(x, baselines, feature_mask=
        mask)`` for the same groups and baseline, and
        ``captum.attr.visualization.visualize_image_attr`` draws
        ``to_captum()[i].transpose(1, 2, 0)``.

        Returns
        -------
        attributions : ndarray of shape (n_rows, C, H, W) or (n_rows, C, H, W, n_outputs)
            The output axis only for several outputs.
        """
        self.to_image()  # the checks of a map over pixels
        lm = self.label_map
        C = np.shape(self._raw)[1] // lm.size
        v = self._v[:, lm, :]  # (rows, H, W, outputs): each pixel its group's value
        v = np.repeat(v[:, None], C, axis=1)[self._first(0)]
        return v[..., 0] if v.shape[-1] == 1 or not self._keep[2] else v

    def _to_shap_image(self, shap):
        """shap's layout of images for the one explained output: values per pixel
        and channel, the images as data."""
        v, images = self._pixel_channels()
        rows = self._first(0)
        if images.size and np.all((images >= 0) & (images <= 255)) and np.all(
                images == np.round(images)):
            images = images.astype(np.uint8)  # pixels, drawn as they are
        base = np.asarray(self._b[:, 0], dtype=np.float64)[rows]
        return shap.Explanation(
            values=v[..., 0][rows], base_values=base if base.ndim else float(base),
            data=images[rows],
        )
