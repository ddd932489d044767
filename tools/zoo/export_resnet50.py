"""torchvision ResNet-50 (random weights, fixed seed, eval mode), 224x224, in every zoo format and
precision: ONNX FP32/FP16/INT8, TorchScript FP32, OpenVINO IR FP32/FP16/INT8.

--dynamic-hw writes the same network and weights as resnet50_dynamic_hw, with height and width
dynamic (160-288, the range of studies/dynamic-shapes.yaml), for the varying-shapes study.

No model hub is reachable, so the weights are random; every parameter and batch-norm statistic
is initialised to realistic, distinct values, because identical tensors make torch's exporter
share them through Identity nodes, which some runtimes (OpenCV DNN 4.6) cannot load.
"""
import torch
import torchvision

from zoo_common import count_gflops, realistic_init
from zoo_inputs import natural_images
from zoo_variants import Component, build_component, exporter_arguments


# The sizes the dynamic-shapes study draws from; any size ResNet-50's strides accept works.
DYNAMIC_HW_RANGE = [160, 288]


def component(seed: int, dynamic_hw: bool = False) -> Component:
    torch.manual_seed(seed)
    model = torchvision.models.resnet50(weights=None)
    realistic_init(model, seed)
    model.eval()
    height, width = ("height", "width") if dynamic_hw else (224, 224)
    return Component(
        stem="resnet50_dynamic_hw" if dynamic_hw else "resnet50", task="image-classification", torch_model=model,
        weights=f"random (torch.manual_seed({seed})), not pretrained",
        inputs=[("input", "float32", ["batch", 3, height, width])], outputs=[("logits", "float32", ["batch", 1000])],
        dim_ranges={"batch": [1, 64], **({"height": DYNAMIC_HW_RANGE, "width": DYNAMIC_HW_RANGE} if dynamic_hw else {})},
        output_kinds={"logits": "scores"},
        sample_inputs=lambda count, s: natural_images(count, s),
        inputs_note="seeded multi-scale synthetic images, ImageNet-normalised",
        gflops=count_gflops(model, torch.randn(1, 3, 224, 224)))


def main() -> None:
    parser = exporter_arguments(__doc__)
    parser.add_argument("--dynamic-hw", action="store_true", help="height and width dynamic (resnet50_dynamic_hw)")
    args = parser.parse_args()
    build_component(component(args.seed, args.dynamic_hw), args.out, args.formats, args.precisions)


if __name__ == "__main__":
    main()
