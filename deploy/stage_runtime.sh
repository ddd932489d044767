#!/usr/bin/env bash
# Gathers what `infermark serve` needs at run time into one folder, the layout of the container
# image's /opt/infermark:
#   bin/infermark            the binary
#   bin/backends/            the ONNX Runtime and OpenVINO plugins (found next to the binary)
#   lib/                     libonnxruntime, and OpenVINO's core, CPU plugin, ONNX and IR frontends, TBB
#   models/tiny_cnn.onnx     the example model the image serves by default
# Run with LD_LIBRARY_PATH=DEST/lib. Only the CPU serving backends are taken: the others need
# frameworks (libtorch, OpenCV, llama.cpp, an embedded Python) that the slim image leaves out.
# deploy/Dockerfile runs this in its build stage; tests/e2e/deploy_manifests_test.py runs it on
# the local build and serves from the result.
#
# Usage: deploy/stage_runtime.sh DEST [BUILD_DIR] [MODELS_DIR]
#   BUILD_DIR defaults to build/release, MODELS_DIR to models/ (both in the repository).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${1:?usage: deploy/stage_runtime.sh DEST [BUILD_DIR] [MODELS_DIR]}"
BUILD="${2:-$ROOT/build/release}"
MODELS="${3:-$ROOT/models}"
BACKENDS=(onnxruntime openvino)
OPENVINO_LIBS=(
  'libopenvino.so.*' libopenvino_intel_cpu_plugin.so 'libopenvino_onnx_frontend.so.*' 'libopenvino_ir_frontend.so.*'
  'libtbb.so.*' 'libtbbmalloc.so.*' 'libtbbbind_2_5.so.*' 'libhwloc.so.*'
)

mkdir -p "$DEST/bin/backends" "$DEST/lib" "$DEST/models"
cp "$BUILD/infermark" "$DEST/bin/"
for backend in "${BACKENDS[@]}"; do
  cp "$BUILD/backends/libinfermark_backend_$backend.so" "$DEST/bin/backends/"
done
cp -L "$ROOT/third_party/onnxruntime/lib/libonnxruntime.so.1" "$DEST/lib/"

# OpenVINO's C++ runtime is the one inside the openvino wheel in .venv (scripts/setup).
openvino_libs=("$ROOT"/.venv/lib/python3*/site-packages/openvino/libs)
[ -d "${openvino_libs[0]}" ] || { echo "stage_runtime: no openvino/libs in .venv (run scripts/setup)" >&2; exit 1; }
for pattern in "${OPENVINO_LIBS[@]}"; do
  found=("${openvino_libs[0]}"/$pattern)
  [ -e "${found[0]}" ] || { echo "stage_runtime: ${openvino_libs[0]}/$pattern not found" >&2; exit 1; }
  cp -L "${found[@]}" "$DEST/lib/"
done

cp "$MODELS/tiny_cnn.onnx" "$DEST/models/"
echo "stage_runtime: $(du -sh "$DEST" | cut -f1) in $DEST"
