# The two commands README.md promises: `make run` and `make test`. Each runs scripts/setup
# first (idempotent, quick when everything is there), so both work on a fresh machine.
PRESET ?= release
BUILD  := build/$(PRESET)
# A pretrained model on real inputs, so the first table shows accuracy against labels beside speed:
# EfficientNet-Lite0 (ImageNet-1k) on the zoo's labelled photos, as the ONNX file every ONNX
# framework here reads (opset 10, OpenCV DNN included), as TorchScript for LibTorch, and in ncnn's,
# MNN's and Paddle Inference's formats (ExecuTorch's .pte needs PyTorch 2.x to export: on demand).
DEFAULT_MODEL := models/efficientnet_lite0_opencv.onnx models/efficientnet_lite0.pt \
                 models/efficientnet_lite0.ncnn.param models/efficientnet_lite0.mnn models/efficientnet_lite0.paddle
MODEL  ?= $(DEFAULT_MODEL)
ARGS   ?=
ifeq ($(MODEL),$(DEFAULT_MODEL))
RUN_INPUTS := --input input=models/inputs/imagenet_labelled.npy
endif

.PHONY: all setup configure build run test bench sanitize clean

all: build

setup:
	scripts/setup

configure: setup
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET)

# The main job: every capable backend on the model, comparison table + one JSON result each.
run: build
	$(BUILD)/infermark run $(MODEL) $(RUN_INPUTS) $(ARGS)

# Ends with "N tests skipped" and each skip's reason, from ctest's JUnit file: a skipped test is
# not a pass (tests/tools/ctest_skip_summary.py). The exit status is ctest's.
JUNIT := $(CURDIR)/$(BUILD)/ctest-junit.xml
test: build
	rm -f $(JUNIT); ctest --preset $(PRESET) -j2 --output-junit $(JUNIT); status=$$?; \
	python3 tests/tools/ctest_skip_summary.py $(JUNIT) || { [ $$status -ne 0 ] || status=1; }; exit $$status

bench: build
	$(BUILD)/bench/infermark_bench --benchmark_min_time=0.5

# The unit and integration suites under ASan+UBSan (build/debug), then the concurrency unit tests
# (load generator, net, remote, serve) under TSan (build/tsan). Not part of `make test`: two more
# builds, about an hour on 2 cores (docs/sanitizers.md).
sanitize: setup
	cmake --preset debug
	cmake --build --preset debug
	ctest --preset debug -L 'unit|integration' -j2
	cmake --preset tsan
	cmake --build --preset tsan
	ctest --preset tsan -j2

clean:
	rm -rf build
