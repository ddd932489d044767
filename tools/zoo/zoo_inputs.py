"""Fixed, seeded inputs for calibration and accuracy checks: natural-looking images, token
batches, and images of rendered text (for the OCR models). NumPy and Pillow only."""
import numpy as np

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)


def _upsample(noise: np.ndarray, size: int) -> np.ndarray:
    reps = -(-size // noise.shape[-1])
    return np.repeat(np.repeat(noise, reps, axis=-2), reps, axis=-1)[..., :size, :size]


def natural_images(count: int, seed: int, size: int = 224, name: str = "input", batch: int = 1) -> list:
    """Images with structure at several scales (coarse blobs, edges and fine texture), pixel
    values in [0, 1], then ImageNet-normalised: closer to photographs than white noise."""
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        image = sum(_upsample(rng.random((batch, 3, cells, cells), dtype=np.float32), size) * weight
                    for cells, weight in ((4, 0.45), (16, 0.3), (56, 0.15), (size, 0.1)))
        feeds.append({name: ((image - IMAGENET_MEAN) / IMAGENET_STD).astype(np.float32)})
    return feeds


def token_batches(count: int, seed: int, *, vocab: int, seq: int, first_word: int, cls: int, sep: int,
                  pad: int = 0, with_token_types: bool = True, batch: int = 1) -> list:
    """BERT-style sequences: [CLS] words [SEP] then padding, a random length per sequence, the
    attention mask marking real tokens and (optionally) a second segment in the token types."""
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        ids = np.full((batch, seq), pad, np.int64)
        mask = np.zeros((batch, seq), np.int64)
        types = np.zeros((batch, seq), np.int64)
        for row in range(batch):
            length = int(rng.integers(seq // 8, seq + 1))
            ids[row, :length] = rng.integers(first_word, vocab, length)
            ids[row, 0], ids[row, length - 1] = cls, sep
            mask[row, :length] = 1
            types[row, length // 2:length] = 1
        feeds.append({"input_ids": ids, "attention_mask": mask, **({"token_type_ids": types} if with_token_types else {})})
    return feeds


TEXT_LINES = ["infermark 2026", "Model zoo: ONNX, OpenVINO, TFLite", "The quick brown fox jumps over the lazy dog",
              "Invoice no. 4711 - total 129.90 EUR", "Latency P99 below 20 ms", "Hello, world!", "ResNet-50 224x224",
              "OCR detection and recognition", "BERT-base, seq_len 128", "Paris is the capital of France"]


def _font(size: int):
    from PIL import ImageFont

    try:  # Pillow searches the system's font folders for it (Debian: fonts-dejavu-core)
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default()


def text_page(rng: np.random.Generator, width: int, height: int):
    """A light page with a few dark lines of text at random places and sizes (a PIL image)."""
    from PIL import Image, ImageDraw

    page = Image.new("RGB", (width, height), tuple(int(v) for v in rng.integers(200, 256, 3)))
    draw = ImageDraw.Draw(page)
    for i in range(int(rng.integers(3, 7))):
        y = int((i + 0.2) * height / 7)
        draw.text((int(rng.integers(5, width // 4)), y), TEXT_LINES[int(rng.integers(len(TEXT_LINES)))],
                  fill=tuple(int(v) for v in rng.integers(0, 80, 3)), font=_font(int(rng.integers(18, 34))))
    return page


def _paddle_normalise(image) -> np.ndarray:
    """HWC uint8 RGB -> 1x3xHxW float32 scaled to [-1, 1], as the PaddleOCR models expect."""
    array = np.asarray(image, np.float32).transpose(2, 0, 1) / 255.0
    return ((array - 0.5) / 0.5)[None].astype(np.float32)


def text_pages(count: int, seed: int, size: int = 320) -> list:
    """Rendered pages for text detection, size x size."""
    rng = np.random.default_rng(seed)
    return [{"x": _paddle_normalise(text_page(rng, size, size))} for _ in range(count)]


def text_lines(count: int, seed: int, height: int = 48, width: int = 320) -> list:
    """Single rendered text lines for recognition, height x width, text left-aligned."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(count):
        line = Image.new("RGB", (width, height), tuple(int(v) for v in rng.integers(200, 256, 3)))
        ImageDraw.Draw(line).text((4, 8), TEXT_LINES[int(rng.integers(len(TEXT_LINES)))][:26],
                                  fill=tuple(int(v) for v in rng.integers(0, 80, 3)), font=_font(24))
        feeds.append({"x": _paddle_normalise(line)})
    return feeds
