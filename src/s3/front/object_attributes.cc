// GetObjectAttributes (GET ?attributes): one strong read of the latest
// version (or the one versionId names), without its bytes, answered with
// the sections x-amz-object-attributes asks for. A multipart object's
// ObjectParts lists its parts (number, size, checksum) a page at a time
// (x-amz-max-parts, x-amz-part-number-marker) when it was completed with a
// checksum algorithm; otherwise, as in S3, only PartsCount.
#include <charconv>
#include <limits>
#include <string>
#include <string_view>

#include "s3/front/s3_call.h"
#include "s3/front/s3_front.h"
#include "s3/model/full_object_checksum.h"
#include "s3/protocol/xml_documents.h"

namespace tessera::s3::front {
namespace {

// A page holds at most this many parts, as in S3.
constexpr uint32_t kAttributePartsPerPageMax = 1000;

struct AttributeRequest {
  bool etag = false;
  bool checksum = false;
  bool object_parts = false;
  bool storage_class = false;
  bool object_size = false;
  uint32_t max_parts = kAttributePartsPerPageMax;
  uint32_t part_number_marker = 0;
};

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

S3Error InvalidAttributeError() {
  return InvalidArgumentError("Invalid attribute name specified.", "x-amz-object-attributes");
}

// x-amz-max-parts / x-amz-part-number-marker: absent -> `absent`; else an
// integer in [0, 2^31).
S3Result<uint32_t> ParsePartsHeader(const S3Call& call, const char* name, uint32_t absent) {
  auto value = call.Header(name);
  if (!value) return absent;
  const std::string_view text = TrimSpaces(*value);
  int64_t n = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < 0 ||
      n > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError("Provided " + std::string(name) +
                                    " not an integer or within integer range",
                                name, std::string(*value));
  }
  return static_cast<uint32_t>(n);
}

// x-amz-object-attributes is required: a comma-separated list of ETag,
// Checksum, ObjectParts, StorageClass, ObjectSize; any other name (or none)
// is InvalidArgument.
S3Result<AttributeRequest> ParseAttributeRequest(const S3Call& call) {
  AttributeRequest request;
  http::Headers all = call.AllHeaders();
  bool any = false;
  for (const auto& [name, value] : all) {
    if (!HeaderNameEquals(name, "x-amz-object-attributes")) continue;
    std::string_view rest = value;
    while (true) {
      const size_t comma = rest.find(',');
      const std::string_view item = TrimSpaces(rest.substr(0, comma));
      if (item == "ETag") {
        request.etag = true;
      } else if (item == "Checksum") {
        request.checksum = true;
      } else if (item == "ObjectParts") {
        request.object_parts = true;
      } else if (item == "StorageClass") {
        request.storage_class = true;
      } else if (item == "ObjectSize") {
        request.object_size = true;
      } else {
        return InvalidAttributeError();
      }
      any = true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (!any) return InvalidAttributeError();
  auto max_parts = ParsePartsHeader(call, "x-amz-max-parts", kAttributePartsPerPageMax);
  if (!max_parts.ok()) return max_parts.error();
  request.max_parts = std::min(*max_parts, kAttributePartsPerPageMax);
  auto marker = ParsePartsHeader(call, "x-amz-part-number-marker", 0);
  if (!marker.ok()) return marker.error();
  request.part_number_marker = *marker;
  return request;
}

ObjectAttributesResult Attributes(const AttributeRequest& request, const pb::ObjectVersion& v) {
  ObjectAttributesResult r;
  if (request.etag) r.etag = v.etag();
  if (v.checksums_size() > 0) r.checksum_algorithm = v.checksums(0).algorithm();
  if (request.checksum && v.checksums_size() > 0) {
    const std::string& value = v.checksums(0).value();
    const bool composite = model::IsCompositeChecksum(value);
    // A composite checksum's "-N" is the part count, given in ObjectParts.
    r.checksum_value = composite ? value.substr(0, value.rfind('-')) : value;
    r.checksum_type = composite ? "COMPOSITE" : "FULL_OBJECT";
  }
  if (request.object_parts && v.parts_count() > 0) {
    r.object_parts = true;
    r.parts_count = v.parts_count();
    const uint32_t listed = static_cast<uint32_t>(v.part_offsets_size());
    if (listed > 0 && v.part_checksums_size() == v.part_offsets_size() &&
        !r.checksum_algorithm.empty()) {
      r.part_list = true;
      r.part_number_marker = request.part_number_marker;
      r.max_parts = request.max_parts;
      uint32_t number = request.part_number_marker;  // parts are numbered 1..listed
      while (number < listed && r.parts.size() < request.max_parts) {
        const uint64_t start = v.part_offsets(static_cast<int>(number));
        const uint64_t end =
            number + 1 < listed ? v.part_offsets(static_cast<int>(number + 1)) : v.size();
        r.parts.push_back({number + 1, end - start, v.part_checksums(static_cast<int>(number))});
        ++number;
      }
      r.is_truncated = number < listed;
      r.next_part_number_marker = r.parts.empty() ? request.part_number_marker : number;
    }
  }
  if (request.storage_class) {
    r.storage_class = v.storage_class().empty() ? "STANDARD" : v.storage_class();
  }
  if (request.object_size) r.object_size = v.size();
  return r;
}

void AnswerAttributes(CallPtr call, const AttributeRequest& request, const pb::ObjectVersion& v) {
  http::Headers headers;
  headers.emplace_back("Last-Modified", FormatHttpDate(v.last_modified_ms()));
  AddWrittenVersionHeader(call->bucket_info, v.version_id(), headers);
  call->RespondXml(200, ObjectAttributesXml(Attributes(request, v)), std::move(headers));
}

}  // namespace

void GetObjectAttributes(CallPtr call) {
  auto request = ParseAttributeRequest(*call);
  if (!request.ok()) return call->Fail(request.error());
  WithAuthorizedBucket(call, ByVersion(*call, authz::Action::kGetObjectAttributes, authz::Action::kGetObjectVersionAttributes),
                       [call, request = *request] {
    if (const QueryParam* version = call->Param("versionId")) {
      return WithVersion(call, call->bucket_info.bucket_id(), call->key, version->value,
                         /*with_data=*/false, [call, request](pb::ObjectVersion v) {
                           if (v.delete_marker()) {
                             return call->Fail(DeleteMarkerMethodError("GET"),
                                               {{"x-amz-delete-marker", "true"},
                                                {"Last-Modified",
                                                 FormatHttpDate(v.last_modified_ms())}});
                           }
                           AnswerAttributes(call, request, v);
                         });
    }
    WithLatestLiveVersion(call, /*with_data=*/false, [call, request](const pb::ObjectVersion& latest) {
      AnswerAttributes(call, request, latest);
    });
  });
}

}  // namespace tessera::s3::front
