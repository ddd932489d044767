"""silero-vad and real speech for it: the PyPI wheel's files, spoken words from Debian's
alsa-utils (its /usr/share/sounds/alsa test voices, 48 kHz 16-bit mono WAV), resampled to 16 kHz
and cut into the 512-sample chunks the model reads, and the network's own streaming reference.

silero-vad at 16 kHz reads, per chunk, 576 samples (the previous chunk's last 64, then 512 new
ones), a recurrent state [2, batch, 128] and the sample rate; it returns the speech probability
[batch, 1] and the next state. The published ONNX takes exactly that (input, state, sr: int64
scalar); the published TorchScript's forward(x, sr: int) keeps the 64-sample context and the state
inside the module between calls. Chunks fed as one batch with the states the streaming run had
before each of them give each chunk the probability it gets when streamed."""
import pathlib
import subprocess
import tempfile
import wave

import numpy as np

from zoo_packages import debian_package

PACKAGE, VERSION = "silero-vad", "6.2.3"
ONNX_MEMBER, JIT_MEMBER = "silero_vad/data/silero_vad.onnx", "silero_vad/data/silero_vad.jit"
# The same network exported to opset 18 with the sample-rate If at the top only: OpenVINO's ONNX
# front end cannot convert silero_vad.onnx's nested If branches, it converts this one.
IFLESS_MEMBER = "silero_vad/data/silero_vad_op18_ifless.onnx"
LICENSE_MEMBER = f"silero_vad-{VERSION}.dist-info/licenses/LICENSE"
RATE, CHUNK, CONTEXT = 16000, 512, 64
DEBIAN_SOUND_PACKAGE = "alsa-utils"
SOUND_FOLDER = "usr/share/sounds/alsa"
# Two spoken phrases with the pink noise between them: speech, silence and non-speech sound.
RECORDINGS = ("Front_Center.wav", "Noise.wav", "Rear_Right.wav")


def _read_wav(path: pathlib.Path) -> tuple:
    with wave.open(str(path)) as w:
        if w.getsampwidth() != 2 or w.getnchannels() != 1:
            raise SystemExit(f"{path.name}: expected 16-bit mono PCM, got {w.getsampwidth() * 8}-bit x {w.getnchannels()}")
        return w.getframerate(), np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64) / 32768.0


def resample_to_16k(audio: np.ndarray, rate: int) -> np.ndarray:
    """Integer-factor decimation (48 kHz -> 16 kHz): a 129-tap Hamming-windowed sinc low-pass at
    0.9 x the new Nyquist frequency, then every factor-th sample."""
    if rate % RATE:
        raise SystemExit(f"sample rate {rate} Hz is not a multiple of {RATE} Hz")
    factor = rate // RATE
    if factor == 1:
        return audio.astype(np.float32)
    taps = np.arange(129) - 64
    cutoff = 0.9 / factor  # of the input's Nyquist frequency
    kernel = cutoff * np.sinc(cutoff * taps) * np.hamming(taps.size)
    return np.convolve(audio, kernel / kernel.sum(), mode="same")[::factor].astype(np.float32)


def speech() -> tuple:
    """(the .deb's file name, [(recording, first chunk index)], 16 kHz float32 audio of the
    recordings one after another, trimmed to whole 512-sample chunks each)."""
    deb = debian_package(DEBIAN_SOUND_PACKAGE)
    parts, starts, count = [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        for name in RECORDINGS:
            audio = resample_to_16k(*_read_wav(pathlib.Path(tmp) / SOUND_FOLDER / name)[::-1])
            audio = audio[:audio.size // CHUNK * CHUNK]
            parts.append(audio)
            starts.append((name, count))
            count += audio.size // CHUNK
    return deb.name, starts, np.concatenate(parts)


def windows(audio: np.ndarray) -> np.ndarray:
    """[chunks, 576]: each 512-sample chunk after the 64 samples before it (zeros for the first)."""
    padded = np.concatenate([np.zeros(CONTEXT, np.float32), audio])
    chunks = audio.size // CHUNK
    return np.stack([padded[i * CHUNK:i * CHUNK + CONTEXT + CHUNK] for i in range(chunks)]).astype(np.float32)


def stream_onnx(onnx_path: pathlib.Path, frames: np.ndarray) -> tuple:
    """The published ONNX run chunk after chunk as silero-vad's own OnnxWrapper does (state carried
    over, zero at the start): (probabilities [chunks], the state before each chunk [2, chunks, 128])."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    state = np.zeros((2, 1, 128), np.float32)
    probabilities, states = [], []
    for frame in frames:
        states.append(state)
        out, state = session.run(None, {"input": frame[None], "state": state, "sr": np.array(RATE, np.int64)})
        probabilities.append(float(out[0, 0]))
    return np.array(probabilities, np.float32), np.concatenate(states, axis=1)


def stream_jit(jit_path: pathlib.Path, audio: np.ndarray) -> np.ndarray:
    """The published TorchScript as users call it: forward(chunk [1, 512], 16000) chunk after chunk
    from a fresh state; the module keeps its context and state. Probabilities [chunks]."""
    import torch

    model = torch.jit.load(str(jit_path), map_location="cpu").eval()
    model.reset_states()
    with torch.no_grad():
        return np.array([float(model(torch.from_numpy(audio[i:i + CHUNK])[None], RATE)[0, 0])
                         for i in range(0, audio.size, CHUNK)], np.float32)


def rms_dbfs(frames: np.ndarray) -> np.ndarray:
    """Loudness of each chunk's 512 new samples, dB below full scale."""
    return 20 * np.log10(np.sqrt(np.mean(frames[:, CONTEXT:].astype(np.float64) ** 2, axis=1)) + 1e-10)
