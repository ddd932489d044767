"""The model zoo's driver behind `infermark zoo list` and `infermark zoo build`.

list:  every catalog model x format x precision and whether it is built in the models folder
       (files present and their SHA-256 equal to the manifest's).
build: runs the model's exporter for what is missing into a staging folder beside the models
       folder, checks every file against the manifest the exporter wrote, then moves the files
       in (each rename atomic) and writes the manifests last, merged with what was already built.
       A failed or interrupted export leaves nothing in the models folder.

Standard library only: the exporters, which import torch, run as child processes.
"""
import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

from catalog import CATALOG, FORMATS, HERE, PRECISIONS, ROOT
from zoo_files import sha256

STAMPS = ".zoo-verified.json"  # path in the folder -> [size, mtime_ns, sha256] of files whose checksum was verified
STAGING_PREFIX = ".zoo-staging-"


class ZooError(Exception):
    """A user-facing failure: one line saying which and why. Exit code 2 for bad input, 1 for a
    failed export."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# ---- Checksums and cache state -------------------------------------------------------------------

class Verifier:
    """Checks files against manifest checksums, hashing each file version (size, mtime) only once:
    the verified versions are remembered in the models folder, so cached builds answer quickly."""

    def __init__(self, folder: pathlib.Path) -> None:
        self.folder = folder
        try:
            self.stamps = json.loads((folder / STAMPS).read_text())
        except (OSError, ValueError):
            self.stamps = {}
        self.changed = False

    def matches(self, path: pathlib.Path, expected: str) -> bool:
        try:
            st = path.stat()
        except OSError:
            return False
        key = [st.st_size, st.st_mtime_ns]
        stamp = self.stamps.get(self.key(path))
        if stamp and stamp[:2] == key and stamp[2] == expected:
            return True
        actual = sha256(path)
        self.remember(path, actual)
        return actual == expected

    def key(self, path: pathlib.Path) -> str:
        """The file's path in the models folder: model folders (*.genai) hold files of equal names."""
        try:
            return path.relative_to(self.folder).as_posix()
        except ValueError:
            return path.name

    def remember(self, path: pathlib.Path, digest: str) -> None:
        st = path.stat()
        self.stamps[self.key(path)] = [st.st_size, st.st_mtime_ns, digest]
        self.changed = True

    def save(self) -> None:
        if self.changed:
            write_atomically(self.folder / STAMPS, json.dumps(self.stamps, indent=0, sort_keys=True))


