// Checks huge_page_buffers.cc (D45) in a process that links it and jemalloc:
// large allocations come from an arena of their own whose memory is
// eligible for transparent huge pages; small ones stay in jemalloc's
// automatic arenas.
#include <jemalloc/jemalloc.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>

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

}  // namespace
