"""Images as they are: arrays of shape (n, H, W) or (n, H, W, C), uint8 or float.

The image path works in float32 for image models (in float64 for a
scikit-learn model on flattened images), in the images' own value scale (0..255 for
uint8 photos); the model's preprocessing belongs to :class:`ImageModel`.
"""

# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from ._shapes import check_image_shape, image_ndim

__all__ = ["is_image_batch", "read_images"]


def is_image_batch(X):
    """Whether X is a batch of images (3-D or 4-D), not rows of a table."""
    return image_ndim(X) in (3, 4)


def read_images(X, image_shape=None, what="X", dtype=np.float32):
    """Images or flattened image rows as float32 rows, with their shape.

    Parameters
    ----------
    X : array-like of shape (n, H, W), (n, H, W, C) or (n, H * W * C)
        Images, uint8, bool or float; flattened rows need ``image_shape``.
    image_shape : tuple of int or None, default=None
        The expected (H, W) or (H, W, C), e.g. the shape seen in ``fit``;
        images of another shape are refused.
    what : str, default="X"
        Name of X in error messages.
    dtype : dtype, default=np.float32
        Of the rows (see :func:`image_dtype`).

    Returns
    -------
    rows : ndarray of shape (n, H * W * C)
        A new array: the images flattened in C order (row, column, channel).
    image_shape : tuple of int
        (H, W) or (H, W, C).
    """
    arr = np.asarray(X)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(
            f"{what} holds values of dtype {arr.dtype}; images must be numbers "
            "(uint8 or float arrays)."
        )
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{what} holds complex values; images must be real numbers.")
    if arr.ndim in (3, 4):
        shape = tuple(int(s) for s in arr.shape[1:])
        if image_shape is not None and shape != tuple(image_shape):
            expected = tuple(image_shape)
            raise ValueError(
                f"{what} holds images of shape {shape}, but the images seen in fit "
                f"have shape {expected}; "
                + (
                    "resize or crop them to that size."
                    if shape[:2] != expected[:2]
                    else "give them the same channels (grey images have none; "
                    "RGB three)."
                )
            )
    elif arr.ndim == 2:
        if image_shape is None:
            raise ValueError(
                f"{what} is 2-D: flattened images need the image shape; pass the "
                "images as an array of shape (n_images, height, width[, channels])."
            )
        shape = check_image_shape(image_shape, arr.shape[1])
    else:
        raise ValueError(
            f"{what} must hold images of shape (n_images, height, width[, "
            f"channels]), got an array of shape {arr.shape}."
        )
    if arr.shape[0] == 0:
        raise ValueError(f"{what} holds 0 images; give at least one.")
    if len(shape) == 3 and shape[2] > 4:
        raise ValueError(
            f"{what} has images of shape {shape}: {shape[2]} channels. Give images "
            "as (n, H, W, C) with the channels last (C of 1, 3 or 4); for NCHW "
            "arrays, images.transpose(0, 2, 3, 1)."
        )
    rows = np.array(arr.reshape(arr.shape[0], -1), dtype=dtype)
    if np.issubdtype(arr.dtype, np.floating) and not np.isfinite(rows).all():
        bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
        raise ValueError(
            f"{what} has NaN or infinite pixel values in image(s) "
            f"{bad[:10].tolist()}; give finite pixel values."
        )
    return rows, shape
