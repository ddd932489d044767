"""What tests and tools that run NVIDIA's aiperf share.

aiperf counts tokens with a Hugging Face tokenizer it would otherwise download. Offline, a local one
is built: a byte-level tokenizer (256 byte tokens, no merges: any text tokenizes) saved with
`PreTrainedTokenizerFast.save_pretrained` plus a `config.json`. It only shapes aiperf's own prompt
accounting: with `--use-server-token-count` output token counts come from the server's `usage`.
"""

import os
import subprocess

MAKE_TOKENIZER = r"""
import json, os, sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
vocab["<|endoftext|>"] = len(vocab)
tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tokenizer.decoder = decoders.ByteLevel()
PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>").save_pretrained(sys.argv[1])
with open(os.path.join(sys.argv[1], "config.json"), "w") as f:
    json.dump({"model_type": "gpt2", "vocab_size": len(vocab)}, f)
"""


def make_tokenizer(aiperf_venv, directory):
    """Writes the local tokenizer into `directory` with the aiperf venv's Python."""
    subprocess.run([os.path.join(aiperf_venv, "bin", "python"), "-c", MAKE_TOKENIZER, directory], check=True,
                   capture_output=True, timeout=120)
    return directory


def aiperf_environment():
    """This process's environment without HF_HUB_OFFLINE: with it set, aiperf 0.13 takes the local
    tokenizer path for a hub repo id and fails."""
    environment = dict(os.environ)
    environment.pop("HF_HUB_OFFLINE", None)
    return environment
