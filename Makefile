# Thin wrapper: every target installs what is missing, configures and builds
# with CMake, then runs. See README.md.
JOBS        ?= $(shell nproc)
BUILD       ?= build/release
ASAN_BUILD  ?= build/asan
BENCH_BUILD ?= build/bench
CMAKE_FLAGS ?=
# ccache hits across clones in different directories (CI clones afresh):
# paths under the checkout are hashed relative to it, and with -g ccache would
# otherwise hash the working directory too (its hash_dir default).
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= 1

.PHONY: deps build asan-build test cluster install soak experiments bench fuzz clean

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

# make install [PREFIX=/usr/local] [DESTDIR=]: builds the tessera binary and
# installs it (stripped) as PREFIX/bin/tessera, with the shipped layouts in
# PREFIX/share/tessera/cluster/ (its default --layout); DESTDIR stages it.
PREFIX ?= /usr/local
install: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target tessera
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)" --strip

# make soak [SEEDS=100000] [DURATION=seconds] [REPLICAS=3] [SEED_START=1000000]
#           [HOST=production] [BUG=none] [S3=0]
# Runs SEEDS seeds, or as many as fit in DURATION seconds when it is given,
# on the production host (GroupHost, PartitionStateMachine, NodeStore; 3, 5,
# 7 or 9 replicas; HOST=production is the only host). BUG=NAME injects a bug
# (`tessera sim --bug list`) to see it caught. A fourth of the seeds run S3
# clients and check the S3 invariants; S3=1 runs them in every seed.
SEEDS      ?= 100000
DURATION   ?= 0
SEED_START ?= 1000000
REPLICAS   ?= 3
HOST       ?= production
BUG        ?= none
S3         ?= 0
soak: build
	@$(BUILD)/src/cli/tessera sim --host $(HOST) --replicas $(REPLICAS) --seed-start $(SEED_START) --bug $(BUG) \
		$(if $(filter 1,$(S3)),--s3) \
		--seeds $(if $(filter-out 0,$(DURATION)),1000000000,$(SEEDS)) --duration $(DURATION)

# make experiments [SOAK=N] [SEED=S]: the failure-injection catalogue
# (experiments/*.textproto, docs/experiments.md), one experiment after the
# other on fresh local clusters, stopping at the first failure; SOAK=N runs
# experiments/random-faults.textproto N times with random seeds instead and
# stops at the first failure, printing its seed and the command to rerun it.
# Results (report.html included) in build/experiments/. Not part of `make test`.
SOAK ?= 0
experiments: build
	@scripts/run-experiments.sh $(BUILD)/src/cli/tessera --soak $(SOAK) $(if $(SEED),--seed $(SEED))

# make bench [BENCHES="consensus md5 s3 kv multipart admission listing"] [ARGS=...]: the replication
# benchmark (ARGS go to it), MD5 one stream and side by side (D39), then S3 side
# by side with Ceph RGW, KV side by side
# with etcd and multipart uploads side by side with RGW (bench/s3_vs_rgw.sh,
# bench/kv_vs_etcd.sh, bench/s3_multipart_vs_rgw.sh), and S3 bucket
# admission (bench/s3_admission.py: its cost on and off, interleaved, and
# timelines plotted with gnuplot), and listing latency against the bucket's
# partition count (bench/s3_listing_cost.py), and client p99 during a replica
# move (move: bench/move_p99.py; not in the default list); each also runs alone, see
# docs/benchmarks.md. A peer that cannot start is reported and skipped.
bench:
	@scripts/install-deps.sh --bench
	@cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BENCH_BUILD) -j $(JOBS) --target tessera_consensus_bench tessera_md5_bench tessera_s3_sink tessera
	@rc=0; for b in $(or $(BENCHES),consensus md5 s3 kv multipart admission listing); do case $$b in \
	  consensus) $(BENCH_BUILD)/bench/tessera_consensus_bench $(ARGS) || rc=1 ;; \
	  md5) $(BENCH_BUILD)/bench/tessera_md5_bench || rc=1 ;; \
	  s3) TESSERA=$(abspath $(BENCH_BUILD))/src/cli/tessera bench/s3_vs_rgw.sh || rc=1 ;; \
	  kv) TESSERA=$(abspath $(BENCH_BUILD))/src/cli/tessera bench/kv_vs_etcd.sh || rc=1 ;; \
	  multipart) TESSERA=$(abspath $(BENCH_BUILD))/src/cli/tessera bench/s3_multipart_vs_rgw.sh || rc=1 ;; \
	  admission) bench/s3_admission.py --tessera $(abspath $(BENCH_BUILD))/src/cli/tessera || rc=1 ;; \
	  listing) bench/s3_listing_cost.py --tessera $(abspath $(BENCH_BUILD))/src/cli/tessera || rc=1 ;; \
	  move) bench/move_p99.py --tessera $(abspath $(BENCH_BUILD))/src/cli/tessera || rc=1 ;; \
	  *) echo "unknown benchmark $$b (consensus, md5, s3, kv, multipart, admission, listing, move)"; rc=2 ;; esac; done; exit $$rc

# make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="http_request ..."]: builds the
# libFuzzer targets of fuzz/ with clang (ASan + UBSan, build/fuzz) and runs
# each for FUZZ_SECONDS from its seed corpus. New inputs go to
# build/fuzz/corpus/TARGET, crashes to build/fuzz/crashes (docs/security.md).
# `make test` runs every seed once without libFuzzer.
FUZZ_BUILD   ?= build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= http_request s3_signature aws_chunked s3_xml rpc_frame kv_json
fuzz:
	@scripts/install-deps.sh --fuzz
	@CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_FUZZ=ON \
		-DTESSERA_JEMALLOC=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target tessera_fuzz_targets
	@mkdir -p $(FUZZ_BUILD)/crashes
	@rc=0; for t in $(FUZZ_TARGETS); do mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
	  $(FUZZ_BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/crashes/$$t- $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t || rc=1; \
	done; exit $$rc

clean:
	rm -rf build
