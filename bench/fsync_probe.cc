#include "fsync_probe.h"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

namespace tessera::bench {
namespace {

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

LatencySummary Summarise(std::vector<double> samples) {
  LatencySummary s;
  s.samples = samples.size();
  s.p50_us = Percentile(samples, 50);
  s.p99_us = Percentile(std::move(samples), 99);
  return s;
}

std::string JsonEscape(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) >= 0x20) out.push_back(c);
  }
  return out;
}

}  // namespace

double Percentile(std::vector<double> samples, double pct) {
  if (samples.empty()) return 0;
  const size_t index = std::min(samples.size() - 1,
                                static_cast<size_t>(pct / 100.0 * static_cast<double>(samples.size())));
  std::nth_element(samples.begin(), samples.begin() + static_cast<long>(index), samples.end());
  return samples[index];
}

LatencySummary MeasureFsync(const std::string& dir, int rounds) {
  // Like a write-ahead log: 4 KiB writes into preallocated space, so each
  // fdatasync flushes data only, not a growing file size.
  const std::string path = dir + "/fsync_probe.dat";
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return {};
  constexpr off_t kBlock = 4096;
  const std::string block(kBlock, 'x');
  std::vector<double> samples;
  if (::posix_fallocate(fd, 0, kBlock * rounds) == 0 && ::fsync(fd) == 0) {
    for (int i = 0; i < rounds; ++i) {
      const double start = NowUs();
      if (::pwrite(fd, block.data(), kBlock, kBlock * i) != kBlock) break;
      if (::fdatasync(fd) != 0) break;
      samples.push_back(NowUs() - start);
    }
  }
  ::close(fd);
  ::unlink(path.c_str());
  return Summarise(std::move(samples));
}

LatencySummary MeasureRocksDbSyncedPut(const std::string& dir, int rounds) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::Open(options, dir + "/rocksdb_probe", &raw).ok()) return {};
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions sync;
  sync.sync = true;
  const std::string value(100, 'v');
  std::vector<double> samples;
  for (int i = 0; i < rounds; ++i) {
    const double start = NowUs();
    if (!db->Put(sync, "k" + std::to_string(i), value).ok()) break;
    samples.push_back(NowUs() - start);
  }
  return Summarise(std::move(samples));
}

std::string MachineNotesJson() {
  std::string cpu = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  long mem_kib = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemTotal:", 0) == 0) mem_kib = std::stol(line.substr(9));
  }
  std::ostringstream out;
  out << "{\"cores\":" << std::thread::hardware_concurrency() << ",\"cpu\":\"" << JsonEscape(cpu)
      << "\",\"mem_gib\":" << mem_kib / (1024 * 1024) << "}";
  return out.str();
}

}  // namespace tessera::bench
