#!/usr/bin/env python3
"""Downloads one source distribution from the Python package index pip is configured with.

Used where `pip download` cannot fetch an sdist: ncnn's sdist computes its version from the build
date, so pip's metadata check refuses every release but today's. The file is named exactly and
its sha256 checked, so what is built is what was pinned.

Usage: fetch_sdist.py PROJECT FILENAME SHA256 DEST_DIR
"""

import hashlib
import json
import os
import subprocess
import sys
import urllib.request


def index_url():
    """pip's configured index (PIP_INDEX_URL or pip.conf), else pip's own default."""
    configured = os.environ.get("PIP_INDEX_URL")
    if not configured:
        done = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                              capture_output=True, text=True)
        configured = done.stdout.strip() if done.returncode == 0 else ""
    if not configured:
        from pip._internal.models.index import PyPI
        configured = PyPI.simple_url
    return configured.rstrip("/")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.strip().splitlines()[-1])
    project, filename, sha256, dest = sys.argv[1:]
    request = urllib.request.Request(f"{index_url()}/{project}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        files = json.load(response)["files"]
    match = [f for f in files if f["filename"] == filename]
    if not match:
        sys.exit(f"fetch_sdist: {project}: the index has no file {filename}")
    os.makedirs(dest, exist_ok=True)
    path = os.path.join(dest, filename)
    with urllib.request.urlopen(match[0]["url"], timeout=600) as response, open(path + ".part", "wb") as out:
        digest = hashlib.sha256()
        for block in iter(lambda: response.read(1 << 20), b""):
            digest.update(block)
            out.write(block)
    if digest.hexdigest() != sha256:
        os.remove(path + ".part")
        sys.exit(f"fetch_sdist: {filename}: sha256 {digest.hexdigest()}, expected {sha256}")
    os.replace(path + ".part", path)
    print(path)


if __name__ == "__main__":
    main()
