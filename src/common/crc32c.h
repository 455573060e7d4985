// CRC-32C (Castagnoli), the checksum of every durable record and blob chunk,
// computed by isa-l (D40), short inputs by the SSE 4.2 instruction (D48).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tessera {

// Extends `crc` (0 to start) with `data`.
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

// The CRC-32C of A || B from crc_a = Crc32c(A), crc_b = Crc32c(B) and
// length_b = |B|, without reading either (O(log length_b)). Lets a sender
// that knows a large block's CRC checksum a small header in front of it.
uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

// The CRC-32C of whole.substr(offset) from whole_crc = Crc32c(whole),
// reading only the `offset` bytes before it: a receiver that verified a
// frame's checksum gets its large tail's for the price of the head's.
// `offset` <= whole.size().
uint32_t Crc32cOfSuffix(uint32_t whole_crc, std::string_view whole, size_t offset);

}  // namespace tessera
