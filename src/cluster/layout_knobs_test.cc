// Goal: every setting of the layout (cluster.proto's *Settings messages) is
// a knob of the registry with a matching type, and a layout setting outside
// its knob's bounds is refused with a message naming the knob, its bounds
// and its unit.
#include "cluster/layout_knobs.h"

#include <gtest/gtest.h>
#include <google/protobuf/descriptor.h>

#include "cluster/layout.h"
#include "cluster/layout_test_util.h"
#include "knobs/knobs.h"

namespace tessera::cluster {
namespace {

using google::protobuf::FieldDescriptor;

knobs::KnobKind KindOfField(const FieldDescriptor& field) {
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE: return knobs::KnobKind::kDouble;
    case FieldDescriptor::CPPTYPE_BOOL: return knobs::KnobKind::kBool;
    case FieldDescriptor::CPPTYPE_STRING: return knobs::KnobKind::kText;
    default: return knobs::KnobKind::kUnsigned;
  }
}

TEST(LayoutKnobs, TheFourSettingsMessagesAreFound) {
  const std::vector<std::string> fields = LayoutSettingsFields();
  for (const char* expected : {"router_settings", "node_settings", "meta_settings", "autoadmin_settings"}) {
    EXPECT_NE(std::find(fields.begin(), fields.end(), expected), fields.end()) << expected;
  }
}

// Fails when someone adds a setting to cluster.proto without a knob.
TEST(LayoutKnobs, EverySettingHasAKnob) {
  const auto* layout = pb::ClusterLayout::descriptor();
  size_t settings = 0;
  for (const std::string& name : LayoutSettingsFields()) {
    const auto* message = layout->FindFieldByName(name)->message_type();
    for (int i = 0; i < message->field_count(); ++i) {
      const FieldDescriptor* field = message->field(i);
      ++settings;
      const std::string path = name + "." + field->name();
      const knobs::KnobInfo* knob = knobs::FindKnobByLayoutField(path);
      ASSERT_NE(knob, nullptr) << path << " has no knob in src/knobs/knobs.h";
      EXPECT_EQ(knob->kind, KindOfField(*field)) << path;
      EXPECT_FALSE(field->is_repeated()) << path;
    }
  }
  EXPECT_GE(settings, 27u);
}

// And the other way: every knob that names a layout field names a real one.
TEST(LayoutKnobs, EveryKnobsLayoutFieldExists) {
  const auto* layout = pb::ClusterLayout::descriptor();
  for (const knobs::KnobInfo& k : knobs::kAllKnobs) {
    if (k.layout_field.empty()) continue;
    const std::string path(k.layout_field);
    const size_t dot = path.find('.');
    ASSERT_NE(dot, std::string::npos) << path;
    const FieldDescriptor* outer = layout->FindFieldByName(path.substr(0, dot));
    ASSERT_NE(outer, nullptr) << path;
    ASSERT_NE(outer->message_type(), nullptr) << path;
    EXPECT_NE(outer->message_type()->FindFieldByName(path.substr(dot + 1)), nullptr) << path;
  }
}

void ExpectRefused(const std::string& settings, const std::string& message_part) {
  auto layout = ParseLayout(std::string(testing::kMinimalLayoutText) + settings);
  ASSERT_FALSE(layout.ok()) << settings;
  EXPECT_NE(layout.status().message().find(message_part), std::string::npos) << layout.status().ToString();
}

TEST(LayoutKnobs, BoundsViolationsAreRefusedNamingKnobBoundsAndUnit) {
  ExpectRefused("node_settings { gc_interval_ms: 4000000 }",
                "node_settings.gc_interval_ms = 4000000 is out of bounds for knob node.gc_interval_ms: "
                "0..3600000 ms");
  ExpectRefused("node_settings { snapshot_chunk_bytes: 100 }",
                "node_settings.snapshot_chunk_bytes = 100 is out of bounds for knob "
                "node.snapshot_chunk_bytes: 1 KiB..4 MiB");
  ExpectRefused("autoadmin_settings { lease_ms: 500 }",
                "knob autoadmin.lease_ms: 1000..60000 ms");
  ExpectRefused("router_settings { s3_bucket_rate: -1 }",
                "router_settings.s3_bucket_rate = -1 is out of bounds for knob router.s3_bucket_rate: "
                "0..1000000000 requests/s");
  ExpectRefused("meta_settings { s3_user_buckets_max: 0 }", "knob meta.s3_user_buckets_max: 1..50000");
  ExpectRefused("router_settings { io_threads: 9 }", "knob router.io_threads: 0..8 threads");
}

TEST(LayoutKnobs, ValuesWithinBoundsAndUnsetDefaultsAreAccepted) {
  const std::string text = std::string(testing::kMinimalLayoutText) +
                           "node_settings { gc_interval_ms: 0 snapshot_chunk_bytes: 4096 io_threads: 0 }\n"
                           "router_settings { s3_region: \"eu-west-1\" s3_min_part_bytes: 0 s3_user_rate: 0 }\n"
                           "autoadmin_settings { lease_ms: 1000 balance_leaders: false }\n"
                           "meta_settings { s3_user_buckets_max: 50000 }\n";
  auto layout = ParseLayout(text);
  EXPECT_TRUE(layout.ok()) << layout.status().ToString();
}

}  // namespace
}  // namespace tessera::cluster
