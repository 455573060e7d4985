// Goal: merging the per-hash-range pages of a listing gives, page for
// page, what one ordered listing of the same keys gives (prefix,
// delimiter, start-after, page sizes), common prefixes once.
#include "s3/front/list_merge.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "s3/model/key_layout.h"

namespace tessera::s3::front {
namespace {

pb::S3ListItem Entry(const std::string& key) {
  pb::S3ListItem item;
  item.mutable_entry()->set_key(key);
  return item;
}
pb::S3ListItem Prefix(const std::string& prefix) {
  pb::S3ListItem item;
  item.set_common_prefix(prefix);
  return item;
}

// What the partition listing answers for `keys` (model/listing.cc): keys
// past start_after under prefix, each common prefix once (and only past
// start_after), at most max items.
ListPage ReferenceList(const std::set<std::string>& keys, const std::string& prefix,
                       const std::string& delimiter, const std::string& start_after,
                       uint32_t max) {
  ListPage page;
  std::string last_prefix;
  for (const std::string& key : keys) {
    if (key <= start_after || !key.starts_with(prefix)) continue;
    const size_t at = delimiter.empty() ? std::string::npos : key.find(delimiter, prefix.size());
    if (at == std::string::npos) {
      page.items.push_back(Entry(key));
    } else {
      const std::string common = key.substr(0, at + delimiter.size());
      if (common == last_prefix || common <= start_after) continue;
      last_prefix = common;
      page.items.push_back(Prefix(common));
    }
    if (page.items.size() == max) {
      page.more = true;  // ObjectIndex's walk: more on a full page
      break;
    }
  }
  return page;
}

std::vector<std::string> Keys(const ListPage& page) {
  std::vector<std::string> out;
  for (const pb::S3ListItem& item : page.items) {
    out.push_back((item.has_entry() ? "E:" : "P:") + std::string(ListItemKey(item)));
  }
  return out;
}

// Pages through both layouts as a client does (max+1 asked, the last shown
// item as the next start) and compares every page.
void ExpectSamePages(const std::set<std::string>& keys, uint32_t ranges, const std::string& prefix,
                     const std::string& delimiter, uint32_t page_size) {
  const model::KeyLayout layout{ranges};
  std::map<uint8_t, std::set<std::string>> by_range;
  for (const std::string& key : keys) by_range[model::HashRangeOf(layout, key)].insert(key);
  std::string start;
  for (int pages = 0; pages < 10000; ++pages) {
    const ListPage ordered = ReferenceList(keys, prefix, delimiter, start, page_size + 1);
    std::vector<ListPage> range_pages;
    for (uint32_t h = 1; h <= ranges; ++h) {
      range_pages.push_back(ReferenceList(by_range[h], prefix, delimiter, start, page_size + 1));
    }
    const ListPage merged = MergeRangePages(std::move(range_pages), page_size + 1);
    ASSERT_EQ(Keys(merged), Keys(ordered)) << "page " << pages << " after '" << start << "'";
    // Truncation shows in the size (one item more than the page asked).
    if (merged.more) EXPECT_EQ(merged.items.size(), page_size + 1);
    if (ordered.items.size() <= page_size) return;
    start = std::string(ListItemKey(ordered.items[page_size - 1]));
  }
  FAIL() << "did not finish";
}

std::set<std::string> MixedKeys() {
  std::set<std::string> keys;
  for (int i = 0; i < 120; ++i) keys.insert("seq-" + std::to_string(10000 + i));
  for (int d = 1; d <= 5; ++d) {
    for (int i = 0; i < 15; ++i) {
      keys.insert("2024-01-0" + std::to_string(d) + "/log-" + std::to_string(i));
    }
  }
  for (int i = 0; i < 20; ++i) {
    keys.insert("a/b/c/" + std::to_string(i));
    keys.insert("a/b/" + std::to_string(i));
    keys.insert("a/" + std::to_string(i));
  }
  keys.insert("a/");
  keys.insert("a");
  keys.insert("z");
  return keys;
}

TEST(ListMergeTest, SameAsOrderedListingForEveryShape) {
  const std::set<std::string> keys = MixedKeys();
  for (const uint32_t ranges : {2u, 8u, 255u}) {
    for (const std::string prefix : {"", "a/", "2024-01-0", "seq-1001", "none"}) {
      for (const std::string delimiter : {"", "/", "-"}) {
        for (const uint32_t page : {1u, 2u, 7u, 1000u}) {
          SCOPED_TRACE("ranges " + std::to_string(ranges) + " prefix '" + prefix +
                       "' delimiter '" + delimiter + "' page " + std::to_string(page));
          ExpectSamePages(keys, ranges, prefix, delimiter, page);
        }
      }
    }
  }
}

TEST(ListMergeTest, CommonPrefixFromManyRangesAppearsOnce) {
  std::vector<ListPage> pages(3);
  pages[0].items = {Prefix("a/"), Entry("b")};
  pages[1].items = {Prefix("a/"), Prefix("c/")};
  pages[2].items = {Entry("a"), Prefix("a/")};
  const ListPage merged = MergeRangePages(std::move(pages), 3);
  EXPECT_EQ(Keys(merged), (std::vector<std::string>{"E:a", "P:a/", "E:b"}));
  EXPECT_TRUE(merged.more);  // c/ is left
}

TEST(ListMergeTest, NoMoreWhenOnlyRepeatsOfTheLastPrefixRemain) {
  std::vector<ListPage> pages(2);
  pages[0].items = {Entry("a"), Prefix("b/")};
  pages[1].items = {Prefix("b/")};
  const ListPage merged = MergeRangePages(std::move(pages), 2);
  EXPECT_EQ(Keys(merged), (std::vector<std::string>{"E:a", "P:b/"}));
  EXPECT_FALSE(merged.more);
}

TEST(ListMergeTest, VersionsOfOneKeyKeepTheirRangeOrder) {
  std::vector<ListPage> pages(2);
  for (const char* v : {"3", "2", "1"}) {
    pb::S3ListItem item = Entry("k");
    item.mutable_entry()->set_version_id(v);
    pages[1].items.push_back(item);
  }
  pages[0].items = {Entry("j"), Entry("l")};
  const ListPage merged = MergeRangePages(std::move(pages), 10);
  ASSERT_EQ(merged.items.size(), 5u);
  EXPECT_EQ(merged.items[1].entry().version_id(), "3");
  EXPECT_EQ(merged.items[2].entry().version_id(), "2");
  EXPECT_EQ(merged.items[3].entry().version_id(), "1");
  EXPECT_EQ(merged.items[4].entry().key(), "l");
  EXPECT_FALSE(merged.more);
}

}  // namespace
}  // namespace tessera::s3::front
