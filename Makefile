# The two commands README.md promises: `make run` and `make test`. Each runs scripts/setup
# first (idempotent, quick when everything is there), so both work on a fresh machine.
PRESET ?= release
BUILD  := build/$(PRESET)
MODEL  ?= models/resnet50.onnx
ARGS   ?=

.PHONY: all setup configure build run test bench clean

all: build

setup:
	scripts/setup

configure: setup
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET)

# The main job: every capable backend on ResNet-50, comparison table + one JSON result each.
run: build
	$(BUILD)/infermark run $(MODEL) $(ARGS)

test: build
	ctest --preset $(PRESET) -j2

bench: build
	$(BUILD)/bench/infermark_bench --benchmark_min_time=0.5

clean:
	rm -rf build
