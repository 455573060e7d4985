#include "s3/protocol/bucket_listing.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "common/base64.h"

namespace tessera::s3 {
namespace {

std::optional<std::string> Value(std::span<const QueryParam> params, std::string_view name) {
  const QueryParam* p = FindQueryParam(params, name);
  if (!p) return std::nullopt;
  return p->value;
}

// The AWS regions a client may name (2025). A bucket-region filter naming
// anything else is refused as AWS refuses it, not answered with no buckets.
constexpr std::string_view kAwsRegions[] = {
    "af-south-1",     "ap-east-1",      "ap-east-2",      "ap-northeast-1", "ap-northeast-2",
    "ap-northeast-3", "ap-south-1",     "ap-south-2",     "ap-southeast-1", "ap-southeast-2",
    "ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-7", "ca-central-1",
    "ca-west-1",      "cn-north-1",     "cn-northwest-1", "eu-central-1",   "eu-central-2",
    "eu-north-1",     "eu-south-1",     "eu-south-2",     "eu-west-1",      "eu-west-2",
    "eu-west-3",      "il-central-1",   "me-central-1",   "me-south-1",     "mx-central-1",
    "sa-east-1",      "us-east-1",      "us-east-2",      "us-gov-east-1",  "us-gov-west-1",
    "us-west-1",      "us-west-2"};

bool IsKnownRegion(std::string_view region, std::string_view own_region) {
  if (region == own_region) return true;
  return std::find(std::begin(kAwsRegions), std::end(kAwsRegions), region) !=
         std::end(kAwsRegions);
}

}  // namespace

S3Result<ListBucketsQuery> ParseListBucketsQuery(std::span<const QueryParam> params,
                                                 std::string_view own_region) {
  ListBucketsQuery q;
  if (auto max = Value(params, "max-buckets")) {
    int64_t value = -1;
    auto [end, ec] = std::from_chars(max->data(), max->data() + max->size(), value);
    if (ec != std::errc() || end != max->data() + max->size() || value < 1 ||
        value > kListBucketsPageMax) {
      return InvalidArgumentError("Argument max-buckets must be an integer between 1 and 10000",
                                  "max-buckets", *max);
    }
    q.max_buckets = static_cast<uint32_t>(value);
  }
  q.continuation_token = Value(params, "continuation-token");
  if (q.continuation_token && !q.continuation_token->empty()) {
    auto decoded = Base64Decode(*q.continuation_token);
    if (!decoded.ok() || decoded->empty()) {
      return InvalidArgumentError("The continuation token provided is incorrect",
                                  "continuation-token");
    }
    q.resume_after = std::move(decoded).value();
  }
  q.prefix = Value(params, "prefix");
  q.bucket_region = Value(params, "bucket-region");
  if (q.bucket_region && !IsKnownRegion(*q.bucket_region, own_region)) {
    return InvalidArgumentError(
        "Argument value " + *q.bucket_region + " is not a valid AWS Region", "bucket-region");
  }
  return q;
}

ListBucketsResult SelectBuckets(std::span<const BucketEntry> buckets, const ListBucketsQuery& query,
                                Owner owner) {
  std::vector<const BucketEntry*> matching;
  for (const BucketEntry& b : buckets) {
    if (query.prefix && !b.name.starts_with(*query.prefix)) continue;
    if (query.bucket_region && b.region != *query.bucket_region) continue;
    if (!query.resume_after.empty() && b.name <= query.resume_after) continue;
    matching.push_back(&b);
  }
  std::sort(matching.begin(), matching.end(),
            [](const BucketEntry* a, const BucketEntry* b) { return a->name < b->name; });
  ListBucketsResult result;
  result.owner = std::move(owner);
  result.prefix = query.prefix;
  const size_t page = query.max_buckets.value_or(query.paginated() ? kListBucketsPageMax
                                                                   : matching.size());
  for (size_t i = 0; i < matching.size() && i < page; ++i) result.buckets.push_back(*matching[i]);
  if (matching.size() > page) result.continuation_token = Base64Encode(result.buckets.back().name);
  return result;
}

}  // namespace tessera::s3
