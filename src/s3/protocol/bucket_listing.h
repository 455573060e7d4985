// ListBuckets' query (max-buckets, continuation-token, prefix, bucket-region)
// and the page it selects from a user's buckets. Pure: the S3 front fetches
// the user's buckets from the registry and renders the page.
//
// Contract of the paginated form, as S3 answers it: buckets come in name
// order; a page holds at most max-buckets of them; ContinuationToken is
// present exactly when buckets remain after the page, and is opaque to
// clients (here the base64 of the page's last name, so a token stays valid
// while buckets come and go: the next page starts after that name). Prefix
// is echoed when the request named one. Without max-buckets and a token,
// every matching bucket is listed and no token is returned.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "s3/protocol/http_rules.h"
#include "s3/protocol/s3_result.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3 {

// S3's bounds on max-buckets.
inline constexpr uint32_t kListBucketsPageMax = 10'000;

struct ListBucketsQuery {
  std::optional<uint32_t> max_buckets;
  std::optional<std::string> continuation_token;  // as sent; "" = from the start
  std::string resume_after;                       // decoded token
  std::optional<std::string> prefix;
  std::optional<std::string> bucket_region;
  bool paginated() const { return max_buckets.has_value() || continuation_token.has_value(); }
};

// InvalidArgument for max-buckets outside 1..10000 or not a number, for a
// continuation token that does not decode, and for a bucket-region that is
// neither an AWS region nor `own_region` (the cluster's).
S3Result<ListBucketsQuery> ParseListBucketsQuery(std::span<const QueryParam> params,
                                                 std::string_view own_region);

// The page of `buckets` (any order) that `query` selects; `owner` as given.
ListBucketsResult SelectBuckets(std::span<const BucketEntry> buckets, const ListBucketsQuery& query,
                                Owner owner);

}  // namespace tessera::s3
