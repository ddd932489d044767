"""tinynet: the tests' small classifier (tiny_cnn's architecture: conv + BN + ReLU twice, pooling,
linear; 3x32x32 in, 10 logits out; random weights, seed 7) in every zoo format and precision.
It goes through exactly the steps the large models do, in seconds, so the zoo's tests can build
it end to end."""
import torch

from export_test_models import TinyCnn
from zoo_common import realistic_init
from zoo_inputs import natural_images
from zoo_variants import Component, build_component, exporter_arguments

SEED = 7


def component() -> Component:
    torch.manual_seed(SEED)
    model = TinyCnn()
    realistic_init(model, SEED)
    model.eval()
    return Component(
        stem="tinynet", task="image-classification", torch_model=model, weights=f"random (seed {SEED})",
        inputs=[("input", "float32", ["batch", 3, 32, 32])], outputs=[("logits", "float32", ["batch", 10])],
        dim_ranges={"batch": [1, 64]}, output_kinds={"logits": "scores"},
        sample_inputs=lambda count, s: natural_images(count, s, size=32),
        inputs_note="seeded multi-scale synthetic 32x32 images", calibration_count=8, evaluation_count=16)


def main() -> None:
    args = exporter_arguments(__doc__).parse_args()
    build_component(component(), args.out, args.formats, args.precisions)


if __name__ == "__main__":
    main()
