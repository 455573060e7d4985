#include "s3/front/copy_source.h"

#include <charconv>

#include "s3/protocol/http_rules.h"
#include "s3/protocol/names.h"

namespace tessera::s3::front {
namespace {

S3Error BadSource(std::string_view header) {
  return InvalidArgumentError("Invalid copy source object key", "x-amz-copy-source",
                              std::string(header));
}

S3Error BadRange(std::string_view header) {
  return InvalidArgumentError(
      "The x-amz-copy-source-range value must be of the form bytes=first-last where first and "
      "last are the zero-based offsets of the first and last bytes to copy",
      "x-amz-copy-source-range", std::string(header));
}

std::optional<uint64_t> ParseOffset(std::string_view text) {
  uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

S3Result<CopySource> ParseCopySource(std::string_view header) {
  std::string_view path = header;
  std::string_view query;
  if (const size_t q = header.find('?'); q != std::string_view::npos) {
    path = header.substr(0, q);
    query = header.substr(q + 1);
  }
  auto decoded = PercentDecode(path, /*plus_as_space=*/false);
  if (!decoded.ok()) return BadSource(header);
  std::string_view rest = *decoded;
  if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return BadSource(header);
  if (slash == 0 || slash + 1 == rest.size()) {
    return InvalidArgumentError(
        "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
        "x-amz-copy-source", std::string(header));
  }
  CopySource out;
  out.bucket = std::string(rest.substr(0, slash));
  out.key = std::string(rest.substr(slash + 1));
  if (!ValidateObjectKey(out.key).ok()) return BadSource(header);
  if (!query.empty()) {
    auto params = ParseQuery(query);
    if (!params.ok()) return BadSource(header);
    for (const QueryParam& p : *params) {
      if (p.name != "versionId") return BadSource(header);
      if (p.value.empty()) {
        return VersionIdArgumentError("");
      }
      out.version_id = p.value;
    }
  }
  return out;
}

S3Result<std::optional<CopyRange>> ParseCopyRange(std::optional<std::string_view> header,
                                                  uint64_t source_size) {
  if (!header) {
    if (source_size == 0) return std::optional<CopyRange>();
    return std::optional<CopyRange>(CopyRange{0, source_size - 1});
  }
  std::string_view text = *header;
  constexpr std::string_view kUnit = "bytes=";
  if (text.substr(0, kUnit.size()) != kUnit) return BadRange(*header);
  text.remove_prefix(kUnit.size());
  const size_t dash = text.find('-');
  if (dash == std::string_view::npos) return BadRange(*header);
  auto first = ParseOffset(text.substr(0, dash));
  auto last = ParseOffset(text.substr(dash + 1));
  if (!first || !last || *first > *last) return BadRange(*header);
  if (*first >= source_size) {
    return S3Error(S3ErrorCode::kInvalidRequest,
                   "The specified copy range is invalid for the source object size");
  }
  if (*last >= source_size) {
    return InvalidArgumentError(
        "Range specified is not valid for source object of size: " + std::to_string(source_size),
        "x-amz-copy-source-range", std::string(*header));
  }
  return std::optional<CopyRange>(CopyRange{*first, *last});
}

}  // namespace tessera::s3::front