def write_atomically(path: pathlib.Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def read_manifest(path: pathlib.Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError as e:
        raise ZooError(f"{path}: malformed manifest ({e})")


def file_entries(entry: dict) -> list:
    """(file name, sha256) of a manifest's file entry, an OpenVINO IR's weights included, or every
    file of a model folder's entry ("members")."""
    if "members" in entry:
        return [(m["path"], m["sha256"]) for m in entry["members"]]
    pairs = [(entry["path"], entry["sha256"])]
    if "weights" in entry:
        pairs.append((entry["weights"]["path"], entry["weights"]["sha256"]))
    return pairs


def variant_state(folder: pathlib.Path, stem: str, fmt: str, verifier: Verifier) -> str:
    """"built", "missing" or "changed" (a file differs from its manifest checksum)."""
    manifest = read_manifest(folder / f"{stem}.json")
    entry = manifest.get("files", {}).get(fmt)
    if not entry:
        return "missing"
    for name, digest in file_entries(entry):
        if not (folder / name).exists():
            return "missing"
        if not verifier.matches(folder / name, digest):
            return "changed"
    return "built"


def entry_state(folder: pathlib.Path, entry, fmt: str, precision: str, verifier: Verifier) -> str:
    states = {variant_state(folder, entry.stem(s, precision), fmt, verifier) for s in entry.stems}
    return "built" if states == {"built"} else ("changed" if "changed" in states else "missing")


# ---- list --------------------------------------------------------------------------------------

def real_weights(entry) -> bool:
    """Whether the model's weights were trained (a package's pretrained weights), not random."""
    return entry.weights.startswith("pretrained")


def list_models(folder: pathlib.Path, as_json: bool) -> int:
    verifier = Verifier(folder)
    rows, document = [], []
    for entry in CATALOG.values():
        cells = {}
        for fmt, precisions in entry.offers.items():
            for p in precisions:
                cells[(fmt, p)] = entry_state(folder, entry, fmt, p, verifier)
                if cells[(fmt, p)] == "missing" and entry.missing_tool(fmt, [p]):
                    cells[(fmt, p)] = "no tool"
            first = fmt == next(iter(entry.offers))
            weights = ("real" if real_weights(entry) else "random") if first else ""
            rows.append([entry.name if first else "", weights, fmt] + [cells.get((fmt, p), "-") for p in PRECISIONS])
        document.append({"name": entry.name, "summary": entry.summary, "weights": entry.weights,
                         "real_weights": real_weights(entry),
                         "files": [entry.stem(s, entry.base_precision if entry.base_precision != "none" else next(iter(entry.offers.values()))[0]) for s in entry.stems],
                         "built_by_setup": not entry.on_demand,
                         "variants": [{"format": f, "precision": p, "state": s} for (f, p), s in cells.items()]})
    verifier.save()
    if as_json:
        print(json.dumps({"models_dir": str(folder), "models": document}, indent=2))
        return 0
    header = ["model", "weights", "format", *PRECISIONS]
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    print(f"models folder: {folder}  (built = files present, SHA-256 as in the manifest; weights: real = pretrained, "
          "random = speed only, accuracy n/a)")
    print(line(header))
    for r in rows:
        print(line(r))
    print()
    for entry in CATALOG.values():
        print(f"{entry.name:<15} {entry.summary}; weights: {entry.weights}"
              f"{'' if entry.on_demand else ' [built by scripts/setup]'}")
    return 0


# ---- build -------------------------------------------------------------------------------------

def choose(requested, offered, kind: str, entry) -> list:
    """The requested formats or precisions (default: all offered), checked against the catalog."""
    if not requested:
        return list(offered)
    known = FORMATS if kind == "format" else PRECISIONS
    for value in requested:
        if value not in known:
            raise ZooError(f"unknown {kind} '{value}' (known: {', '.join(known)})")
        if value not in offered:
            raise ZooError(f"{entry.name} is not offered in {kind} {value} (offered: {', '.join(offered)})")
    return list(dict.fromkeys(requested))


def plan(entry, formats_arg, precisions_arg) -> list:
    """(format, precision) pairs to have. Variants no installed tool can produce are skipped with a
    note, unless their format or precision was asked for by name: then that is an error."""
    formats = choose(formats_arg, list(entry.offers), "format", entry)
    offered_precisions = list(dict.fromkeys(p for f in formats for p in entry.offers[f]))
    precisions = choose(precisions_arg, offered_precisions, "precision", entry)
    pairs, skipped = [], {}
    for fmt in formats:
        for p in [p for p in precisions if p in entry.offers[fmt]]:
            why = entry.missing_tool(fmt, [p])
            if not why:
                pairs.append((fmt, p))
            elif (formats_arg and fmt in formats_arg) or (precisions_arg and p in precisions_arg):
                raise ZooError(f"{entry.name}: {fmt} {p}: {why}")
            else:
                skipped.setdefault(why, []).append(f"{fmt} {p}")
    for why, variants in skipped.items():
        print(f"  skipping {', '.join(variants)}: {why}")
    if not pairs:
        raise ZooError(f"{entry.name}: no variant matches --formats {' '.join(formats)} "
                       f"--precisions {' '.join(precisions)}")
    return pairs


class Interrupted(Exception):
    pass


def _interrupt(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


def remove_stale_staging(folder: pathlib.Path) -> None:
    """Staging folders of builds that were killed before they could clean up."""
    for staging in folder.glob(STAGING_PREFIX + "*"):
        try:
            os.kill(int(staging.name.rsplit("-", 1)[1]), 0)
        except (ValueError, ProcessLookupError):
            shutil.rmtree(staging, ignore_errors=True)
        except PermissionError:
            pass


def run_exporter(entry, staging: pathlib.Path, formats: list, precisions: list) -> None:
    # The installer runs every time (seconds when its venv is current), so that a venv made before
    # the exporter's requirements grew is completed rather than failing in the exporter.
    if entry.installer:
        if not entry.python.exists():
            print(f"{entry.name}: installing its exporter's tools on demand ({entry.installer.relative_to(ROOT)})", flush=True)
        if subprocess.run([str(entry.installer)], stdout=subprocess.DEVNULL).returncode != 0:
            raise ZooError(f"{entry.name}: {entry.installer.relative_to(ROOT)} failed", 1)
    if not entry.python.exists():
        raise ZooError(f"{entry.name}: {entry.python} not found (run scripts/setup)")
    command = [str(entry.python), str(HERE / entry.script), "--out", str(staging),
               *entry.exporter_args(formats, precisions)]
    log = staging / "exporter.log"
    with open(log, "w") as err:
        # Its own session, so that an interrupt can stop it with everything it started.
        child = subprocess.Popen(command, cwd=HERE, stderr=err, start_new_session=True)
        try:
            code = child.wait()
        except BaseException:
            os.killpg(child.pid, signal.SIGTERM)
            child.wait()
            raise
    if code != 0:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        sys.stderr.write("\n".join(lines[-15:]) + "\n")
        cause = lines[-1].strip() if lines else f"exit code {code}"
        raise ZooError(f"building {entry.name} failed: {entry.script} exited with code {code}: {cause}", 1)


def merge_manifest(old: dict, new: dict) -> dict:
    """The new manifest, keeping the files (and their accuracy figures) of formats built before."""
    merged = dict(new)
    merged["files"] = {**old.get("files", {}), **new.get("files", {})}
    if "accuracy" in old or "accuracy" in new:
        by_format = {**old.get("accuracy", {}).get("by_format", {}), **new.get("accuracy", {}).get("by_format", {})}
        merged["accuracy"] = {**old.get("accuracy", {}), **new.get("accuracy", {}), "by_format": by_format}
    return merged


def install(entry, staging: pathlib.Path, folder: pathlib.Path, pairs: list, verifier: Verifier) -> None:
    """Checks the staged files against their manifests, moves them in, then writes the manifests."""
    manifests = {}
    for stem in entry.stems:
        for precision in {p for _, p in pairs}:
            name = entry.stem(stem, precision)
            staged = read_manifest(staging / f"{name}.json")
            if not staged:
                raise ZooError(f"building {entry.name} failed: the exporter wrote no manifest {name}.json", 1)
            for fmt in [f for f, p in pairs if p == precision]:
                if fmt not in staged.get("files", {}):
                    raise ZooError(f"building {entry.name} failed: {name}.json lists no {fmt} file", 1)
                for file_name, digest in file_entries(staged["files"][fmt]):
                    if sha256(staging / file_name) != digest:
                        raise ZooError(f"building {entry.name} failed: {file_name} does not match its manifest checksum", 1)
            staged["files"] = {f: e for f, e in staged["files"].items() if (f, precision) in pairs}
            manifests[name] = staged
    # Files a manifest lists under "documents" (not models: a sensitivity ranking, an input set under
    # inputs/), checked and moved in with the models; several manifests may name the same one.
    documents = {d["path"]: d["sha256"] for staged in manifests.values() for d in staged.get("documents", [])}
    for file_name, digest in documents.items():
        if sha256(staging / file_name) != digest:
            raise ZooError(f"building {entry.name} failed: {file_name} does not match its manifest checksum", 1)
    for name, staged in manifests.items():
        for entry_files in staged["files"].values():
            if "members" in entry_files:  # a model folder moves as a whole, replacing the old one
                shutil.rmtree(folder / entry_files["path"], ignore_errors=True)
                os.replace(staging / entry_files["path"], folder / entry_files["path"])
            for file_name, digest in file_entries(entry_files):
                if "members" not in entry_files:
                    os.replace(staging / file_name, folder / file_name)
                verifier.remember(folder / file_name, digest)  # just checked in staging
    for file_name in documents:  # a path in the models folder, such as inputs/<set>/<file>
        (folder / file_name).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / file_name, folder / file_name)
    for name, staged in manifests.items():
        path = folder / f"{name}.json"
        write_atomically(path, json.dumps(merge_manifest(read_manifest(path), staged), indent=2) + "\n")


def build(names: list, folder: pathlib.Path, formats_arg, precisions_arg, force: bool) -> int:
    entries = []
    for name in names:
        if name not in CATALOG:
            raise ZooError(f"unknown model '{name}' (known: {', '.join(CATALOG)})")
        entries.append(CATALOG[name])
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(folder)
    verifier = Verifier(folder)
    try:
        for entry in entries:
            pairs = plan(entry, formats_arg, precisions_arg)
            missing = pairs if force else [(f, p) for f, p in pairs
                                          if entry_state(folder, entry, f, p, verifier) != "built"]
            if not missing:
                print(f"{entry.name}: cached, {len(pairs)} variant{'s' if len(pairs) > 1 else ''} up to date "
                      f"({', '.join(f'{f} {p}' for f, p in pairs)})")
                continue
            print(f"{entry.name}: building {', '.join(f'{f} {p}' for f, p in missing)}", flush=True)
            started = time.monotonic()
            staging = folder / f"{STAGING_PREFIX}{entry.name}-{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            try:
                formats = list(dict.fromkeys(f for f, _ in missing))
                precisions = list(dict.fromkeys(p for _, p in missing))
                run_exporter(entry, staging, formats, precisions)
                install(entry, staging, folder, missing, verifier)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            print(f"{entry.name}: built in {time.monotonic() - started:.1f} s into {folder}")
    finally:
        verifier.save()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="infermark zoo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models-dir", type=pathlib.Path, default=ROOT / "models")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list")
    listing.add_argument("--json", action="store_true")
    building = sub.add_parser("build")
    building.add_argument("names", nargs="+")
    building.add_argument("--formats", nargs="+")
    building.add_argument("--precisions", nargs="+")
    building.add_argument("--force", action="store_true")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    folder = args.models_dir.resolve()
    try:
        if args.command == "list":
            return list_models(folder, args.json)
        return build(args.names, folder, args.formats, args.precisions, args.force)
    except ZooError as e:
        print(f"infermark zoo: {e}", file=sys.stderr)
        return e.exit_code
    except Interrupted as e:
        print(f"infermark zoo: interrupted ({e}); nothing half-built was left in {folder}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
