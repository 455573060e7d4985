#include "s3/front/delete_conditions.h"

#include <charconv>

#include "s3/protocol/http_rules.h"
#include "s3/protocol/s3_error.h"

namespace tessera::s3::front {

S3Status SetDeleteConditions(const DeleteConditionTexts& texts, const DeleteConditionNames& names,
                             pb::DeleteObjectOp& op) {
  std::optional<int64_t> last_modified_s;
  if (texts.last_modified) {
    std::optional<int64_t> ms = ParseHttpDate(*texts.last_modified);
    if (!ms) ms = ParseIso8601(*texts.last_modified);
    if (!ms) {
      return InvalidArgumentError("Invalid date value", names.last_modified, *texts.last_modified);
    }
    last_modified_s = *ms / 1000;
  }
  std::optional<uint64_t> size;
  if (texts.size) {
    uint64_t value = 0;
    const std::string& text = *texts.size;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
      return InvalidArgumentError("Invalid size value", names.size, text);
    }
    size = value;
  }
  if (texts.etag) {
    const std::string_view etag = UnquoteEtag(*texts.etag);
    if (etag.empty()) return InvalidArgumentError("Invalid ETag value", names.etag, *texts.etag);
    op.set_if_match_etag(std::string(etag));
  }
  if (last_modified_s) op.set_if_match_last_modified_s(*last_modified_s);
  if (size) op.set_if_match_size(*size);
  return S3Status::Ok();
}

}  // namespace tessera::s3::front
