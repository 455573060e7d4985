// CRC-32C (Castagnoli), the checksum of every durable record and blob chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tessera {

// Extends `crc` (0 to start) with `data`.
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

}  // namespace tessera
