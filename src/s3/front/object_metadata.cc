#include "s3/front/object_metadata.h"

#include <algorithm>
#include <set>
#include <string>

#include "common/limits.h"
#include "s3/protocol/http_rules.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {

S3Status FillObjectMetadata(const S3Call& call, pb::ObjectVersion* out) {
  const http::Headers headers = call.AllHeaders();
  auto metadata = CollectUserMetadata(std::vector<HeaderField>(headers.begin(), headers.end()));
  if (!metadata.ok()) return metadata.error();
  auto header = [&call](std::string_view name) {
    return std::string(call.Header(name).value_or(""));
  };
  out->set_owner(call.user);
  out->set_content_type(
      std::string(call.Header("content-type").value_or("binary/octet-stream")));
  out->clear_content_encoding();
  if (auto encoding = call.Header("content-encoding")) {
    if (auto stripped = StripAwsChunked(*encoding)) out->set_content_encoding(*stripped);
  }
  out->set_content_disposition(header("content-disposition"));
  out->set_cache_control(header("cache-control"));
  out->set_content_language(header("content-language"));
  out->set_expires(header("expires"));
  const std::string storage_class = header("x-amz-storage-class");
  out->set_storage_class(storage_class == "STANDARD" ? "" : storage_class);
  out->clear_user_metadata();
  for (const auto& [name, value] : *metadata) {
    pb::MetadataPair* pair = out->add_user_metadata();
    pair->set_name(name.substr(std::string_view("x-amz-meta-").size()));
    pair->set_value(value);
  }
  return S3Status::Ok();
}

S3Result<std::vector<pb::MetadataPair>> ParseTaggingHeader(std::string_view value) {
  const S3Error malformed = InvalidArgumentError(
      "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters "
      "without tag name duplicates.",
      "x-amz-tagging", std::string(value));
  // An '=' left unencoded in a value, or a name given twice, is not the
  // encoding S3 asks for (AWS-recorded).
  for (size_t start = 0; start <= value.size();) {
    const size_t end = std::min(value.find('&', start), value.size());
    const std::string_view pair = value.substr(start, end - start);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.find('=', eq + 1) != std::string_view::npos) {
      return malformed;
    }
    start = end + 1;
  }
  auto params = ParseQuery(value);
  if (!params.ok()) return malformed;
  std::vector<Tag> tags;
  std::set<std::string> names;
  for (const QueryParam& p : *params) {
    if (!names.insert(p.name).second) return malformed;
    tags.push_back({p.name, p.value});
  }
  if (auto valid = ValidateTagSet(tags, limits::kS3ObjectTagsMax); !valid.ok()) {
    return valid.error();
  }
  std::vector<pb::MetadataPair> out;
  for (Tag& t : tags) {
    pb::MetadataPair pair;
    pair.set_name(std::move(t.key));
    pair.set_value(std::move(t.value));
    out.push_back(std::move(pair));
  }
  return out;
}

}  // namespace tessera::s3::front
