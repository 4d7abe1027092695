"""Photo instances for the image benchmarks: the installed photos and their crops.

The ten colour photos that scikit-image and scikit-learn install inside their
packages (the files of ``skdecomp.datasets.load_sample_photos``; nothing is
downloaded), each cut into several square crops at several scales:

* ``full``: the centre square (side = the shorter side), as load_sample_photos
  gives it;
* ``c23``: the centre square of 2/3 that side;
* ``q1`` .. ``q4``: the four quadrants of the centre square (1/2 its side):
  top left, top right, bottom left, bottom right;
* ``left`` / ``right``: for a photo at least 4:3 wide, the square at its left
  and right edge (side = the height), which ``full`` cuts off.

Crops where the photo's subject is gone (sky, floor, out-of-focus ground) are
left out by name in ``_DROP``, chosen once by looking at the crops. Each crop
is resized to ``size`` x ``size`` with Pillow's bicubic filter (antialiased
when shrinking), as load_sample_photos does; instances with the same pixels
as an earlier one are dropped. The list is deterministic and the same for
every network but its size.
"""

# SPDX-License-Identifier: BSD-3-Clause

import hashlib
from importlib import resources

import numpy as np

# short name, package, file; the order of load_sample_photos
PHOTOS = (
    ("cat", "skimage.data", "chelsea.png"),
    ("espresso", "skimage.data", "coffee.png"),
    ("rocket", "skimage.data", "rocket.jpg"),
    ("motorcycle", "skimage.data", "motorcycle_left.png"),
    ("palace", "sklearn.datasets.images", "china.jpg"),
    ("daisy", "sklearn.datasets.images", "flower.jpg"),
    ("astronaut", "skimage.data", "astronaut.png"),
    ("galaxies", "skimage.data", "hubble_deep_field.jpg"),
    ("retina", "skimage.data", "retina.jpg"),
    ("tissue", "skimage.data", "ihc.png"),
)
CROPS = ("full", "c23", "q1", "q2", "q3", "q4", "left", "right")
# crops without the subject (decided by eye on the contact sheet)
_DROP = frozenset({"rocket@q1", "rocket@q2", "rocket@q3", "rocket@q4", "palace@q2"})


def _boxes(width, height):
    """(left, top, right, bottom) of every crop of a width x height photo."""
    side = min(width, height)
    cx, cy = (width - side) // 2 + side / 2, (height - side) // 2 + side / 2
    boxes = {}

    def square(x0, y0, s):  # floors, as load_sample_photos' centre crop
        x0, y0, s = int(x0), int(y0), int(s)
        return (x0, y0, x0 + s, y0 + s)

    boxes["full"] = square(cx - side / 2, cy - side / 2, side)
    boxes["c23"] = square(cx - side / 3, cy - side / 3, 2 * side / 3)
    x0, y0, h = cx - side / 2, cy - side / 2, side / 2
    boxes["q1"] = square(x0, y0, h)
    boxes["q2"] = square(x0 + h, y0, h)
    boxes["q3"] = square(x0, y0 + h, h)
    boxes["q4"] = square(x0 + h, y0 + h, h)
    if width >= 4 * height / 3:
        boxes["left"] = square(0, 0, height)
        boxes["right"] = square(width - height, 0, height)
    return boxes


def _read(package, filename):
    from PIL import Image

    path = resources.files(package).joinpath(filename)
    if not path.is_file():  # installed files only: never a download
        raise FileNotFoundError(f"{package} does not ship {filename}")
    with Image.open(path) as im:
        return im.convert("RGB") if im.mode != "RGB" else im.copy()


def photo_instances(size=224, names=None):
    """The photo instances: a list of (name, uint8 image of shape (size, size, 3)).

    Ordered crop kind by crop kind (every photo's ``full`` first, then every
    ``c23``, ...), so that the first N instances spread over the photos.
    ``names``: keep only these instance names (e.g. ``["cat@full"]``).
    """
    from PIL import Image

    by_crop = {c: [] for c in CROPS}
    for short, package, filename in PHOTOS:
        im = _read(package, filename)
        for crop, box in _boxes(*im.size).items():
            name = f"{short}@{crop}"
            if name in _DROP:
                continue
            img = im.crop(box).resize((size, size), Image.Resampling.BICUBIC)
            by_crop[crop].append((name, np.asarray(img, dtype=np.uint8)))
    out, seen = [], set()
    for crop in CROPS:
        for name, img in by_crop[crop]:
            digest = hashlib.sha1(img.tobytes()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            out.append((name, img))
    if names is not None:
        table = dict(out)
        missing = [n for n in names if n not in table]
        if missing:
            raise ValueError(f"unknown photo instance(s) {missing}; "
                             f"known: {list(table)}")
        out = [(n, table[n]) for n in names]
    return out


def contact_sheet(path, size=112, columns=8):
    """A PNG of every instance with its name, to choose ``_DROP`` by eye."""
    from PIL import Image, ImageDraw

    items = photo_instances(size)
    rows = -(-len(items) // columns)
    sheet = Image.new("RGB", (columns * size, rows * (size + 14)), "white")
    draw = ImageDraw.Draw(sheet)
    for i, (name, img) in enumerate(items):
        x, y = (i % columns) * size, (i // columns) * (size + 14)
        sheet.paste(Image.fromarray(img), (x, y + 14))
        draw.text((x + 2, y + 1), name, fill="black")
    sheet.save(path)
    return len(items)
