"""Real photographs for the image classifiers: Debian opencv-doc's sample photos, preprocessed the
way EfficientNet-Lite was trained (shorter side to 256, 224x224 centre crop, RGB, (x - 127) / 128,
NCHW), and the small labelled set tools/zoo/eval/imagenet_labelled.json lists. NumPy and Pillow only."""
import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
LABELLED = HERE / "eval" / "imagenet_labelled.json"
SIZE, RESIZE = 224, 256


def labelled_set() -> dict:
    return json.loads(LABELLED.read_text())


def opencv_doc_folder(folder: str) -> pathlib.Path:
    """`folder` of Debian's opencv-doc, or exit saying how to install it."""
    path = pathlib.Path(folder)
    if not path.is_dir():
        raise SystemExit(f"{path}: no such folder; the photos come from Debian's opencv-doc "
                         "(scripts/setup installs it: apt-get install opencv-doc)")
    return path


def photo_folder() -> pathlib.Path:
    return opencv_doc_folder(labelled_set()["folder"])


def preprocess(path: pathlib.Path) -> np.ndarray:
    """One photo as a [3, 224, 224] float32 array: shorter side to 256 (bilinear), centre crop,
    RGB, (x - 127) / 128."""
    from PIL import Image

    image = Image.open(path).convert("RGB")
    width, height = image.size
    scale = RESIZE / min(width, height)
    image = image.resize((max(SIZE, round(width * scale)), max(SIZE, round(height * scale))), Image.BILINEAR)
    width, height = image.size
    left, top = (width - SIZE) // 2, (height - SIZE) // 2
    image = image.crop((left, top, left + SIZE, top + SIZE))
    return ((np.asarray(image, dtype=np.float32) - 127.0) / 128.0).transpose(2, 0, 1).copy()


def labelled_images() -> tuple:
    """The labelled set as ([N, 3, 224, 224] float32, [N] class indices, file names)."""
    entries = labelled_set()["images"]
    folder = photo_folder()
    images = np.stack([preprocess(folder / e["file"]) for e in entries])
    return images, [int(e["label"]) for e in entries], [e["file"] for e in entries]


def unlabelled_photos() -> list:
    """Every other photo of the folder (sorted), for calibration and FP32 agreement checks."""
    labelled = {e["file"] for e in labelled_set()["images"]}
    return [p for p in sorted(photo_folder().iterdir())
            if p.suffix.lower() in (".jpg", ".png") and p.name not in labelled]


def photo_feeds(count: int, seed: int, name: str = "input") -> list:
    """`count` feeds of one unlabelled photo each, drawn without replacement by `seed`."""
    photos = unlabelled_photos()
    order = np.random.default_rng(seed).permutation(len(photos))[:count]
    return [{name: preprocess(photos[i])[None]} for i in order]
