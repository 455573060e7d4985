// ListObjects (v1) and ListObjectsV2: one ObjectIndex walk of max-keys + 1
// items (the extra one makes IsTruncated exact).
#include "admission/capacity_units.h"
#include "s3/auth/checksum.h"
#include "s3/front/charge_rest.h"
#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

constexpr uint32_t kMaxKeysDefault = 1000;

struct ListParams {
  bool v2 = false;
  std::string prefix;
  std::optional<std::string> delimiter;
  std::string marker;                      // v1
  std::optional<std::string> start_after;  // v2
  std::optional<std::string> continuation_token;  // v2, as sent
  std::string resume_after;                // decoded token (v2)
  uint32_t max_keys = kMaxKeysDefault;
  bool encoding_url = false;
  bool fetch_owner = false;
};

std::optional<std::string> ParamValue(const S3Call& call, std::string_view name) {
  const QueryParam* p = call.Param(name);
  if (!p) return std::nullopt;
  return p->value;
}

S3Result<ListParams> ParseListParams(const S3Call& call) {
  ListParams p;
  p.v2 = ParamValue(call, "list-type").value_or("") == "2";
  p.prefix = ParamValue(call, "prefix").value_or("");
  p.delimiter = ParamValue(call, "delimiter");
  if (p.delimiter && p.delimiter->empty()) p.delimiter.reset();  // empty delimiter = none
  p.marker = ParamValue(call, "marker").value_or("");
  p.start_after = ParamValue(call, "start-after");
  p.continuation_token = ParamValue(call, "continuation-token");
  auto max_keys = ParseListLimit(call, "max-keys", kMaxKeysDefault);
  if (!max_keys.ok()) return max_keys.error();
  p.max_keys = *max_keys;
  auto encoding_url = ParseEncodingType(call);
  if (!encoding_url.ok()) return encoding_url.error();
  p.encoding_url = *encoding_url;
  p.fetch_owner = ParamValue(call, "fetch-owner").value_or("") == "true";
  if (p.continuation_token) {
    auto decoded = auth::Base64Decode(*p.continuation_token);
    if (!decoded.ok() || decoded->empty()) {
      return InvalidArgumentError("The continuation token provided is incorrect",
                                  "continuation-token");
    }
    p.resume_after = std::move(decoded).value();
  }
  return p;
}

// Where the walk starts: after the marker / start-after / token.
std::string StartAfter(const ListParams& p) {
  if (!p.v2) return p.marker;
  if (p.continuation_token) return p.resume_after;
  return p.start_after.value_or("");
}

// Takes the entry's strings: the page is not read after Answer.
ObjectEntry EntryOf(const S3Call& call, pb::S3ListEntry&& e) {
  ObjectEntry out;
  out.key = std::move(*e.mutable_key());
  out.last_modified_ms = e.last_modified_ms();
  out.etag = QuoteEtag(e.etag());
  out.size = e.size();
  if (!e.storage_class().empty()) out.storage_class = std::move(*e.mutable_storage_class());
  out.checksum_algorithm = std::move(*e.mutable_checksum_algorithm());
  out.checksum_type = std::move(*e.mutable_checksum_type());
  out.owner = OwnerOfUser(call, e.owner());
  return out;
}

void Answer(CallPtr call, const ListParams& p, ListPage page) {
  const bool truncated = page.items.size() > p.max_keys;
  if (truncated) page.items.resize(p.max_keys);
  std::vector<ObjectEntry> contents;
  std::vector<std::string> prefixes;
  std::string last;
  contents.reserve(page.items.size());
  ChargeListed(*call, page);
  for (pb::S3ListItem& item : page.items) {
    if (item.has_entry()) {
      last = item.entry().key();
      contents.push_back(EntryOf(*call, std::move(*item.mutable_entry())));
    } else {
      last = item.common_prefix();
      prefixes.push_back(std::move(*item.mutable_common_prefix()));
    }
  }
  if (!p.v2) {
    ListObjectsV1Result r;
    r.bucket = call->bucket;
    r.prefix = p.prefix;
    r.marker = p.marker;
    r.delimiter = p.delimiter;
    r.max_keys = p.max_keys;
    r.is_truncated = truncated;
    if (truncated && p.delimiter) r.next_marker = last;
    r.encoding_url = p.encoding_url;
    r.contents = std::move(contents);
    r.common_prefixes = std::move(prefixes);
    return call->RespondXml(200, ListObjectsV1Xml(r),
                            {{"x-amz-bucket-region", call->bucket_info.region()}});
  }
  ListObjectsV2Result r;
  r.bucket = call->bucket;
  r.prefix = p.prefix;
  r.delimiter = p.delimiter;
  r.max_keys = p.max_keys;
  r.is_truncated = truncated;
  r.continuation_token = p.continuation_token;
  if (truncated) r.next_continuation_token = auth::Base64Encode(last);
  if (!p.continuation_token) r.start_after = p.start_after;  // S3 echoes it on the first page only
  r.encoding_url = p.encoding_url;
  r.fetch_owner = p.fetch_owner;
  r.contents = std::move(contents);
  r.common_prefixes = std::move(prefixes);
  call->RespondXml(200, ListObjectsV2Xml(r), {{"x-amz-bucket-region", call->bucket_info.region()}});
}

}  // namespace

void ListObjects(CallPtr call) {
  auto params = ParseListParams(*call);
  if (!params.ok()) return call->Fail(params.error());
  WithAuthorizedBucket(call, authz::Action::kListBucket, [call, p = std::move(params).value()] {
    if (p.max_keys == 0) return Answer(call, p, ListPage{});
    ListQuery query;
    query.bucket_id = call->bucket_info.bucket_id();
    query.layout = model::KeyLayoutOf(call->bucket_info);
    query.prefix = p.prefix;
    query.delimiter = p.delimiter.value_or("");
    query.start_after = StartAfter(p);
    query.max_items = p.max_keys + 1;
    call->front.index().List(query, [call, p](Result<ListPage> page) {
      if (!page.ok()) return call->Fail(page.status());
      Answer(call, p, std::move(page).value());
    });
  });
}

}  // namespace tessera::s3::front
