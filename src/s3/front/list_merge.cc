#include "s3/front/list_merge.h"

#include "common/check.h"

namespace tessera::s3::front {

std::string_view ListItemKey(const pb::S3ListItem& item) {
  return item.has_entry() ? std::string_view(item.entry().key())
                          : std::string_view(item.common_prefix());
}

namespace {

// Items of one range not merged yet: [next, items.size()).
struct RangeCursor {
  ListPage* page = nullptr;
  size_t next = 0;

  bool empty() const { return next >= page->items.size(); }
  const pb::S3ListItem& head() const { return page->items[next]; }
};

// A common prefix equal to the last one taken: met again in another range.
bool RepeatsPrefix(const pb::S3ListItem& item, const ListPage& out) {
  if (item.has_entry() || out.items.empty()) return false;
  const pb::S3ListItem& last = out.items.back();
  return !last.has_entry() && last.common_prefix() == item.common_prefix();
}

// The range whose head sorts first (the lowest range on equal keys); -1
// when every range is drained. A drained range with a full page stops the
// merge: its next items are unknown (never reached, see the contract).
int SmallestHead(const std::vector<RangeCursor>& cursors, bool* blocked) {
  int best = -1;
  for (size_t i = 0; i < cursors.size(); ++i) {
    if (cursors[i].empty()) {
      if (cursors[i].page->more) *blocked = true;
      continue;
    }
    if (best < 0 || ListItemKey(cursors[i].head()) < ListItemKey(cursors[best].head())) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

}  // namespace

ListPage MergeRangePages(std::vector<ListPage> pages, uint32_t max_items) {
  std::vector<RangeCursor> cursors;
  cursors.reserve(pages.size());
  for (ListPage& page : pages) {
    TESSERA_CHECK(page.items.size() <= max_items);
    cursors.push_back(RangeCursor{&page, 0});
  }
  ListPage out;
  bool blocked = false;
  while (out.items.size() < max_items) {
    const int i = SmallestHead(cursors, &blocked);
    if (i < 0 || blocked) break;
    RangeCursor& c = cursors[i];
    pb::S3ListItem& item = c.page->items[c.next++];
    if (RepeatsPrefix(item, out)) continue;
    out.items.push_back(std::move(item));
  }
  for (RangeCursor& c : cursors) {
    while (!c.empty() && RepeatsPrefix(c.head(), out)) ++c.next;
    if (!c.empty() || c.page->more) out.more = true;
  }
  return out;
}

}  // namespace tessera::s3::front
