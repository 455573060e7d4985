#include "common/thread_name.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace tessera {
namespace {

// What the kernel reports for the calling thread.
std::string KernelName() {
  std::ifstream comm("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

TEST(ThreadNameTest, TheKernelSeesTheName) {
  std::string seen;
  std::thread([&seen] {
    NameThisThread("log-writer");
    seen = KernelName();
  }).join();
  EXPECT_EQ(seen, "log-writer");
}

TEST(ThreadNameTest, LongNamesAreCutToFifteenBytes) {
  std::string seen;
  std::thread([&seen] {
    NameThisThread("a-name-longer-than-fifteen-bytes");
    seen = KernelName();
  }).join();
  EXPECT_EQ(seen, "a-name-longer-t");
}

}  // namespace
}  // namespace tessera
