# Thin wrapper: every target installs what is missing, configures and builds
# with CMake, then runs. See README.md.
JOBS        ?= $(shell nproc)
BUILD       ?= build/release
ASAN_BUILD  ?= build/asan
BENCH_BUILD ?= build/bench
CMAKE_FLAGS ?=

.PHONY: deps build asan-build test cluster soak bench clean

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Debug + AddressSanitizer + UndefinedBehaviorSanitizer, only the targets
# whose tests CI runs under sanitizers (consensus, storage, simulation).
asan-build: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DTESSERA_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target tessera_sanitized_tests

test: build asan-build
	@cd $(ASAN_BUILD) && ctest -L sanitized --output-on-failure -j $(JOBS)
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

cluster: build
	@$(BUILD)/src/cli/tessera cluster up $(ARGS)

# make soak [SEEDS=100000] [DURATION=seconds] [REPLICAS=3] [SEED_START=1000000]
# Runs SEEDS seeds, or as many as fit in DURATION seconds when it is given.
SEEDS      ?= 100000
DURATION   ?= 0
SEED_START ?= 1000000
REPLICAS   ?= 3
soak: build
	@$(BUILD)/src/cli/tessera sim --replicas $(REPLICAS) --seed-start $(SEED_START) \
		--seeds $(if $(filter-out 0,$(DURATION)),1000000000,$(SEEDS)) --duration $(DURATION)

bench: deps
	@cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BENCH_BUILD) -j $(JOBS) --target tessera_consensus_bench
	@$(BENCH_BUILD)/bench/tessera_consensus_bench $(ARGS)

clean:
	rm -rf build
