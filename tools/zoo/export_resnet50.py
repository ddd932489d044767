"""torchvision ResNet-50 (random weights, fixed seed, eval mode), 224x224, in every zoo format and
precision: ONNX FP32/FP16/INT8, TorchScript FP32, OpenVINO IR FP32/FP16/INT8.

No model hub is reachable, so the weights are random; every parameter and batch-norm statistic
is initialised to realistic, distinct values, because identical tensors make torch's exporter
share them through Identity nodes, which some runtimes (OpenCV DNN 4.6) cannot load.
"""
import torch
import torchvision

from zoo_common import count_gflops, realistic_init
from zoo_inputs import natural_images
from zoo_variants import Component, build_component, exporter_arguments


def component(seed: int) -> Component:
    torch.manual_seed(seed)
    model = torchvision.models.resnet50(weights=None)
    realistic_init(model, seed)
    model.eval()
    return Component(
        stem="resnet50", task="image-classification", torch_model=model,
        weights=f"random (torch.manual_seed({seed})), not pretrained",
        inputs=[("input", "float32", ["batch", 3, 224, 224])], outputs=[("logits", "float32", ["batch", 1000])],
        dim_ranges={"batch": [1, 64]}, output_kinds={"logits": "scores"},
        sample_inputs=lambda count, s: natural_images(count, s),
        inputs_note="seeded multi-scale synthetic images, ImageNet-normalised",
        gflops=count_gflops(model, torch.randn(1, 3, 224, 224)))


def main() -> None:
    args = exporter_arguments(__doc__).parse_args()
    build_component(component(args.seed), args.out, args.formats, args.precisions)


if __name__ == "__main__":
    main()
