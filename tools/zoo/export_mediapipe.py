"""Google's MediaPipe vision models as the PyPI wheel mediapipe 0.10.21 carries them (.tflite,
pretrained, Apache-2.0), copied unchanged with a manifest beside each:

- mediapipe_face_detection: BlazeFace short range (face_detection_short_range.tflite):
  input [1, 128, 128, 3] RGB in [-1, 1] -> regressors [1, 896, 16] (box and 6 keypoints per anchor)
  and classificators [1, 896, 1] (face logit per anchor);
- mediapipe_selfie_segmentation: selfie segmentation (selfie_segmentation.tflite):
  input [1, 256, 256, 3] RGB in [0, 1] -> activation_10 [1, 256, 256, 1] (person probability).

The input and output shapes in the manifests are the ones the files declare, read with LiteRT's
interpreter (ai-edge-litert in .venv), which also runs each file once as a check. With --inputs, a
real photo (opencv-doc's messi5.jpg: a 200x200 crop around the player's head for the face detector,
the whole photo for the segmenter) is written for each model in its preprocessing to
<inputs>/<stem>.npy; the face detector must find a face in it (probability above 0.5) and none in
opencv-doc's fruits.jpg.
"""
import argparse
import json
import pathlib

import numpy as np

from zoo_files import sha256
from zoo_packages import extract, wheel

PACKAGE, VERSION, LICENCE = "mediapipe", "0.10.21", "Apache-2.0"
PHOTO, NO_FACE = "messi5.jpg", "fruits.jpg"
MODELS = {
    "mediapipe_face_detection": {
        "member": "mediapipe/modules/face_detection/face_detection_short_range.tflite",
        "task": "face-detection", "scale": (127.5, 127.5), "crop": (150, 0, 350, 200),  # (x - 127.5) / 127.5
        "summary": "BlazeFace short range: 896 anchors, box + 6 keypoints and a face logit each"},
    "mediapipe_selfie_segmentation": {
        "member": "mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite",
        "task": "image-segmentation", "scale": (0.0, 255.0), "crop": None,  # x / 255: [0, 1]
        "summary": "selfie segmentation: a person probability per pixel"},
}


def declared_io(path: pathlib.Path) -> tuple:
    """([(name, dtype, shape)] of inputs, the same of outputs), as the file declares them; runs the
    model once on zeros so that a file LiteRT cannot run fails here."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    interpreter.invoke()
    specs = lambda details: [(d["name"], np.dtype(d["dtype"]).name, [int(s) for s in d["shape"]]) for d in details]
    return specs(interpreter.get_input_details()), specs(interpreter.get_output_details())


def photo_input(photo: str, shape: list, scale: tuple, crop) -> np.ndarray:
    """An opencv-doc photo (cropped to `crop` if given) resized to the model's [1, H, W, 3] input,
    RGB, (x - offset) / divisor."""
    from PIL import Image

    from zoo_images import photo_folder

    _, height, width, _ = shape
    image = Image.open(photo_folder() / photo).convert("RGB")
    image = (image.crop(crop) if crop else image).resize((width, height), Image.BILINEAR)
    offset, divisor = scale
    return ((np.asarray(image, dtype=np.float32) - offset) / divisor)[None].copy()


def best_face_score(path: pathlib.Path, image: np.ndarray) -> float:
    """The highest face probability (sigmoid of the classificators) the detector gives `image`."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], image)
    interpreter.invoke()
    logits = {d["name"]: interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()}["classificators"]
    return float(1 / (1 + np.exp(-logits.max())))


def manifest(stem: str, path: pathlib.Path, inputs: list, outputs: list, wheel_path: pathlib.Path) -> dict:
    """The manifest; every output is of kind "other" (boxes, logits per anchor, a probability map)."""
    from zoo_common import _manifest

    model = MODELS[stem]
    fields = _manifest(name=stem, task=model["task"], files={"tflite": path}, inputs=inputs, outputs=outputs,
                        weights=f"pretrained (Google MediaPipe), carried by PyPI {PACKAGE}=={VERSION} as "
                                f"{model['member'].rsplit('/', 1)[1]}; licence {LICENCE}",
                        producer={"source": {"package": f"{PACKAGE}=={VERSION}", "file": model["member"],
                                             "wheel": wheel_path.name, "wheel_sha256": sha256(wheel_path),
                                             "licence": LICENCE, "copied_unchanged": True}})
    for spec in fields["outputs"]:
        spec["kind"] = "other"
    return {**fields, "summary": model["summary"], "precision": "fp32", "layout": "NHWC"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="models folder")
    parser.add_argument("--formats", nargs="+", default=["tflite"], choices=["tflite"])
    parser.add_argument("--precisions", nargs="+", default=["fp32"], choices=["fp32"])
    parser.add_argument("--inputs", type=pathlib.Path, help="also write the photo inputs into this folder")
    parser.add_argument("--inputs-only", action="store_true", help="write only the inputs, for the models in --out")
    args = parser.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    for stem, model in MODELS.items():
        path = args.out / f"{stem}.tflite"
        if not args.inputs_only:
            extract(PACKAGE, VERSION, model["member"], path)
        inputs, outputs = declared_io(path)
        if not args.inputs_only:
            text = json.dumps(manifest(stem, path, inputs, outputs, wheel(PACKAGE, VERSION)), indent=2)
            (args.out / f"{stem}.json").write_text(text + "\n")
            print(f"{stem}: {path.stat().st_size} bytes, inputs {inputs}, outputs {outputs}")
        if args.inputs:
            args.inputs.mkdir(parents=True, exist_ok=True)
            image = photo_input(PHOTO, inputs[0][2], model["scale"], model["crop"])
            if stem == "mediapipe_face_detection":
                score = best_face_score(path, image)
                no_face = best_face_score(path, photo_input(NO_FACE, inputs[0][2], model["scale"], None))
                if score < 0.5 or no_face >= 0.5:
                    raise SystemExit(f"{stem}: best face probability {score:.3f} on {PHOTO}, {no_face:.3f} on {NO_FACE}")
                print(f"{stem}: best face probability {score:.3f} on {PHOTO}, {no_face:.3f} on {NO_FACE}")
            np.save(args.inputs / f"{stem}.npy", image)


if __name__ == "__main__":
    main()
