"""Images and image models: the one room the rest of the package reads.

``_shapes``: image shapes, label maps of pixel groups, region adjacency and
baselines. ``_colour_tree``: a binary partition tree of an image's pixels
by colour and position, with no model call. ``_input``: images as they are (uint8 or float, (n, H, W[, C]))
read into float32 rows. ``_model``: :class:`ImageModel`, the adapter of a
PyTorch module, an ONNX Runtime session or a callable on images.
``_runtime``: which runtime a model is, ``clone`` sharing it, an ONNX
session run on images (fixed batch sizes, flattened inputs), pickled and
deep-copied.
"""

# SPDX-License-Identifier: BSD-3-Clause

from ._colour_tree import ColourTree, colour_tree, lab_colours
from ._input import is_image_batch, read_images
from ._model import (
    ImageFunction,
    ImageModel,
    SharedRuntimeCloneMixin,
    image_dtype,
    image_model,
    is_image_runtime,
    runtime_of,
    wrap_runtime,
)
from ._shapes import *  # noqa: F401,F403
from ._shapes import __all__ as _shapes_all

__all__ = ["ColourTree", "colour_tree", "lab_colours", "ImageFunction", "ImageModel", "image_dtype", "image_model", "is_image_batch", "is_image_runtime", "read_images",
           "runtime_of", "SharedRuntimeCloneMixin", "wrap_runtime", *_shapes_all]
