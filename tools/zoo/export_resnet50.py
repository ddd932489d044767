"""Export torchvision ResNet-50 (random weights, fixed seed, eval mode) to ONNX and TorchScript.

No model hub is reachable, so the weights are random; every parameter and batch-norm statistic
is initialised to realistic, distinct values, because identical tensors make torch's exporter
share them through Identity nodes, which some runtimes (OpenCV DNN 4.6) cannot load.
"""
import argparse
import pathlib

import torch
import torchvision

from zoo_common import count_gflops, export_onnx, export_torchscript, realistic_init, write_manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    model = torchvision.models.resnet50(weights=None)
    realistic_init(model, args.seed)
    model.eval()
    example = torch.randn(1, 3, 224, 224)
    inputs = [("input", "float32", ["batch", 3, 224, 224])]
    outputs = [("logits", "float32", ["batch", 1000])]

    files = {
        "onnx": export_onnx(model, example, args.out / "resnet50.onnx", inputs, outputs),
        "torchscript": export_torchscript(model, example, args.out / "resnet50.pt"),
    }
    write_manifest(args.out / "resnet50.json", name="resnet50", task="image-classification",
                   files=files, inputs=inputs, outputs=outputs,
                   weights=f"random (torch.manual_seed({args.seed})), not pretrained",
                   gflops=count_gflops(model, example))


if __name__ == "__main__":
    main()
