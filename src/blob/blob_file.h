// The blob file format (docs/formats/blobs.md, "Blob files"): pure encoding
// and checking, no I/O. BlobStore does the file operations.
//
//   offset      size  field (integers little-endian)
//   0           4     magic "TBLB"
//   4           2     format version (3; 2 and 1 are still read)
//   6           2     owner length m (version 1: reserved, 0)
//   8           4     block size in bytes (65536)
//   12          4     blob slot
//   16          16    blob id's unique bytes
//   32          8     data length n
//   40          4     CRC-32C of the owner followed by the block checksum table
//   44          4     CRC-32C of bytes 0..43 (the header checksum)
//   48          m     owner (version 2 only)
//   48 + m      4k    block checksum table: CRC-32C of each block of data,
//                     k = ceil(n / block size)
//   48 + m + 4k g     zeros (version 3 only), g < 4096 so that the file
//                     ends at a multiple of 4096: data written with O_DIRECT
//                     from a buffer whose end is 4 KiB aligned (a received
//                     frame's, rpc/frame.h) needs no copy
//   d = 48+m+4k+g n   data
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

inline constexpr uint16_t kVersion = 3;
inline constexpr uint16_t kVersion2 = 2;       // data right after the table; still read
inline constexpr uint16_t kLegacyVersion = 1;  // no owner; still read
// A version 3 file's size is a multiple of this.
inline constexpr uint64_t kFileAlignmentBytes = 4096;
inline constexpr size_t kHeaderBytes = 48;
inline constexpr uint32_t kBlockBytes = 64 << 10;

struct Header {
  uint16_t version = kVersion;
  BlobId id;
  uint32_t owner_bytes = 0;  // m
  uint64_t data_bytes = 0;
  uint32_t table_crc = 0;    // over owner and table
};

// Blocks of a blob of `data_bytes`, and the size of its whole file.
uint64_t BlockCount(uint64_t data_bytes);
uint64_t FileBytes(uint16_t version, uint64_t owner_bytes, uint64_t data_bytes);
// Bytes of owner and table between the header and the data.
uint64_t MetaBytes(uint64_t owner_bytes, uint64_t data_bytes);
// Where the data starts in a file (d).
uint64_t DataOffset(uint16_t version, uint64_t owner_bytes, uint64_t data_bytes);

// Every byte of a blob's file before its data: header, owner, block
// checksum table and (version 3) the zeros, DataOffset bytes. `version` 1
// or 2 are for tests of older files; version 1 requires an empty owner
// (CHECKed), as does an owner over limits::kBlobOwnerBytesMax.
// `data_crc32c`, when not null, receives Crc32c(data), combined from the
// block checksums (the data is read once).
std::string EncodePrefix(const BlobId& id, std::string_view owner, std::string_view data,
                         uint16_t version = kVersion, uint32_t* data_crc32c = nullptr);

// The header in `bytes` (kHeaderBytes of them); Corruption for a bad magic,
// version, block size or header checksum.
Result<Header> DecodeHeader(std::string_view bytes);

// Checks `meta` (owner then table, MetaBytes of them) against
// header.table_crc; Corruption on mismatch. On success `owner` and `table`
// are views into `meta`.
Status CheckMeta(const Header& header, std::string_view meta, std::string_view* owner,
                 std::string_view* table);

// Entry `block` of a checked table.
uint32_t TableEntry(std::string_view table, uint64_t block);

}  // namespace tessera::blob::file
