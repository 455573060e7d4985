// Goal: a revoked token is named in the list by its signature until it
// would have expired; only valid tokens of the store can be revoked;
// expired entries leave the file on the next change; a watcher sees a
// change once its recheck interval passed, keeps its list when the file
// turns to garbage, and every other token stays valid.
#include "router/token_revocations.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace tessera::router {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kNow = 1'800'000'000;

class TokenRevocationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tessera_revocations_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "revoked_tokens").string();
    ASSERT_TRUE(store_.Add(Credential{"alice", "alice-secret-0123456789"}).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Read() const {
    std::ifstream in(path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path dir_;
  std::string path_;
  CredentialStore store_;
};

TEST_F(TokenRevocationsTest, RevokesValidTokensOnlyAndForgetsThemAfterExpiry) {
  const Credential alice = store_.First();
  const std::string token = IssueToken(alice, kNow + 600);
  const std::string other = IssueToken(alice, kNow + 700);
  TokenRevocations watcher(path_, 0ms);
  EXPECT_FALSE(watcher.Revoked(TokenSignature(token))) << "no file: nothing revoked";

  ASSERT_TRUE(RevokeToken(path_, store_, token, kNow).ok());
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(Read().find(std::string(TokenSignature(token)) + " " + std::to_string(kNow + 600)),
            std::string::npos);
  EXPECT_TRUE(watcher.Revoked(TokenSignature(token)));
  EXPECT_FALSE(watcher.Revoked(TokenSignature(other)));
  EXPECT_TRUE(RevokeToken(path_, store_, token, kNow).ok()) << "again: still OK";

  // Forged, foreign and expired tokens are not "revoked": they are refused.
  std::string forged = token;
  forged.back() = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(RevokeToken(path_, store_, forged, kNow).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RevokeToken(path_, store_, "tk1.nobody.1.00", kNow).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RevokeToken(path_, store_, token, kNow + 600).code(), StatusCode::kInvalidArgument);

  // Once the first has expired, the next change drops it from the file.
  ASSERT_TRUE(RevokeToken(path_, store_, other, kNow + 650).ok());
  EXPECT_EQ(Read().find(std::string(TokenSignature(token))), std::string::npos);
  EXPECT_NE(Read().find(std::string(TokenSignature(other))), std::string::npos);
}

TEST_F(TokenRevocationsTest, AWatcherRereadsAfterItsIntervalAndSurvivesGarbage) {
  const Credential alice = store_.First();
  const std::string first = IssueToken(alice, kNow + 600);
  const std::string second = IssueToken(alice, kNow + 601);
  ASSERT_TRUE(RevokeToken(path_, store_, first, kNow).ok());
  TokenRevocations watcher(path_, 200ms);
  EXPECT_TRUE(watcher.Revoked(TokenSignature(first)));
  ASSERT_TRUE(RevokeToken(path_, store_, second, kNow).ok());
  EXPECT_FALSE(watcher.Revoked(TokenSignature(second))) << "read again before the interval";
  std::this_thread::sleep_for(250ms);
  EXPECT_TRUE(watcher.Revoked(TokenSignature(second)));
  // Garbage: the last good list stays in force.
  std::ofstream(path_) << "not a revocation line\n";
  std::this_thread::sleep_for(250ms);
  EXPECT_TRUE(watcher.Revoked(TokenSignature(first)));
  EXPECT_TRUE(watcher.Revoked(TokenSignature(second)));
  // And RevokeToken refuses to rewrite a file it cannot read.
  EXPECT_EQ(RevokeToken(path_, store_, first, kNow).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::router
