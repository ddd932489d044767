"""Two-stage pipelines made by splitting one network in two, so the pipeline's output can be
checked against the whole model's.

- resnet50_encoder.onnx (image -> 2048 pooled features) and resnet50_head.onnx (features ->
  1000 logits): torchvision ResNet-50 with the same seed and initialisation as resnet50.onnx,
  so encoder then head computes what resnet50.onnx computes.
- resnet50_front.onnx (image -> 512x28x28 activations after layer2) and resnet50_back.onnx (->
  1000 logits): the same network cut where the two halves cost about the same, the case where
  pipelining the stages pays.
- tiny_encoder.onnx (3x32x32 image -> 16 features) and tiny_head.onnx (16 -> 10 logits): the
  same split of tiny_cnn (seed 7), for the tests.
"""
import argparse
import pathlib

import torch
import torchvision

from export_test_models import TinyCnn
from zoo_common import export_onnx, realistic_init, write_manifest


class ResNetTrunk(torch.nn.Module):
    """Everything of a torchvision ResNet up to and including global pooling, flattened."""

    def __init__(self, resnet: torch.nn.Module) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu, resnet.maxpool, resnet.layer1,
                                        resnet.layer2, resnet.layer3, resnet.layer4, resnet.avgpool,
                                        torch.nn.Flatten())

    def forward(self, x):
        return self.body(x)


def export_split(out: pathlib.Path, names, first, second, image_shape, features, classes: int, weights: str) -> None:
    """Writes <names[0]>.onnx (image -> features) and <names[1]>.onnx (features -> logits) with
    their manifests; `features` is the shape of the tensor between them, without the batch."""
    # New wrappers start in training mode, and the exporter restores that mode recursively after
    # exporting: a later forward pass would then update the shared batch-norm statistics.
    first.eval()
    second.eval()
    example = torch.randn(1, *image_shape)
    image = [("input", "float32", ["batch", *image_shape])]
    feature_spec = [("features", "float32", ["batch", *features])]
    logits = [("logits", "float32", ["batch", classes])]
    first_path = export_onnx(first, example, out / f"{names[0]}.onnx", image, feature_spec)
    with torch.no_grad():
        example_features = first(example)
    second_path = export_onnx(second, example_features, out / f"{names[1]}.onnx", feature_spec, logits)
    write_manifest(out / f"{names[0]}.json", name=names[0], task="image-feature-extraction",
                   files={"onnx": first_path}, inputs=image, outputs=feature_spec, weights=weights)
    write_manifest(out / f"{names[1]}.json", name=names[1], task="image-classification",
                   files={"onnx": second_path}, inputs=feature_spec, outputs=logits, weights=weights)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder")
    parser.add_argument("--only", choices=["tiny", "resnet50"], help="export one pair only")
    args = parser.parse_args()

    if args.only in (None, "tiny"):
        torch.manual_seed(7)  # as export_test_models.py, so the halves are tiny_cnn's
        tiny = TinyCnn()
        realistic_init(tiny, 7)
        tiny.eval()
        export_split(args.out, ("tiny_encoder", "tiny_head"), tiny.features, tiny.classifier, (3, 32, 32), (16,), 10,
                     "tiny_cnn (seed 7) split after pooling")
    if args.only in (None, "resnet50"):
        torch.manual_seed(0)  # as export_resnet50.py's default seed
        resnet = torchvision.models.resnet50(weights=None)
        realistic_init(resnet, 0)
        resnet.eval()
        weights = "resnet50 (torch.manual_seed(0), not pretrained) split"
        export_split(args.out, ("resnet50_encoder", "resnet50_head"), ResNetTrunk(resnet), resnet.fc, (3, 224, 224),
                     (2048,), 1000, weights + " after global pooling")
        front = torch.nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu, resnet.maxpool, resnet.layer1, resnet.layer2)
        back = torch.nn.Sequential(resnet.layer3, resnet.layer4, resnet.avgpool, torch.nn.Flatten(), resnet.fc)
        export_split(args.out, ("resnet50_front", "resnet50_back"), front, back, (3, 224, 224), (512, 28, 28), 1000,
                     weights + " after layer2")


if __name__ == "__main__":
    main()
