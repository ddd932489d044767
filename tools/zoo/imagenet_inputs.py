"""Writes the labelled ImageNet photos (tools/zoo/eval/imagenet_labelled.json) as an input set
`infermark run --input input=<out>/imagenet_labelled.npy` reads: the [N, 3, 224, 224] float32
batch (EfficientNet-Lite preprocessing) and, beside it, imagenet_labelled.labels.json with one
ImageNet class per row, which makes run report accuracy against the labels (docs/methodology.md)."""
import argparse
import json
import pathlib

import numpy as np

from zoo_images import LABELLED, labelled_images, labelled_set


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    images, labels, files = labelled_images()
    np.save(args.out / "imagenet_labelled.npy", images)
    names = pathlib.Path(labelled_set()["classes"]).read_text().splitlines()
    (args.out / "imagenet_labelled.labels.json").write_text(json.dumps({
        "output": "logits", "labels": labels, "samples": files,
        "classes": [names[i] for i in labels],
        "source": f"tools/zoo/eval/{LABELLED.name} (Debian opencv-doc photos, 224 centre crop, (x-127)/128)"}, indent=2) + "\n")
    print(f"{args.out / 'imagenet_labelled.npy'}: {images.shape[0]} labelled photos")


if __name__ == "__main__":
    main()
