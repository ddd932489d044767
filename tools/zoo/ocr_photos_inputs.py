"""Writes the OCR pipeline's input set (studies/pipeline-ocr.yaml): the scene-text photos listed in
tools/zoo/eval/ocr_photos.json (Debian opencv-doc) as one [N, 3, 640, 640] float32 batch the
PP-OCRv4 detector reads, and beside it the lines each photo shows and the recogniser's symbols.

- ocr_photos.npy: each photo scaled so its longer side is 640 (bilinear), placed top-left on a
  640 x 640 canvas (the rest 0 after normalising, mid grey), BGR as PaddleOCR reads images with
  OpenCV, (x / 255 - 0.5) / 0.5: the recogniser's normalisation, so the handoff crops lines from
  the detector's input as they are. (PaddleOCR's own detector preprocessing uses ImageNet mean and
  standard deviation; DB finds these signs either way, and the pipeline needs one image.)
- ocr_photos.text.json: {"lines": [[line, ...] per photo], ...}.
- ocr_rec.characters.txt: the recogniser's symbols, one a line (class i + 1 is line i; class 0 is
  CTC's blank), from its ONNX metadata property 'character', then the space RapidOCR appends.
"""
import argparse
import json
import pathlib

import numpy as np
import onnx

from zoo_images import opencv_doc_folder

HERE = pathlib.Path(__file__).resolve().parent
PHOTOS = HERE / "eval" / "ocr_photos.json"
SIZE = 640


def load_photo(path: pathlib.Path) -> np.ndarray:
    from PIL import Image

    image = Image.open(path).convert("RGB")
    scale = SIZE / max(image.size)
    image = image.resize((round(image.width * scale), round(image.height * scale)), Image.BILINEAR)
    canvas = np.full((SIZE, SIZE, 3), 127.5, np.float32)
    canvas[:image.height, :image.width] = np.asarray(image, np.float32)
    bgr = canvas[:, :, ::-1]
    return ((bgr / 255.0 - 0.5) / 0.5).transpose(2, 0, 1).astype(np.float32)


def characters(rec_model: pathlib.Path) -> list:
    metadata = {p.key: p.value for p in onnx.load(str(rec_model), load_external_data=False).metadata_props}
    if "character" not in metadata:
        raise SystemExit(f"{rec_model}: no 'character' metadata property (build it with `infermark zoo build ocr`)")
    return metadata["character"].splitlines() + [" "]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder (models/inputs)")
    parser.add_argument("--rec", type=pathlib.Path, required=True, help="the zoo's ocr_rec.onnx")
    args = parser.parse_args()
    listing = json.loads(PHOTOS.read_text())
    folder = opencv_doc_folder(listing["folder"])
    args.out.mkdir(parents=True, exist_ok=True)
    photos = listing["photos"]
    np.save(args.out / "ocr_photos.npy", np.stack([load_photo(folder / p["file"]) for p in photos]))
    (args.out / "ocr_photos.text.json").write_text(json.dumps({
        "lines": [p["lines"] for p in photos], "samples": [p["file"] for p in photos],
        "source": f"tools/zoo/eval/{PHOTOS.name} (Debian opencv-doc scene-text photos, longer side {SIZE}, "
                  "BGR, (x / 255 - 0.5) / 0.5)"}, indent=2) + "\n")
    (args.out / "ocr_rec.characters.txt").write_text("\n".join(characters(args.rec)) + "\n")
    print(f"{args.out / 'ocr_photos.npy'}: {len(photos)} photos, "
          f"{sum(len(p['lines']) for p in photos)} lines of text")


if __name__ == "__main__":
    main()
