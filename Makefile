# FARNN entry point. Every target bootstraps missing Debian packages first
# (scripts/bootstrap.sh), then drives the CMake/Ninja build in $(BUILD).
#   make sim     the demo: train an LSTM and a GRU through sim:// (the Verilated core behind
#                a mocked PCIe link), every step checked against model://; files in $(BUILD)/sim
#   make test    lint + build + every test (CTest)
#   make lint    verilator --lint-only -Wall on every RTL module
#   make bench   benchmarks, JSON under $(BUILD)/bench (the training step against PyTorch too)
#   make sweep   exhaustive sigmoid/tanh sweep over all 2^32 inputs (minutes)
#   make synth   Yosys estimates and post-synthesis equivalence checks
#   make asan    the host driver's tests under ASan + UBSan, in build-asan/ (preset asan)
#   make clean   remove the build tree
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_BUILD_TYPE ?= Release

.PHONY: all deps configure build sim test lint bench sweep synth asan format clean

all: build

deps:
	@scripts/bootstrap.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) -DFARNN_BENCH_P256=OFF >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

sim: build
	@$(BUILD)/tools/sim_demo/sim_demo --out $(BUILD)/sim

lint: deps
	@scripts/lint.sh

test: lint build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The training benchmark compares against PyTorch: bootstrap adds python3-torch.
# The run before is kept in $(BUILD)/bench-previous/ and this run is compared
# with it (tools/bench_compare.py): what moved is printed, and a slower cycle
# count, a lost bit-exact flag or a missing figure is named at the end.
bench: build
	@FARNN_EXTRA_PACKAGES="$(FARNN_EXTRA_PACKAGES) python3-torch" scripts/bootstrap.sh
	@cmake -S . -B $(BUILD) -DFARNN_BENCH_P256=ON >/dev/null
	@rm -rf $(BUILD)/bench-previous
	@if ls $(BUILD)/bench/*.json >/dev/null 2>&1; then mv $(BUILD)/bench $(BUILD)/bench-previous; fi
	@cmake --build $(BUILD) --target bench
	@if [ -d $(BUILD)/bench-previous ]; then \
	  python3 tools/bench_compare.py $(BUILD)/bench-previous $(BUILD)/bench \
	    || echo "make bench: this run differs from the one before it (above: slower cycle counts, lost bit-exactness or missing figures)"; \
	fi

sweep: build
	@$(BUILD)/tools/act_sweep/act_sweep --json $(BUILD)/act_sweep.json

synth: deps build
	@cmake --build $(BUILD) --target synth

# Presets in CMakePresets.json: build only the driver test targets, run only
# their tests (ModelDevice*, SimDevice, PcieTransport) with leak detection on and
# any UBSan report fatal.
asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan -j $(JOBS)

format:
	@git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	@rm -rf $(BUILD)
