// Record framing of every stored value (docs/formats/storage.md, "Records"):
//
//   format u8 (0x01) | payload length u32 LE | CRC-32C(payload) u32 LE | payload
//
// Every read goes through DecodeRecord, so a record is verified each time it
// is read; anything that fails verification is Corruption, never data.
//
// Thread safety: pure functions.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tessera::storage {

inline constexpr uint8_t kRecordFormat = 0x01;
inline constexpr size_t kRecordHeaderBytes = 9;

// Frames `payload` (at most limits::kRecordPayloadBytesMax bytes, checked).
std::string EncodeRecord(std::string_view payload);
std::string EncodeProtoRecord(const google::protobuf::MessageLite& message);

// Verifies `record` and returns its payload, a view into `record`.
// Corruption names `what` (e.g. "log entry group=7 slot=12") and the defect:
// unknown format, truncated/extended (length mismatch) or checksum mismatch.
Result<std::string_view> DecodeRecord(std::string_view record, std::string_view what);
// DecodeRecord, then parses the payload into `message` (Corruption if it does
// not parse).
Status DecodeProtoRecord(std::string_view record, std::string_view what,
                         google::protobuf::MessageLite* message);

}  // namespace tessera::storage
