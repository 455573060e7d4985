#include "storage/record_codec.h"

#include <cstdio>
#include <limits>

#include "common/check.h"
#include "common/crc32c.h"
#include "common/limits.h"

namespace tessera::storage {
namespace {

void AppendLittleEndian32(std::string* out, uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) {
    out->push_back(static_cast<char>((value >> shift) & 0xFF));
  }
}

uint32_t ReadLittleEndian32(std::string_view bytes) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

std::string Hex32(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", value);
  return buf;
}

Status RecordCorruption(std::string_view what, const std::string& defect) {
  return Status::Corruption(std::string(what) + ": " + defect);
}

}  // namespace

std::string EncodeRecord(std::string_view payload) {
  TESSERA_CHECK(payload.size() <= limits::kRecordPayloadBytesMax);
  std::string record;
  record.reserve(kRecordHeaderBytes + payload.size());
  record.push_back(static_cast<char>(kRecordFormat));
  AppendLittleEndian32(&record, static_cast<uint32_t>(payload.size()));
  AppendLittleEndian32(&record, Crc32c(payload));
  record.append(payload);
  return record;
}

std::string EncodeProtoRecord(const google::protobuf::MessageLite& message) {
  std::string payload;
  TESSERA_CHECK(message.SerializeToString(&payload));
  return EncodeRecord(payload);
}

Result<std::string_view> DecodeRecord(std::string_view record, std::string_view what) {
  if (record.size() < kRecordHeaderBytes) {
    return RecordCorruption(what, "truncated record (" + std::to_string(record.size()) +
                                      " bytes, header needs " + std::to_string(kRecordHeaderBytes) +
                                      ")");
  }
  if (static_cast<uint8_t>(record[0]) != kRecordFormat) {
    return RecordCorruption(
        what, "unknown record format " + std::to_string(static_cast<uint8_t>(record[0])));
  }
  const uint64_t length = ReadLittleEndian32(record.substr(1, 4));
  const std::string_view payload = record.substr(kRecordHeaderBytes);
  if (payload.size() != length) {
    return RecordCorruption(what, "length mismatch (header says " + std::to_string(length) +
                                      " payload bytes, found " + std::to_string(payload.size()) +
                                      ")");
  }
  const uint32_t stored = ReadLittleEndian32(record.substr(5, 4));
  const uint32_t computed = Crc32c(payload);
  if (stored != computed) {
    return RecordCorruption(
        what, "checksum mismatch (stored=" + Hex32(stored) + " computed=" + Hex32(computed) + ")");
  }
  return payload;
}

Status DecodeProtoRecord(std::string_view record, std::string_view what,
                         google::protobuf::MessageLite* message) {
  Result<std::string_view> payload = DecodeRecord(record, what);
  if (!payload.ok()) return payload.status();
  if (payload->size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !message->ParseFromArray(payload->data(), static_cast<int>(payload->size()))) {
    return RecordCorruption(what, "payload does not parse as " + message->GetTypeName());
  }
  return Status::Ok();
}

}  // namespace tessera::storage
