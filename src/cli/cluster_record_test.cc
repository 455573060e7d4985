// Goal: a cluster directory records the layout and settings `cluster up`
// used, every later command gets them from there whatever its working
// directory, the recorded copy is immune to edits of its source, and a
// --layout or setting that differs is refused with a message saying what to do.
#include "cli/cluster_record.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cluster/layout_test_util.h"

namespace tessera::cli {
namespace {
namespace fs = std::filesystem;

const std::string kLayout =
    std::string("# a comment the copy keeps\n") + cluster::testing::kMinimalLayoutText;
constexpr const char* kExtraNode =
    "nodes { name: \"a2\" az: \"a\" host: \"127.0.0.1\" peer_port: 1007 http_port: 1008 }\n";

class ClusterRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tessera-record-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir_ = (root_ / "cluster").string();
    layout_ = (root_ / "layout.textproto").string();
    Write(layout_, kLayout);
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // `cluster up --layout layout_` with `settings`.
  void Up(const UpSettings& settings = {}) {
    auto choice = ChooseLayout(dir_, layout_);
    ASSERT_TRUE(choice.ok()) << choice.status().ToString();
    auto chosen = ChooseUpSettings(dir_, settings);
    ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
    ASSERT_TRUE(RecordCluster(dir_, *chosen, *choice).ok());
    EXPECT_TRUE(choice->recorded);
    EXPECT_EQ(choice->path, dir_ + "/layout.textproto");
  }

  fs::path root_;
  std::string dir_;
  std::string layout_;
};

TEST_F(ClusterRecordTest, WithoutRecordTheGivenLayoutIsUsedAsAnAbsolutePath) {
  auto choice = ChooseLayout(dir_, layout_);
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_FALSE(choice->recorded);
  EXPECT_EQ(choice->path, layout_);
  EXPECT_EQ(choice->layout.name(), "t");
}

TEST_F(ClusterRecordTest, WithoutRecordOrFlagTheShippedLayoutIsUsed) {
  auto path = DefaultLayoutPath();
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_TRUE(fs::path(*path).is_absolute());
  auto choice = ChooseLayout(dir_, "");
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->layout.name(), "local");
}

TEST_F(ClusterRecordTest, RecordedLayoutIsACopyFoundWithoutFlagFromAnyDirectory) {
  Up();
  EXPECT_EQ(Read(dir_ + "/layout.textproto"), kLayout);  // comments and all
  Write(layout_, std::string(kLayout) + kExtraNode);     // a later edit of the source
  const fs::path cwd = fs::current_path();
  fs::current_path("/");
  auto choice = ChooseLayout(dir_, "");
  fs::current_path(cwd);
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_TRUE(choice->recorded);
  EXPECT_EQ(choice->layout.nodes_size(), 3);
  EXPECT_EQ(choice->source, layout_);
}

TEST_F(ClusterRecordTest, TheSameLayoutUnderAnotherPathOrSpellingIsAccepted) {
  Up();
  const std::string same = (root_ / "same.textproto").string();
  std::string respelled = kLayout;
  respelled.replace(respelled.find("# a comment"), 1, "\n\n#");  // other text, same message
  Write(same, respelled);
  auto choice = ChooseLayout(dir_, same);
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_EQ(choice->path, dir_ + "/layout.textproto");
}

TEST_F(ClusterRecordTest, ADifferentLayoutIsRefusedSayingWhatToDo) {
  Up();
  const std::string other = (root_ / "large.textproto").string();
  Write(other, std::string(kLayout) + kExtraNode);
  auto choice = ChooseLayout(dir_, other);
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.status().code(), StatusCode::kInvalidArgument);
  const std::string message = choice.status().message();
  EXPECT_NE(message.find("--layout " + other + " differs"), std::string::npos) << message;
  EXPECT_NE(message.find(dir_ + "/layout.textproto"), std::string::npos) << message;
  EXPECT_NE(message.find("a2"), std::string::npos) << message;  // the first difference
  EXPECT_NE(message.find("leave --layout out"), std::string::npos) << message;
}

TEST_F(ClusterRecordTest, AnUnreadableLayoutFlagIsNamed) {
  Up();
  auto choice = ChooseLayout(dir_, "/nonexistent.textproto");
  ASSERT_FALSE(choice.ok());
  EXPECT_NE(choice.status().message().find("/nonexistent.textproto"), std::string::npos);
}

TEST_F(ClusterRecordTest, SettingsAreRecordedAndLaterUpsGetOrMustMatchThem) {
  auto fresh = ChooseUpSettings(dir_, {});
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->partitions, kDefaultKvPartitions);
  Up({0, {"g", "p"}, {"77:m"}});
  auto again = ChooseUpSettings(dir_, {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->partitions, kDefaultKvPartitions);
  EXPECT_EQ(again->kv_splits, (std::vector<std::string>{"g", "p"}));
  EXPECT_EQ(again->s3_splits, (std::vector<std::string>{"77:m"}));
  EXPECT_TRUE(ChooseUpSettings(dir_, {6, {"g", "p"}, {"77:m"}}).ok());
  auto partitions = ChooseUpSettings(dir_, {4, {}, {}});
  ASSERT_FALSE(partitions.ok());
  EXPECT_NE(partitions.status().message().find("--partitions 4 differs"), std::string::npos)
      << partitions.status().message();
  auto splits = ChooseUpSettings(dir_, {0, {"g"}, {}});
  ASSERT_FALSE(splits.ok());
  EXPECT_NE(splits.status().message().find("'g' 'p'"), std::string::npos)
      << splits.status().message();
  EXPECT_FALSE(ChooseUpSettings(dir_, {0, {}, {"78:m"}}).ok());
}

TEST_F(ClusterRecordTest, ARecordIsWrittenOnce) {
  Up({3, {}, {}});
  auto choice = ChooseLayout(dir_, "");
  ASSERT_TRUE(choice.ok());
  ASSERT_TRUE(RecordCluster(dir_, {5, {}, {}}, *choice).ok());  // already recorded: kept
  EXPECT_EQ(ChooseUpSettings(dir_, {})->partitions, 3u);
}

TEST_F(ClusterRecordTest, ACorruptRecordIsReportedNotIgnored) {
  Up();
  Write(dir_ + "/cluster_up.textproto", "partitions: \"six\"\n");
  auto choice = ChooseLayout(dir_, "");
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.status().code(), StatusCode::kCorruption);
  EXPECT_NE(choice.status().message().find("cluster_up.textproto"), std::string::npos);
}

}  // namespace
}  // namespace tessera::cli
