"""silero-vad, the voice activity detector, with its published files from PyPI silero-vad 6.2.3
(MIT): the ONNX (opset 16) as published, and a TorchScript file made of the published .jit's
own networks, and an OpenVINO IR of the wheel's opset-18 export of the same network
(silero_vad_op18_ifless.onnx: OpenVINO cannot convert silero_vad.onnx's nested If branches).

- inputs: input [batch, 576] float32 (a 512-sample chunk of 16 kHz audio after the previous
  chunk's last 64 samples), state [2, batch, 128] float32 (the recurrent state before the chunk;
  zeros at the start of a stream), sr int64 scalar (16000; 8000 selects the 8 kHz network);
- outputs: output [batch, 1] (speech probability), stateN [2, batch, 128] (the next state).

The published silero_vad.jit's forward(x [batch, 512], sr: int) keeps the 64-sample context and
the state inside the module between calls, so repeating one query would feed each call the state
the previous one left. silero_vad.pt scripts a stateless forward(input, state, sr: int) around the
.jit's two networks (`_model`, 16 kHz, and `_model_8k`: the modules the .jit's forward calls, code
and weights unchanged), taking the same inputs as the ONNX. LibTorch passes sr as a Python int
(the backend reads the argument's type from the forward schema). The manifest records how far
the .jit streamed as users call it, the ONNX and the .pt are apart on real speech."""
import importlib.metadata
import pathlib
from typing import Tuple

import numpy as np
import torch

from zoo_common import write_manifest
from zoo_files import sha256
from zoo_packages import extract, wheel
from zoo_speech import (DEBIAN_SOUND_PACKAGE, IFLESS_MEMBER, JIT_MEMBER, LICENSE_MEMBER, ONNX_MEMBER, PACKAGE, RATE, SOUND_FOLDER,
                        VERSION, speech, stream_jit, stream_onnx, windows)
from zoo_variants import exporter_arguments, run_onnx, run_openvino

STEM = "silero_vad"
INPUTS = [("input", "float32", ["batch", 576]), ("state", "float32", [2, "batch", 128]),
          ("sr", "int64", [], (RATE, RATE + 1))]
OUTPUTS = [("output", "float32", ["batch", 1]), ("stateN", "float32", [2, "batch", 128])]
DIMS = {"batch": [1, 1024]}


class Stateless(torch.nn.Module):
    """The published .jit's 16 kHz and 8 kHz networks behind a forward without hidden state."""

    def __init__(self, published: torch.jit.ScriptModule) -> None:
        super().__init__()
        self.model_16k = published._model
        self.model_8k = published._model_8k

    def forward(self, input: torch.Tensor, state: torch.Tensor, sr: int) -> Tuple[torch.Tensor, torch.Tensor]:
        if sr == 16000:
            out, next_state = self.model_16k(input, state)
        elif sr == 8000:
            out, next_state = self.model_8k(input, state)
        else:
            raise ValueError("silero-vad reads 16000 or 8000 Hz audio")
        return out, next_state


