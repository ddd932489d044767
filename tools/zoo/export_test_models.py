"""Small ONNX models the test suite runs on real frameworks (seconds, not minutes).

- tiny_cnn.onnx: conv + BN + ReLU + pool + linear classifier, dynamic batch, 3x32x32 input.
- tiny_cnn_dynamic_hw.onnx: the same network with dynamic height and width, which the harness
  cannot feed without an explicit --shape.
"""
import argparse
import pathlib

import torch

from zoo_common import export_onnx, realistic_init, write_manifest


class TinyCnn(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 16, 3, padding=1, stride=2), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        self.classifier = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(self.features(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()

    torch.manual_seed(7)
    model = TinyCnn()
    realistic_init(model, 7)
    model.eval()
    example = torch.randn(1, 3, 32, 32)
    outputs = [("logits", "float32", ["batch", 10])]

    fixed = [("input", "float32", ["batch", 3, 32, 32])]
    path = export_onnx(model, example, args.out / "tiny_cnn.onnx", fixed, outputs)
    write_manifest(args.out / "tiny_cnn.json", name="tiny_cnn", task="image-classification",
                   files={"onnx": path}, inputs=fixed, outputs=outputs, weights="random (seed 7)")

    dynamic = [("input", "float32", ["batch", 3, "height", "width"])]
    path = export_onnx(model, example, args.out / "tiny_cnn_dynamic_hw.onnx", dynamic, outputs)
    write_manifest(args.out / "tiny_cnn_dynamic_hw.json", name="tiny_cnn_dynamic_hw",
                   task="image-classification", files={"onnx": path}, inputs=dynamic,
                   outputs=outputs, weights="random (seed 7)")


if __name__ == "__main__":
    main()
