# tidal -- top-level convenience targets (the real build is CMake + Ninja).
#
#   make deps    check/install Debian packages (scripts/deps.txt) and the CUDA toolkit
#   make build   configure build/ (first time) and build it
#   make install build what is installed and `cmake --install` it: PREFIX=DIR (default: the
#                tree's CMAKE_INSTALL_PREFIX, /usr/local), DESTDIR=DIR for staging
#   make check   deps + build + build-asan (ASan+UBSan) + all tests in both;
#                ends with one line "N passed, N failed"
#   make demo    deps + build + scripts/demo.sh
#   make fuzz    build the libFuzzer targets and fuzz FUZZ_TARGET (fuzz_ptx_parse; or
#                fuzz_tidald: tidald's control protocol) for FUZZ_SECONDS (600)
#   make bench   bench/run.sh, if present
#   make clean   remove build trees

SHELL := /bin/bash
.NOTPARALLEL:
.DEFAULT_GOAL := build

BUILD       ?= build
ASAN_BUILD  ?= build-asan
BUILD_TYPE  ?= RelWithDebInfo
CTEST_JOBS  ?= 2
CMAKE_ARGS  ?=
FUZZ_SECONDS ?= 600
FUZZ_TARGET ?= fuzz_ptx_parse
PREFIX      ?=
DESTDIR     ?=

.PHONY: all deps build build-asan install check test demo fuzz bench clean gpu-check gpu-selftest

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	BUILD_TYPE=$(BUILD_TYPE) CMAKE_ARGS="$(CMAKE_ARGS)" scripts/configure.sh normal $(BUILD)

$(ASAN_BUILD)/build.ninja:
	CMAKE_ARGS="$(CMAKE_ARGS)" scripts/configure.sh asan $(ASAN_BUILD) $(BUILD)

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

build-asan: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD) tidal_check_deps

# tidal_installed: the tools, libraries and man pages, not the test corpus `all` has
install: $(BUILD)/build.ninja
	ninja -C $(BUILD) tidal_installed
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) $(if $(PREFIX),--prefix "$(PREFIX)")

# Everything after `deps` lives in scripts/check.sh (build, build-asan, ctest in
# both, test/summary.sh); its last line is "N passed, N failed".
check: deps
	@BUILD_TYPE=$(BUILD_TYPE) CTEST_JOBS=$(CTEST_JOBS) CMAKE_ARGS="$(CMAKE_ARGS)" \
	  scripts/check.sh $(BUILD) $(ASAN_BUILD)

test: check

demo: deps build
	@scripts/demo.sh $(BUILD)

# Seeds: test/fuzz/seeds/$(FUZZ_TARGET)/ (+ the PTX corpus for the PTX target), and the
# target's dictionary test/fuzz/$(FUZZ_TARGET).dict when there is one.
fuzz: $(BUILD)/build.ninja
	ninja -C $(BUILD) tidal_fuzz tidal_check_deps
	scripts/fuzz-run.sh --binary $(BUILD)/fuzz/$(FUZZ_TARGET) --seconds $(FUZZ_SECONDS) \
	  --work $(BUILD)/fuzz-work/$(FUZZ_TARGET) --corpus test/fuzz/seeds/$(FUZZ_TARGET) \
	  $(if $(filter fuzz_ptx_parse,$(FUZZ_TARGET)),--corpus $(BUILD)/corpus --corpus test/corpus/triton) \
	  $(if $(wildcard test/fuzz/$(FUZZ_TARGET).dict),-- -dict=test/fuzz/$(FUZZ_TARGET).dict)

# make gpu-check     build + run the GPU suites (needs an NVIDIA GPU, CUDA 13): the rewrite
#                    (test/gpu/run.sh, log $${OUT:-/tmp}/gpu-check.log), the same on cubins
#                    made in process by libnvptxcompiler when the toolkit has it (run.sh
#                    --cubin nvptxcompiler, log gpu-check-cubin-nvptxcompiler.log),
#                    libtidal (test/gpu/runtime/run.sh, log gpu-runtime.log) and
#                    compute-sanitizer's four tools over the rewrite suite and the repros of
#                    the clone's barriers (test/gpu/sanitize.sh, log gpu-sanitize.log; a
#                    named SKIP without compute-sanitizer); last line "N passed, N failed"
# make gpu-selftest  same build, harness tested against a fake libcuda (no GPU needed)
GPU_CHECK_ARGS ?=
gpu-check:
	@rc=0; o=$${OUT:-/tmp}; logs="$$o/gpu-check.log $$o/gpu-runtime.log"; \
	 test/gpu/run.sh $(GPU_CHECK_ARGS) || rc=1; \
	 if $${TIDAL_GPU_BUILD:-build-gpu}/tidal-opt --version 2>/dev/null | grep -q libnvptxcompiler; then \
	   test/gpu/run.sh --no-build --cubin nvptxcompiler $(GPU_CHECK_ARGS) || rc=1; \
	   logs="$$logs $$o/gpu-check-cubin-nvptxcompiler.log"; \
	 else echo "gpu-check: no libnvptxcompiler in this toolkit: cubin suite not run"; fi; \
	 test/gpu/runtime/run.sh || rc=1; \
	 test/gpu/sanitize.sh || rc=1; logs="$$logs $$o/gpu-sanitize.log"; \
	 p=0; f=0; \
	 for l in $$logs; do \
	   s=$$(tail -1 $$l); set -- $$s; p=$$((p + $$1)); f=$$((f + $$3)); done; \
	 echo "gpu-check (all suites): $$p passed, $$f failed"; exit $$rc
gpu-selftest:
	@test/gpu/selftest.sh

bench: build
	@if [ -x bench/run.sh ]; then bench/run.sh; \
	 elif [ -f bench/run.sh ]; then bash bench/run.sh; \
	 else echo "make bench: no bench/run.sh yet"; fi

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
