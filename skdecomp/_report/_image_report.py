"""The image report from end to end: the analysis, its figures and page, written safely.

``skdecomp images`` and ``skdecomp demo --images`` call :func:`image_report`
once the photos are read and the network is loaded
(:mod:`~skdecomp._report._photos`).
"""

# SPDX-License-Identifier: BSD-3-Clause

from ._image_analysis import analyse_photos
from ._image_figures import photo_figures
from ._image_page import render_image_html
from ._output import write_report


def image_report(model, names, images, out_dir, *, title="skdecomp image report",
                 budget=500, random_state=0, log=print, started=None,
                 overwrite=False, model_name="model", preprocess=None):
    """Explain every photo and write ``index.html`` and ``results.json``.

    Parameters
    ----------
    model : CountedImageModel
        From :func:`~skdecomp._report._photos.load_onnx_model`.
    names : list of str
        File names of the photos.
    images : ndarray of uint8, shape (n, H, W, C)
    out_dir : str or path-like
        The report folder (see :func:`~skdecomp._report.check_output`).
    title : str, default="skdecomp image report"
    budget : int, default=500
        Model evaluations of each photo's hierarchical map.
    random_state : int, default=0
    log : callable, default=print
    started : float or None, default=None
        ``time.perf_counter()`` when the work began.
    overwrite : bool, default=False
    model_name : str, default="model"
    preprocess : "none" or tuple, default=None

    Returns
    -------
    results : dict
    out : Path
        The report folder.
    """
    results, arrays = analyse_photos(model, names, images, budget=budget,
                                     random_state=random_state, log=log,
                                     model_name=model_name, preprocess=preprocess)
    figures = photo_figures(results, arrays)
    out = write_report(results, out_dir, title=title, overwrite=overwrite,
                       started=started,
                       html=lambda r: render_image_html(r, figures, title))
    return results, out
