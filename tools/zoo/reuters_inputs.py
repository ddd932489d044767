"""Writes Reuters-21578 articles (Debian r-cran-tm), tokenized with all-MiniLM-L6-v2's own
tokenizer.json (from its Maven jar) to 128 tokens, as an input set `infermark run` reads:
  --input input_ids=<out>/reuters_minilm/input_ids.npy --input attention_mask=<out>/reuters_minilm/attention_mask.npy
  --input token_type_ids=<out>/reuters_minilm/token_type_ids.npy
([N, 128] int64 each), and texts.json beside them naming each article's file and text."""
import argparse
import json
import pathlib

import numpy as np

from zoo_text import DEBIAN_TEXT_PACKAGE, JARS, MAVEN_GROUP, MAVEN_VERSION, MEMBERS, article_set


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="output folder (the set goes in reuters_minilm/)")
    parser.add_argument("--count", type=int, default=32, help="articles (each at least 128 tokens long)")
    args = parser.parse_args()
    folder = args.out / "reuters_minilm"
    folder.mkdir(parents=True, exist_ok=True)
    deb, chosen, feeds = article_set(args.count)
    for name, array in feeds.items():
        np.save(folder / f"{name}.npy", array)
    (folder / "texts.json").write_text(json.dumps({
        "source": f"Reuters-21578 articles as Debian {DEBIAN_TEXT_PACKAGE} ships them ({deb}: texts/crude, texts/acq)",
        "tokenizer": f"{MAVEN_GROUP}:{JARS['fp32']}:{MAVEN_VERSION}!{MEMBERS['fp32'][1]}",
        "sequence": int(feeds["input_ids"].shape[1]),
        "articles": [{"file": f, "text": t} for f, t in chosen]}, indent=1) + "\n")
    print(f"{folder}: {len(chosen)} Reuters articles x {feeds['input_ids'].shape[1]} tokens")


if __name__ == "__main__":
    main()
