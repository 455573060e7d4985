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

// Starts a thread named `name` and returns what the kernel reports for it.
std::string NameOnNewThread(const std::string& name) {
  std::string seen;
  StartNamedThread(name, [&seen] { seen = KernelName(); }).join();
  return seen;
}

TEST(ThreadNameTest, TheKernelSeesTheName) { EXPECT_EQ(NameOnNewThread("log-writer"), "log-writer"); }

TEST(ThreadNameTest, LongNamesAreCutToFifteenBytes) {
  EXPECT_EQ(NameOnNewThread("a-name-longer-than-fifteen-bytes"), "a-name-longer-t");
}

}  // namespace
}  // namespace tessera
