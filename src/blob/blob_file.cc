#include "blob/blob_file.h"

#include <cstring>

#include "common/check.h"
#include "common/crc32c.h"
#include "common/limits.h"

namespace tessera::blob::file {
namespace {

constexpr char kMagic[4] = {'T', 'B', 'L', 'B'};
constexpr size_t kHeaderCrcOffset = 44;

void PutLe(std::string& out, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(std::string_view in, size_t offset, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) {
    v |= uint64_t{static_cast<uint8_t>(in[offset + i])} << (8 * i);
  }
  return v;
}

}  // namespace

uint64_t BlockCount(uint64_t data_bytes) { return (data_bytes + kBlockBytes - 1) / kBlockBytes; }

uint64_t MetaBytes(uint64_t owner_bytes, uint64_t data_bytes) {
  return owner_bytes + 4 * BlockCount(data_bytes);
}

uint64_t DataOffset(uint16_t version, uint64_t owner_bytes, uint64_t data_bytes) {
  const uint64_t packed = kHeaderBytes + MetaBytes(owner_bytes, data_bytes);
  if (version < kVersion) return packed;
  const uint64_t unpadded = packed + data_bytes;
  const uint64_t file = (unpadded + kFileAlignmentBytes - 1) / kFileAlignmentBytes * kFileAlignmentBytes;
  return file - data_bytes;
}

uint64_t FileBytes(uint16_t version, uint64_t owner_bytes, uint64_t data_bytes) {
  return DataOffset(version, owner_bytes, data_bytes) + data_bytes;
}

std::string EncodePrefix(const BlobId& id, std::string_view owner, std::string_view data,
                         uint16_t version, uint32_t* data_crc32c) {
  TESSERA_CHECK(version == kVersion || version == kVersion2 || (version == kLegacyVersion && owner.empty()));
  TESSERA_CHECK(owner.size() <= limits::kBlobOwnerBytesMax);
  std::string meta(owner);
  const uint64_t blocks = BlockCount(data.size());
  meta.reserve(owner.size() + 4 * blocks);
  uint32_t data_crc = Crc32c({});
  for (uint64_t b = 0; b < blocks; ++b) {
    const std::string_view block = data.substr(b * kBlockBytes, kBlockBytes);
    const uint32_t block_crc = Crc32c(block);
    PutLe(meta, block_crc, 4);
    data_crc = b == 0 ? block_crc : Crc32cCombine(data_crc, block_crc, block.size());
  }
  if (data_crc32c != nullptr) *data_crc32c = data_crc;
  std::string out(kMagic, sizeof(kMagic));
  PutLe(out, version, 2);
  PutLe(out, owner.size(), 2);
  PutLe(out, kBlockBytes, 4);
  PutLe(out, id.slot, 4);
  out.append(reinterpret_cast<const char*>(id.unique.data()), id.unique.size());
  PutLe(out, data.size(), 8);
  PutLe(out, Crc32c(meta), 4);
  TESSERA_CHECK(out.size() == kHeaderCrcOffset);
  PutLe(out, Crc32c(out), 4);
  out += meta;
  out.resize(DataOffset(version, owner.size(), data.size()), '\0');
  return out;
}

Result<Header> DecodeHeader(std::string_view bytes) {
  if (bytes.size() != kHeaderBytes) return Status::Corruption("blob file: short header");
  if (Crc32c(bytes.substr(0, kHeaderCrcOffset)) != GetLe(bytes, kHeaderCrcOffset, 4)) {
    return Status::Corruption("blob file: header checksum mismatch");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::Corruption("blob file: bad magic");
  }
  Header header;
  header.version = static_cast<uint16_t>(GetLe(bytes, 4, 2));
  if (header.version != kVersion && header.version != kVersion2 && header.version != kLegacyVersion) {
    return Status::Corruption("blob file: unknown version");
  }
  header.owner_bytes = static_cast<uint32_t>(GetLe(bytes, 6, 2));
  if (header.version == kLegacyVersion && header.owner_bytes != 0) {
    return Status::Corruption("blob file: version 1 with an owner");
  }
  if (header.owner_bytes > limits::kBlobOwnerBytesMax) {
    return Status::Corruption("blob file: owner too long");
  }
  if (GetLe(bytes, 8, 4) != kBlockBytes) return Status::Corruption("blob file: unexpected block size");
  header.id.slot = static_cast<uint32_t>(GetLe(bytes, 12, 4));
  std::memcpy(header.id.unique.data(), bytes.data() + 16, header.id.unique.size());
  header.data_bytes = GetLe(bytes, 32, 8);
  header.table_crc = static_cast<uint32_t>(GetLe(bytes, 40, 4));
  return header;
}

Status CheckMeta(const Header& header, std::string_view meta, std::string_view* owner,
                 std::string_view* table) {
  if (meta.size() != MetaBytes(header.owner_bytes, header.data_bytes) ||
      Crc32c(meta) != header.table_crc) {
    return Status::Corruption("blob file: owner or block checksum table mismatch");
  }
  *owner = meta.substr(0, header.owner_bytes);
  *table = meta.substr(header.owner_bytes);
  return Status::Ok();
}

uint32_t TableEntry(std::string_view table, uint64_t block) {
  TESSERA_CHECK(4 * block + 4 <= table.size());
  return static_cast<uint32_t>(GetLe(table, 4 * block, 4));
}

}  // namespace tessera::blob::file
