# The two commands of the README's quick start, and a few more for developers.
#   make demo   installs what is missing, builds, and runs Kiln's main job (examples/, then a
#               tuning sweep of the f16 GEMM whose winners are exported to tune-out/)
#   make test   installs what is missing, builds, and runs the whole test suite (CI runs this)
JOBS ?= $(shell nproc)
BUILD ?= build

.PHONY: demo test deps build asan fuzz bench format format-check clean

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake --preset default >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: every example translated, lowered and checked; then the f16 GEMM at 4096 cubed
# tuned for the local GPU (or, without one, ranked by the cost model for sm_90a and gfx942) over
# its 96 best-ranked candidates and their neighbours, each emitted and assembled (and measured,
# on a GPU), and the winners exported to tune-out/TARGET/export/.
demo: build
	@./$(BUILD)/tools/kiln/kiln demo examples
	@./$(BUILD)/tools/kiln/kiln tune examples/gemm-f16.json --space examples/gemm.space.json \
	    --size M=4096 --size N=4096 --size K=4096 --budget 96 -j $(JOBS) -o tune-out --quiet

test: build fuzz
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@ctest --test-dir build-fuzz --output-on-failure

# libFuzzer targets need clang: they live in their own build folder.
fuzz: deps
	@cmake --preset fuzz >/dev/null
	@cmake --build build-fuzz -j $(JOBS)

asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@ctest --test-dir build-asan --output-on-failure -j $(JOBS)

bench: build
	@./$(BUILD)/bench/kiln_bench --benchmark_min_time=0.2

format:
	@git ls-files '*.h' '*.cpp' ':!tests/golden' | xargs clang-format -i

format-check:
	@git ls-files '*.h' '*.cpp' ':!tests/golden' | xargs clang-format --dry-run -Werror

clean:
	rm -rf build build-asan build-fuzz
