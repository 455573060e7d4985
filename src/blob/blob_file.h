// The blob file format (docs/formats/blobs.md, "Blob files"): pure encoding
// and checking, no I/O. BlobStore does the file operations.
//
//   offset      size  field (integers little-endian)
//   0           4     magic "TBLB"
//   4           2     format version (1)
//   6           2     reserved, 0
//   8           4     block size in bytes (65536)
//   12          4     blob slot
//   16          16    blob id's unique bytes
//   32          8     data length n
//   40          4     CRC-32C of the block checksum table
//   44          4     CRC-32C of bytes 0..43 (the header checksum)
//   48          4k    block checksum table: CRC-32C of each block of data,
//                     k = ceil(n / block size)
//   48 + 4k     n     data
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "blob/blob_id.h"
#include "common/result.h"

namespace tessera::blob::file {

inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 48;
inline constexpr uint32_t kBlockBytes = 64 << 10;

struct Header {
  BlobId id;
  uint64_t data_bytes = 0;
  uint32_t table_crc = 0;
};

// Blocks of a blob of `data_bytes`, and the size of its whole file.
uint64_t BlockCount(uint64_t data_bytes);
uint64_t FileBytes(uint64_t data_bytes);
// The data length of a file of `file_bytes` if it is well formed; 0 for a
// file too short to be one.
uint64_t DataBytesOfFile(uint64_t file_bytes);
// Where the data starts in a file whose blob has `data_bytes`.
uint64_t DataOffset(uint64_t data_bytes);

// The header followed by the block checksum table of a blob.
std::string EncodePrefix(const BlobId& id, std::string_view data);

// The header in `bytes` (kHeaderBytes of them); Corruption for a bad magic,
// version, block size or header checksum.
Result<Header> DecodeHeader(std::string_view bytes);

// Corruption unless `table` (4 bytes per block) matches header.table_crc.
Status CheckTable(const Header& header, std::string_view table);

// Entry `block` of a checked table.
uint32_t TableEntry(std::string_view table, uint64_t block);

}  // namespace tessera::blob::file
