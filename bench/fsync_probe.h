// Measures this machine's durable-write latency, so benchmark figures can be
// read against the "one fsync per write" bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::bench {

struct LatencySummary {
  double p50_us = 0;
  double p99_us = 0;
  uint64_t samples = 0;
};

// 4 KiB append + fdatasync on a file in `dir`, `rounds` times.
LatencySummary MeasureFsync(const std::string& dir, int rounds);
// One synced 100-byte RocksDB Put in a fresh database under `dir`, `rounds` times.
LatencySummary MeasureRocksDbSyncedPut(const std::string& dir, int rounds);

// Percentile (0..100) of unsorted samples; 0 when empty.
double Percentile(std::vector<double> samples, double pct);

// One JSON object with the machine's cores, CPU model and memory.
std::string MachineNotesJson();

}  // namespace tessera::bench
