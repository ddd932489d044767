"""CLIP ViT-B/32 as defined by Hugging Face transformers' CLIPModel(CLIPConfig()) (its defaults are
ViT-B/32: 12-layer 768-wide vision transformer on 32x32 patches of a 224x224 image, 12-layer
512-wide text transformer over 77 tokens, 512-d joint embedding), random weights with a fixed
seed (no hub is reachable), as two models, each in ONNX FP32/FP16/INT8, TorchScript FP32 and
OpenVINO IR FP32/FP16/INT8:

- clip_vit_b32_image: pixel_values [batch, 3, 224, 224] -> image_embeds [batch, 512]
- clip_vit_b32_text:  input_ids, attention_mask [batch, sequence <= 77] -> text_embeds [batch, 512]
"""
import torch
from transformers import CLIPConfig, CLIPModel

from zoo_common import realistic_init
from zoo_inputs import natural_images, token_batches
from zoo_variants import Component, build_component, exporter_arguments

BOS, EOS = 49406, 49407  # CLIP's start and end tokens; the text pooling reads the end token's position


class ImageEncoder(torch.nn.Module):
    def __init__(self, clip: CLIPModel) -> None:
        super().__init__()
        self.clip = clip

    def forward(self, pixel_values):
        return self.clip.get_image_features(pixel_values=pixel_values)


class TextEncoder(torch.nn.Module):
    def __init__(self, clip: CLIPModel) -> None:
        super().__init__()
        self.clip = clip

    def forward(self, input_ids, attention_mask):
        return self.clip.get_text_features(input_ids=input_ids, attention_mask=attention_mask)


def components(seed: int) -> list:
    torch.manual_seed(seed)
    config = CLIPConfig()
    clip = CLIPModel(config)
    realistic_init(clip, seed)
    clip.eval()
    weights = f"random (transformers CLIPModel(CLIPConfig()) initialisation, torch.manual_seed({seed})), not pretrained"
    dim = config.projection_dim
    context = config.text_config.max_position_embeddings
    common = dict(task="embedding", weights=weights, nncf_model_type="transformer",
                  extra={"architecture": {"family": "clip", "vision": "ViT-B/32", "projection_dim": dim,
                                          "transformers_version": __import__("transformers").__version__}})
    image = Component(
        stem="clip_vit_b32_image", torch_model=ImageEncoder(clip).eval(),
        inputs=[("pixel_values", "float32", ["batch", 3, 224, 224])],
        outputs=[("image_embeds", "float32", ["batch", dim])], dim_ranges={"batch": [1, 64]},
        output_kinds={"image_embeds": "embedding"},
        sample_inputs=lambda count, s: natural_images(count, s, name="pixel_values"),
        inputs_note="seeded multi-scale synthetic images, normalised", **common)
    tokens = ["batch", "sequence"]
    text = Component(
        stem="clip_vit_b32_text", torch_model=TextEncoder(clip).eval(),
        inputs=[("input_ids", "int64", tokens, (0, config.text_config.vocab_size)),
                ("attention_mask", "int64", tokens, (0, 2))],
        outputs=[("text_embeds", "float32", ["batch", dim])],
        dim_ranges={"batch": [1, 64], "sequence": [1, context]}, output_kinds={"text_embeds": "embedding"},
        sample_inputs=lambda count, s: token_batches(count, s, vocab=BOS, seq=context, first_word=256, cls=BOS,
                                                     sep=EOS, with_token_types=False),
        inputs_note=f"seeded token sequences of {context} (start, words, end token, padding masked)", **common)
    return [image, text]


def main() -> None:
    args = exporter_arguments(__doc__).parse_args()
    for component in components(args.seed):
        build_component(component, args.out, args.formats, args.precisions)


if __name__ == "__main__":
    main()