def ir_in_onnx_order(ifless: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The opset-18 export as OpenVINO IR with its inputs in silero_vad.onnx's order (input, state,
    sr; the export has sr second): infermark draws random inputs in the order a model declares."""
    import openvino as ov

    model = ov.convert_model(str(ifless))
    by_name = {p.get_friendly_name(): p for p in model.get_parameters()}
    ordered = ov.Model(model.get_results(), [by_name[name] for name, *_ in INPUTS], model.get_friendly_name())
    ov.save_model(ordered, str(out), compress_to_fp16=False)
    return out


def main() -> None:
    args = exporter_arguments(__doc__).parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    onnx_path = extract(PACKAGE, VERSION, ONNX_MEMBER, args.out / f"{STEM}.onnx")
    jit_path = extract(PACKAGE, VERSION, JIT_MEMBER, args.out / f"{STEM}.published.jit")
    published_sha = {"onnx": sha256(onnx_path), "jit": sha256(jit_path)}
    deb, starts, audio = speech()
    frames = windows(audio)
    streamed, states = stream_onnx(onnx_path, frames)
    jit_streamed = stream_jit(jit_path, audio)
    files = {}
    checks = {"audio": f"{len(frames)} chunks of 512 samples: {', '.join(n for n, _ in starts)} from Debian "
                       f"{DEBIAN_SOUND_PACKAGE} ({deb}: {SOUND_FOLDER}), 48 kHz resampled to 16 kHz",
              "published_jit_streamed_vs_onnx_streamed_max_abs_difference": float(np.abs(jit_streamed - streamed).max())}
    if "torchscript" in args.formats:
        print(f"  {STEM}: TorchScript (the published .jit's networks, torch.jit.script)", flush=True)
        scripted = torch.jit.script(Stateless(torch.jit.load(str(jit_path), map_location="cpu").eval()))
        scripted.save(str(args.out / f"{STEM}.pt"))
        with torch.no_grad():
            batch, _ = torch.jit.load(str(args.out / f"{STEM}.pt"))(torch.from_numpy(frames), torch.from_numpy(states), RATE)
        checks["pt_batch_with_streamed_states_vs_onnx_streamed_max_abs_difference"] = float(
            np.abs(batch.numpy()[:, 0] - streamed).max())
        files["torchscript"] = args.out / f"{STEM}.pt"
    if "openvino-ir" in args.formats:
        print(f"  {STEM}: OpenVINO IR (openvino.convert_model of {IFLESS_MEMBER})", flush=True)
        ifless = extract(PACKAGE, VERSION, IFLESS_MEMBER, args.out / f"{STEM}.ifless.onnx")
        published_sha["op18_ifless_onnx"] = sha256(ifless)
        feed = {"input": frames, "state": states, "sr": np.array(RATE, np.int64)}
        checks["op18_ifless_onnx_vs_onnx_streamed_max_abs_difference"] = float(
            np.abs(run_onnx(ifless, [feed])[0][0][:, 0] - streamed).max())
        files["openvino-ir"] = ir_in_onnx_order(ifless, args.out / f"{STEM}.xml")
        ifless.unlink()
        converted, precision = run_openvino(files["openvino-ir"], [feed])
        checks["openvino_ir_vs_onnx_streamed_max_abs_difference"] = float(np.abs(converted[0][0][:, 0] - streamed).max())
        checks["openvino_ir_inference_precision"] = f"{precision} (the CPU plugin's default here)"
    if "onnx" in args.formats:
        files["onnx"] = onnx_path
    else:
        onnx_path.unlink()
    jit_path.unlink()
    licence = extract(PACKAGE, VERSION, LICENSE_MEMBER, args.out / f"{STEM}.LICENSE").read_text().splitlines()[0]
    (args.out / f"{STEM}.LICENSE").unlink()
    extra = {"family": STEM, "precision": "fp32", "onnx_opset": 16, "sample_rate": RATE,
             "source": {"pypi": f"{PACKAGE}=={VERSION}", "wheel": wheel(PACKAGE, VERSION).name, "license": licence,
                        "onnx": {"file": ONNX_MEMBER, "sha256": published_sha["onnx"]},
                        "jit": {"file": JIT_MEMBER, "sha256": published_sha["jit"],
                                "torchscript": "forward(input, state, sr: int) scripted around the .jit's _model and "
                                               "_model_8k (code and weights unchanged) with torch "
                                               f"{importlib.metadata.version('torch')}"},
                        "openvino_ir": {"file": IFLESS_MEMBER, "sha256": published_sha.get("op18_ifless_onnx"),
                                        "converted_with": f"openvino {importlib.metadata.version('openvino')}"}},
             "streaming": "feed each chunk with the state the previous chunk returned (zeros first); a batch of chunks "
                          "with the states a stream had gives each chunk its streamed probability",
             "checks": checks}
    write_manifest(args.out / f"{STEM}.json", name=STEM, task="voice-activity-detection", files=files, inputs=INPUTS,
                   outputs=OUTPUTS, weights=f"pretrained (Silero VAD, {licence}), carried by PyPI {PACKAGE}=={VERSION}",
                   dim_ranges=DIMS, extra=extra)
    print(f"  {STEM}: .jit streamed vs ONNX streamed max abs difference "
          f"{checks['published_jit_streamed_vs_onnx_streamed_max_abs_difference']:.3g}", flush=True)


if __name__ == "__main__":
    main()
