// Version ids of versioned objects: 32 lowercase hex digits, the version's
// sequence number within its key (16) then the slot that wrote it (16). The
// sequence number finds the version record with one point read; the slot
// makes ids unique even when a key's sequence restarts after all of its
// versions were deleted. "null" is the id of the null version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::s3::model {

std::string FormatVersionId(uint64_t seq, uint64_t slot);
// The sequence number of a well-formed id; nullopt otherwise (incl. "null").
std::optional<uint64_t> ParseVersionSeq(std::string_view version_id);

}  // namespace tessera::s3::model
