#include "blob/blob_file.h"

#include <cstring>

#include "common/check.h"
#include "common/crc32c.h"

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

uint64_t DataOffset(uint64_t data_bytes) { return kHeaderBytes + 4 * BlockCount(data_bytes); }

uint64_t FileBytes(uint64_t data_bytes) { return DataOffset(data_bytes) + data_bytes; }

uint64_t DataBytesOfFile(uint64_t file_bytes) {
  if (file_bytes < kHeaderBytes) return 0;
  // Every full block takes kBlockBytes + 4 bytes, a partial last one its
  // length + 4.
  const uint64_t rest = file_bytes - kHeaderBytes;
  const uint64_t blocks = (rest + kBlockBytes + 3) / (kBlockBytes + 4);
  return rest - 4 * blocks;
}

std::string EncodePrefix(const BlobId& id, std::string_view data) {
  std::string table;
  const uint64_t blocks = BlockCount(data.size());
  table.reserve(4 * blocks);
  for (uint64_t b = 0; b < blocks; ++b) {
    PutLe(table, Crc32c(data.substr(b * kBlockBytes, kBlockBytes)), 4);
  }
  std::string out(kMagic, sizeof(kMagic));
  PutLe(out, kVersion, 2);
  PutLe(out, 0, 2);
  PutLe(out, kBlockBytes, 4);
  PutLe(out, id.slot, 4);
  out.append(reinterpret_cast<const char*>(id.unique.data()), id.unique.size());
  PutLe(out, data.size(), 8);
  PutLe(out, Crc32c(table), 4);
  TESSERA_CHECK(out.size() == kHeaderCrcOffset);
  PutLe(out, Crc32c(out), 4);
  out += table;
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
  if (GetLe(bytes, 4, 2) != kVersion) return Status::Corruption("blob file: unknown version");
  if (GetLe(bytes, 8, 4) != kBlockBytes) return Status::Corruption("blob file: unexpected block size");
  Header header;
  header.id.slot = static_cast<uint32_t>(GetLe(bytes, 12, 4));
  std::memcpy(header.id.unique.data(), bytes.data() + 16, header.id.unique.size());
  header.data_bytes = GetLe(bytes, 32, 8);
  header.table_crc = static_cast<uint32_t>(GetLe(bytes, 40, 4));
  return header;
}

Status CheckTable(const Header& header, std::string_view table) {
  if (table.size() != 4 * BlockCount(header.data_bytes) || Crc32c(table) != header.table_crc) {
    return Status::Corruption("blob file: block checksum table mismatch");
  }
  return Status::Ok();
}

uint32_t TableEntry(std::string_view table, uint64_t block) {
  TESSERA_CHECK(4 * block + 4 <= table.size());
  return static_cast<uint32_t>(GetLe(table, 4 * block, 4));
}

}  // namespace tessera::blob::file
