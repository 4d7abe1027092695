"""Explain a folder of photos with dask: one task a photo, the network loaded once per worker."""

import functools
import threading

import dask
import numpy as np

from skdecomp import AdaptiveGrouper, Explainer
from skdecomp.datasets import load_pretrained_cnn, load_sample_photos

# the photos, as arrays; for a folder: [np.asarray(PIL.Image.open(p).convert("RGB")
# .resize((224, 224))) for p in sorted(Path("photos").glob("*.jpg"))]
photos = load_sample_photos(names=["espresso", "rocket", "daisy"]).images


_loading = threading.Lock()


@functools.lru_cache(maxsize=None)
def _load():
    return load_pretrained_cnn(runtime="onnx", n_threads=1)


def network():
    # the first task of each worker process loads the network; the others, in
    # the same process (threads too), reuse it
    with _loading:
        return _load()


def explain(photo, n_samples=200):
    """The predicted class and its Owen map (H, W): at most n_samples evaluations."""
    cnn = network()
    target = int(np.argmax(cnn.predict(photo[None])[0]))
    explainer = Explainer(cnn, method="owen", hierarchy=AdaptiveGrouper(),
                          baseline="blur", target=target, n_samples=n_samples)
    explanation = explainer.fit(photo[None]).explain(photo[None], methods=["owen"])
    return target, explanation["owen"].to_image()[0]


tasks = [dask.delayed(explain)(photo) for photo in photos]  # one task a photo
results = dask.compute(*tasks)  # on a cluster: the same, with a dask.distributed Client
