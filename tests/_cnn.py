"""Small CNNs for the image-model tests: torch modules and their ONNX exports."""

import warnings

import numpy as np


def small_cnn(n_classes=5, channels=3, seed=0):
    """A tiny NCHW convolutional classifier in eval mode (logits out)."""
    import torch

    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(channels, 6, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(6, 8, 3, padding=1, stride=2),
        torch.nn.Tanh(),
        torch.nn.AdaptiveAvgPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(32, n_classes),
    )
    return net.eval()


def nhwc_module(module):
    """The module taking NHWC input (permuted inside)."""
    import torch

    class NHWC(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x.permute(0, 3, 1, 2))

    return NHWC(module).eval()


def onnx_session(module, input_shape, path):
    """Export ``module`` with a dynamic batch axis and open it with ONNX Runtime."""
    import onnxruntime as ort
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module, torch.zeros((1, *input_shape)), str(path), input_names=["x"],
            output_names=["y"], dynamic_axes={"x": {0: "n"}, "y": {0: "n"}},
            dynamo=False,
        )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def photos(n=2, size=32, channels=3, seed=0, dtype=np.uint8):
    """Random smooth "photos": uint8 0..255 or float 0..1."""
    rng = np.random.default_rng(seed)
    from scipy.ndimage import gaussian_filter

    raw = rng.uniform(0, 255, size=(n, size, size, channels))
    raw = gaussian_filter(raw, sigma=(0, 2, 2, 0))
    raw = (raw - raw.min()) / (raw.max() - raw.min()) * 255
    imgs = raw.round().astype(np.uint8)
    if channels == 1:
        imgs = imgs[..., 0]
    return imgs if dtype == np.uint8 else imgs.astype(dtype) / 255.0
