// Checks huge_page_buffers.cc (D45) in a process that links it and jemalloc:
// large allocations come from an arena of their own whose memory is
// eligible for transparent huge pages; small ones stay in jemalloc's
// automatic arenas; freed large buffers are handed back lazily and reused
// without faults (D57).
#include <jemalloc/jemalloc.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace {

unsigned ArenaOf(const void* pointer) {
  unsigned arena = 0;
  size_t length = sizeof(arena);
  EXPECT_EQ(mallctl("arenas.lookup", &arena, &length, &pointer, sizeof(pointer)), 0);
  return arena;
}

// jemalloc's automatic arenas are 0..n-1; arenas made by arenas.create
// come after them.
unsigned AutomaticArenas() {
  unsigned arenas = 0;
  size_t length = sizeof(arenas);
  EXPECT_EQ(mallctl("opt.narenas", &arenas, &length, nullptr, 0), 0);
  return arenas;
}

std::string TransparentHugePageMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('[');
  const size_t close = line.find(']');
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

// The THPeligible field of the mapping in /proc/self/smaps holding `address`,
// or -1 when none is found.
int ThpEligibleAt(const void* address) {
  const auto target = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0;
    uintptr_t end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= target && target < end;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) {
      return std::stoi(line.substr(line.find(':') + 1));
    }
  }
  return -1;
}

TEST(HugePageBuffers, LargeAllocationsComeFromAnArenaOfTheirOwn) {
  auto large = std::make_unique<char[]>(8 << 20);
  auto small = std::make_unique<char[]>(4096);
  EXPECT_GE(ArenaOf(large.get()), AutomaticArenas());
  EXPECT_LT(ArenaOf(small.get()), AutomaticArenas());
  // Two large buffers share the arena; strings grow into it too.
  std::string grown(3 << 20, 'x');
  EXPECT_EQ(ArenaOf(grown.data()), ArenaOf(large.get()));
}

TEST(HugePageBuffers, LargeAlignedAllocationsToo) {
  constexpr std::align_val_t kAlign{4096};
  void* large = ::operator new(8 << 20, kAlign);
  void* small = ::operator new(8192, kAlign);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 4096, 0u);
  EXPECT_GE(ArenaOf(large), AutomaticArenas());
  EXPECT_LT(ArenaOf(small), AutomaticArenas());
  ::operator delete(large, kAlign);
  ::operator delete(small, kAlign);
}

TEST(HugePageBuffers, LargeBuffersMayUseHugePagesSmallOnesDoNot) {
  const std::string mode = TransparentHugePageMode();
  if (mode != "madvise" && mode != "always") GTEST_SKIP() << "THP mode '" << mode << "'";
  std::string large(8 << 20, 'x');
  EXPECT_EQ(ThpEligibleAt(large.data() + (4 << 20)), 1);
  if (mode == "madvise") {
    auto small = std::make_unique<char[]>(4096);
    EXPECT_EQ(ThpEligibleAt(small.get()), 0);
  }
}

// One arena statistic or setting, read after refreshing the statistics.
template <typename T>
T ArenaValue(unsigned arena, const char* name) {
  uint64_t epoch = 1;
  size_t epoch_length = sizeof(epoch);
  EXPECT_EQ(mallctl("epoch", &epoch, &epoch_length, &epoch, sizeof(epoch)), 0);
  const std::string key = std::string(name).replace(std::string(name).find("<i>"), 3,
                                                    std::to_string(arena));
  T value{};
  size_t length = sizeof(value);
  EXPECT_EQ(mallctl(key.c_str(), &value, &length, nullptr, 0), 0) << key;
  return value;
}

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

TEST(HugePageBuffers, FreedBuffersAreHandedBackLazilyAndReusedWithoutFaults) {
  constexpr size_t kBytes = size_t{64} << 20;
  void* probe = ::operator new(kBytes);
  const unsigned arena = ArenaOf(probe);
  ::operator delete(probe);
  ASSERT_GE(arena, AutomaticArenas());
  EXPECT_EQ(ArenaValue<ssize_t>(arena, "arena.<i>.muzzy_decay_ms"), -1);

  // Decay after 10 ms instead of 10 s; the background thread or an
  // explicit decay then hands the freed pages back as it does in the
  // binary, at most 2 s from now.
  const std::string prefix = "arena." + std::to_string(arena) + ".";
  ssize_t saved = 0;
  size_t saved_length = sizeof(saved);
  ssize_t soon = 10;
  ASSERT_EQ(mallctl((prefix + "dirty_decay_ms").c_str(), &saved, &saved_length, &soon, sizeof(soon)), 0);

  char* buffer = static_cast<char*>(::operator new(kBytes));
  std::memset(buffer, 0x5a, kBytes);
  const auto muzzy_purged = ArenaValue<uint64_t>(arena, "stats.arenas.<i>.muzzy_purged");
  ::operator delete(buffer);
  size_t muzzy_pages = 0;
  for (int i = 0; i < 100 && muzzy_pages * 4096 < kBytes; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(mallctl((prefix + "decay").c_str(), nullptr, nullptr, nullptr, 0), 0);
    muzzy_pages = ArenaValue<size_t>(arena, "stats.arenas.<i>.pmuzzy");
  }
  // Its pages went to the kernel lazily (MADV_FREE), and none for good.
  EXPECT_GE(muzzy_pages * 4096, kBytes);
  EXPECT_EQ(ArenaValue<uint64_t>(arena, "stats.arenas.<i>.muzzy_purged"), muzzy_purged);

  // The next buffer takes them back without a fault per page (a fresh
  // 64 MiB faults 32 times on huge pages, 16,384 times without).
  const long faults_before = MinorFaults();
  buffer = static_cast<char*>(::operator new(kBytes));
  std::memset(buffer, 0xa5, kBytes);
  const long faults = MinorFaults() - faults_before;
  ::operator delete(buffer);
  EXPECT_LT(faults, 16);

  ASSERT_EQ(mallctl((prefix + "dirty_decay_ms").c_str(), nullptr, nullptr, &saved, sizeof(saved)), 0);
}

}  // namespace
