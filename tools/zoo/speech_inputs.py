"""Writes real speech (Debian alsa-utils' spoken test sounds, resampled to 16 kHz) as an input set
for silero-vad that `infermark run` reads:
  --input input=<out>/silero_vad_speech/input.npy --input state=<out>/silero_vad_speech/state.npy
  --input sr=<out>/silero_vad_speech/sr.npy
input [N, 576] float32 (each 512-sample chunk after the previous chunk's last 64 samples), state
[2, N, 128] float32 (the state a stream reaches before each chunk, from the published ONNX run
chunk after chunk by ONNX Runtime; zeros before the first), sr int64 scalar 16000.
state_zero.npy is the all-zero state (every chunk as if a stream started there), and chunks.json
names each chunk's recording, time, loudness and streamed speech probability (ONNX and the
published .jit)."""
import argparse
import json
import pathlib
import tempfile

import numpy as np

from zoo_packages import extract
from zoo_speech import (CHUNK, DEBIAN_SOUND_PACKAGE, JIT_MEMBER, ONNX_MEMBER, PACKAGE, RATE, SOUND_FOLDER, VERSION,
                        rms_dbfs, speech, stream_jit, stream_onnx, windows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder (the set goes in silero_vad_speech/)")
    args = parser.parse_args()
    folder = args.out / "silero_vad_speech"
    folder.mkdir(parents=True, exist_ok=True)
    deb, starts, audio = speech()
    frames = windows(audio)
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = extract(PACKAGE, VERSION, ONNX_MEMBER, pathlib.Path(tmp) / "silero_vad.onnx")
        streamed, states = stream_onnx(onnx_path, frames)
        jit_streamed = stream_jit(extract(PACKAGE, VERSION, JIT_MEMBER, pathlib.Path(tmp) / "silero_vad.jit"), audio)
    np.save(folder / "input.npy", frames)
    np.save(folder / "state.npy", states)
    np.save(folder / "state_zero.npy", np.zeros_like(states))
    np.save(folder / "sr.npy", np.array(RATE, np.int64))
    loudness = rms_dbfs(frames)
    ends = [first for _, first in starts[1:]] + [len(frames)]
    recordings = [name for (name, first), end in zip(starts, ends) for _ in range(first, end)]
    (folder / "chunks.json").write_text(json.dumps({
        "source": f"Debian {DEBIAN_SOUND_PACKAGE} ({deb}: {SOUND_FOLDER}/{{{','.join(n for n, _ in starts)}}}), "
                  f"48 kHz 16-bit mono, resampled to {RATE} Hz",
        "model": f"PyPI {PACKAGE}=={VERSION}: {ONNX_MEMBER} (streamed by ONNX Runtime) and {JIT_MEMBER}",
        "chunk_samples": CHUNK,
        "chunks": [{"recording": recordings[i], "start_s": round(i * CHUNK / RATE, 3), "rms_dbfs": round(float(loudness[i]), 1),
                    "probability_onnx": round(float(streamed[i]), 6), "probability_jit": round(float(jit_streamed[i]), 6)}
                   for i in range(len(frames))]}, indent=1) + "\n")
    for name in [n for n, _ in starts]:
        mine = np.array([r == name for r in recordings])
        loud = mine & (loudness > -25)
        print(f"  {name}: {mine.sum()} chunks, speech probability > 0.5 in {np.sum(streamed[mine] > 0.5)}, mean "
              f"{streamed[mine].mean():.3f}; {loud.sum()} loud chunks (> -25 dBFS), least probability among them "
              f"{streamed[loud].min() if loud.any() else float('nan'):.3f}; after its first 2 chunks the most "
              f"{streamed[np.flatnonzero(mine)[2:]].max():.3f}")
    print(f"{folder}: {len(frames)} chunks of {CHUNK} samples ({len(frames) * CHUNK / RATE:.2f} s of "
          f"{', '.join(n for n, _ in starts)}); .jit vs ONNX streamed max abs difference "
          f"{np.abs(jit_streamed - streamed).max():.3g}")


if __name__ == "__main__":
    main()
