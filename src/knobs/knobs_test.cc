// Goal: the knob table is well formed (unique names, defaults within
// bounds, units last in names, where-set filled in) and renders every knob in
// every format.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "knobs/knob_render.h"
#include "knobs/knobs.h"

namespace tessera::knobs {
namespace {

TEST(Knobs, NamesUniqueAndPrefixedByTheirProcess) {
  std::set<std::string_view> names;
  for (const KnobInfo& k : kAllKnobs) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    const std::string prefix = std::string(KnobProcessName(k.process)) + ".";
    EXPECT_EQ(k.name.substr(0, prefix.size()), prefix) << k.name;
    EXPECT_EQ(FindKnob(k.name), &k);
  }
  EXPECT_EQ(FindKnob("node.no_such_knob"), nullptr);
}

TEST(Knobs, EveryDefaultWithinItsBounds) {
  for (const KnobInfo& k : kAllKnobs) {
    EXPECT_TRUE(WithinBounds(k.default_value, k)) << k.name;
    if (k.kind == KnobKind::kUnsigned) {
      EXPECT_LE(k.min.unsigned_value, k.max.unsigned_value) << k.name;
    }
    if (k.kind == KnobKind::kDouble) {
      EXPECT_LE(k.min.double_value, k.max.double_value) << k.name;
    }
  }
}

// A knob that fails the bounds check: the checker is not vacuous.
TEST(Knobs, WithinBoundsRejectsOutside) {
  const KnobInfo lease = Describe(kAutoadminLeaseMs);
  EXPECT_FALSE(WithinBounds(KnobValue::Of<uint32_t>(lease.min.unsigned_value - 1), lease));
  EXPECT_FALSE(WithinBounds(KnobValue::Of<uint32_t>(lease.max.unsigned_value + 1), lease));
  EXPECT_TRUE(WithinBounds(KnobValue::Of<uint32_t>(lease.max.unsigned_value), lease));
  const KnobInfo rate = Describe(kRouterS3BucketRate);
  EXPECT_FALSE(WithinBounds(KnobValue::Of<double>(-1), rate));
}

TEST(Knobs, UnitLastInTheName) {
  const std::pair<KnobUnit, std::string_view> kSuffixes[] = {
      {KnobUnit::kMs, "_ms"}, {KnobUnit::kS, "_s"}, {KnobUnit::kMib, "_mib"}};
  for (const KnobInfo& k : kAllKnobs) {
    for (const auto& [unit, suffix] : kSuffixes) {
      if (k.unit != unit) continue;
      ASSERT_GE(k.name.size(), suffix.size());
      EXPECT_EQ(k.name.substr(k.name.size() - suffix.size()), suffix) << k.name;
    }
  }
}

TEST(Knobs, EveryKnobSaysWhereItIsSetAndWhatItMeans) {
  for (const KnobInfo& k : kAllKnobs) {
    EXPECT_FALSE(k.meaning.empty()) << k.name;
    EXPECT_FALSE(k.options_field.empty()) << k.name;
    if (!k.layout_field.empty()) {
      EXPECT_EQ(FindKnobByLayoutField(k.layout_field), &k);
    }
  }
}

TEST(Knobs, TypedDefaultsAreTheTablesDefaults) {
  EXPECT_EQ(kNodeGcIntervalMs.default_value, FindKnob("node.gc_interval_ms")->default_value.unsigned_value);
  EXPECT_EQ(kRouterS3Region.default_value, FindKnob("router.s3_region")->default_value.text_value);
  EXPECT_EQ(kAutoadminBalanceLeaders.default_value,
            FindKnob("autoadmin.balance_leaders")->default_value.bool_value);
}

TEST(KnobRender, ValuesAndBounds) {
  EXPECT_EQ(FormatKnobValue(KnobValue::Of<uint32_t>(4 << 20), KnobUnit::kBytes), "4 MiB");
  EXPECT_EQ(FormatKnobValue(KnobValue::Of<uint64_t>(1000), KnobUnit::kBytes), "1000");
  EXPECT_EQ(FormatKnobValue(KnobValue::Of<double>(20'000), KnobUnit::kPerS), "20000");
  EXPECT_EQ(FormatKnobBounds(Describe(kNodeSnapshotChunkBytes)), "1 KiB..4 MiB");
  EXPECT_EQ(FormatKnobBounds(Describe(kAutoadminLeaseMs)), "1000..60000 ms");
  EXPECT_EQ(FormatKnobBounds(Describe(kRouterS3Region)), "-");
}

TEST(KnobRender, EveryFormatListsEveryKnob) {
  const std::string text = RenderKnobsText();
  const std::string markdown = RenderKnobsMarkdown();
  const std::string json = RenderKnobsJson();
  for (const KnobInfo& k : kAllKnobs) {
    EXPECT_NE(text.find(std::string(k.name) + " = "), std::string::npos) << k.name;
    EXPECT_NE(markdown.find("| `" + std::string(k.name) + "` |"), std::string::npos) << k.name;
    EXPECT_NE(json.find("\"name\": \"" + std::string(k.name) + "\""), std::string::npos) << k.name;
  }
}

TEST(KnobRender, TextFitsATerminal) {
  std::istringstream lines(RenderKnobsText());
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
}

}  // namespace
}  // namespace tessera::knobs
