// make bench: replication throughput and latency of 3-replica Multi-Paxos
// groups over real RocksDB with synced writes (each replica its own
// RocksDB), in-memory transport, 100-byte commands, closed-loop clients with
// 1 and 64 proposals in flight per group, 1 and 16 groups per node's
// RocksDB. Prints one JSON object per line; docs/benchmarks.md records them.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "fsync_probe.h"
#include "replication_cluster.h"

namespace tb = tessera::bench;

namespace {

std::string MakeTempDir(const std::string& parent) {
  std::string pattern = parent + "/tessera-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

int RunGroupConfig(const std::string& dir, int groups, const std::vector<int>& inflights,
                   double seconds, double synced_write_p50_us, const std::string& machine) {
  auto cluster = tb::ReplicationCluster::Create(dir + "/g" + std::to_string(groups), groups, 100);
  if (!cluster.ok()) {
    std::cerr << "bench: " << cluster.status().ToString() << "\n";
    return 1;
  }
  if (auto st = (*cluster)->ElectLeaders(20); !st.ok()) {
    std::cerr << "bench: " << st.ToString() << "\n";
    return 1;
  }
  for (int inflight : inflights) {
    tb::RunFigures f = (*cluster)->Run(inflight, 1.0, seconds);
    const double ops_per_s = static_cast<double>(f.ops) / f.seconds;
    // "One fsync per write": a store that synced each write alone through
    // the same RocksDB path could do at most this many writes per second.
    const double bound = synced_write_p50_us > 0 ? 1e6 / synced_write_p50_us : 0;
    std::ostringstream line;
    line.precision(6);
    line << "{\"name\":\"replication_write\",\"replicas\":3,\"groups\":" << groups
         << ",\"inflight_per_group\":" << inflight << ",\"command_bytes\":100"
         << ",\"ops_per_s\":" << ops_per_s << ",\"p50_us\":" << tb::Percentile(f.latencies_us, 50)
         << ",\"p99_us\":" << tb::Percentile(f.latencies_us, 99) << ",\"ops\":" << f.ops
         << ",\"fsyncs_per_s\":" << static_cast<double>(f.fsyncs) / f.seconds
         << ",\"writes_per_fsync\":" << (f.fsyncs ? static_cast<double>(f.ops) / f.fsyncs : 0)
         << ",\"fsync_bound_ops_per_s\":" << bound
         << ",\"ratio_to_fsync_bound\":" << (bound > 0 ? ops_per_s / bound : 0)
         << ",\"machine\":" << machine << "}";
    std::cout << line.str() << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessera replication benchmark"};
  double seconds = 3;
  std::string parent = std::filesystem::temp_directory_path().string();
  app.add_option("--seconds", seconds, "measured seconds per configuration")->check(CLI::PositiveNumber);
  app.add_option("--dir", parent, "where the RocksDB directories are created");
  CLI11_PARSE(app, argc, argv);

  const std::string dir = MakeTempDir(parent);
  if (dir.empty()) {
    std::cerr << "bench: cannot create a directory under " << parent << "\n";
    return 1;
  }
  const std::string machine = tb::MachineNotesJson();
  const tb::LatencySummary fsync = tb::MeasureFsync(dir, 300);
  const tb::LatencySummary rocks = tb::MeasureRocksDbSyncedPut(dir, 300);
  std::cout << "{\"name\":\"machine_fsync\",\"fsync_4k_p50_us\":" << fsync.p50_us
            << ",\"fsync_4k_p99_us\":" << fsync.p99_us
            << ",\"rocksdb_synced_put_p50_us\":" << rocks.p50_us
            << ",\"rocksdb_synced_put_p99_us\":" << rocks.p99_us << ",\"machine\":" << machine
            << "}" << std::endl;
  int rc = 0;
  for (int groups : {1, 16}) {
    rc |= RunGroupConfig(dir, groups, {1, 64}, seconds, rocks.p50_us, machine);
  }
  std::filesystem::remove_all(dir);
  return rc;
}
