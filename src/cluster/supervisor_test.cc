// Goal: the supervisor starts processes with logs and pid files, finds them
// again, pauses/resumes/kills them by name, and stops them cleanly.
#include "cluster/supervisor.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace tessera::cluster {
namespace {

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-sup-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(SupervisorTest, LaunchSignalStop) {
  auto sup = Supervisor::Open(dir_);
  ASSERT_TRUE(sup.ok());
  auto pid = sup->Launch({"sleeper", {"/bin/sh", "-c", "echo started; exec sleep 30"}});
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_TRUE(sup->LivePid("sleeper").ok());
  std::string text;
  for (int i = 0; i < 200 && text.find("started") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream log(sup->LogPath("sleeper"));
    std::stringstream read;
    read << log.rdbuf();
    text = read.str();
  }
  EXPECT_NE(text.find("started"), std::string::npos) << "output reaches the log file";
  EXPECT_EQ(sup->Launch({"sleeper", {"/bin/sleep", "1"}}).status().code(), StatusCode::kConflict);
  EXPECT_TRUE(sup->Signal("sleeper", SIGSTOP).ok());
  EXPECT_TRUE(sup->Signal("sleeper", SIGCONT).ok());
  EXPECT_TRUE(sup->Stop("sleeper", 2000).ok());
  EXPECT_FALSE(sup->LivePid("sleeper").ok());
  EXPECT_EQ(sup->Signal("sleeper", SIGKILL).code(), StatusCode::kNotFound);
}

TEST_F(SupervisorTest, ReapsExitedChildren) {
  auto sup = Supervisor::Open(dir_);
  ASSERT_TRUE(sup.ok());
  ASSERT_TRUE(sup->Launch({"quick", {"/bin/true"}}).ok());
  std::vector<std::string> exited;
  for (int i = 0; i < 100 && exited.empty(); ++i) {
    exited = sup->ReapExited();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(exited, std::vector<std::string>{"quick"});
}

}  // namespace
}  // namespace tessera::cluster
