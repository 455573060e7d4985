// The merge of a hashed bucket's listing (docs/formats/s3-keys.md, "Hashed
// layout"): each hash range is listed on its own (an ordered walk of the
// stored keys `B h prefix..`), its keys stripped of the range byte, and
// the range pages are merged here into the page the ordered layout would
// have answered.
//
// Contract of MergeRangePages (pure):
//  - each input page is one range's first items past the start, in key
//    order, at most max_items of them; `more` set on a full page (what
//    ObjectIndex's walk answers; a short page with `more` stops the merge
//    when drained, so the result is short but never wrong);
//  - the result holds the first max_items distinct items of the union in
//    key order: entries of one key keep their range's order (versions), a
//    common prefix met in several ranges appears once;
//  - every item of the result comes from a range's page: a range that
//    contributes k items contributes its first k, so no range needs a
//    second page (each holds max_items items and all of them would come
//    first);
//  - `more`: some range holds an item past the result (buffered, or past
//    its full page).
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tessera/s3.pb.h"

namespace tessera::s3::front {

struct ListPage {
  std::vector<pb::S3ListItem> items;
  bool more = false;
};

// The key an item sorts by: its entry's key, or its common prefix.
std::string_view ListItemKey(const pb::S3ListItem& item);

ListPage MergeRangePages(std::vector<ListPage> pages, uint32_t max_items);

}  // namespace tessera::s3::front
