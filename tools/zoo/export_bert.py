"""BERT-base (12 layers, 768 hidden, 12 heads, 30522-token vocabulary) as defined by Hugging Face
transformers' BertModel(BertConfig()), random weights with a fixed seed (no hub is reachable), in
ONNX FP32/FP16/INT8, TorchScript FP32 and OpenVINO IR FP32/FP16/INT8.

Inputs input_ids / attention_mask / token_type_ids [batch, sequence] (the seeds benchmark
sequence 128; dynamic up to 512); outputs last_hidden_state [batch, sequence, 768] and
pooler_output [batch, 768].
"""
import torch
from transformers import BertConfig, BertModel

from zoo_common import realistic_init
from zoo_inputs import token_batches
from zoo_variants import Component, build_component, exporter_arguments

SEQUENCE = 128  # the seeds' benchmark length; calibration and accuracy inputs use it


class BertEncoder(torch.nn.Module):
    """BertModel with positional inputs and tuple outputs, as the exporters want them."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=True)

    def forward(self, input_ids, attention_mask, token_type_ids):
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                        return_dict=False)
        return out[0], out[1]


def component(seed: int) -> Component:
    torch.manual_seed(seed)
    config = BertConfig()  # bert-base-uncased's architecture
    model = BertEncoder(config)
    realistic_init(model, seed)
    model.eval()
    vocab = config.vocab_size
    tokens = ["batch", "sequence"]
    return Component(
        stem="bert_base", task="text-embedding", torch_model=model, nncf_model_type="transformer",
        weights=f"random (transformers BertModel(BertConfig()) initialisation, torch.manual_seed({seed})), not pretrained",
        inputs=[("input_ids", "int64", tokens, (0, vocab)), ("attention_mask", "int64", tokens, (0, 2)),
                ("token_type_ids", "int64", tokens, (0, 2))],
        outputs=[("last_hidden_state", "float32", ["batch", "sequence", config.hidden_size]),
                 ("pooler_output", "float32", ["batch", config.hidden_size])],
        dim_ranges={"batch": [1, 64], "sequence": [1, config.max_position_embeddings]},
        output_kinds={"last_hidden_state": "embedding", "pooler_output": "embedding"},
        sample_inputs=lambda count, s: token_batches(count, s, vocab=vocab, seq=SEQUENCE, first_word=1996, cls=101, sep=102),
        inputs_note=f"seeded token sequences of {SEQUENCE} ([CLS] words [SEP], random length, padding masked)",
        extra={"architecture": {"family": "bert", "n_layer": config.num_hidden_layers, "hidden": config.hidden_size,
                                "heads": config.num_attention_heads, "vocab": vocab,
                                "transformers_version": __import__("transformers").__version__},
               "benchmark_shape": {"sequence": SEQUENCE}})


def main() -> None:
    args = exporter_arguments(__doc__).parse_args()
    build_component(component(args.seed), args.out, args.formats, args.precisions)


if __name__ == "__main__":
    main()
