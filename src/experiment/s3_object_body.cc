#include "experiment/s3_object_body.h"

#include <algorithm>
#include <charconv>

#include "sim/prng.h"

namespace tessera::experiment {
namespace {

constexpr std::string_view kMagic = "tessera-experiment key=";
constexpr uint64_t kStreamSize = 1, kStreamFill = 2;

// FNV-1a over key, a separator no key or id contains, and the write id.
uint64_t BodySeed(std::string_view key, std::string_view write_id) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  };
  mix(key);
  mix(std::string_view("\0", 1));
  mix(write_id);
  return h;
}

std::string Header(std::string_view key, std::string_view write_id, uint64_t size) {
  return std::string(kMagic) + std::string(key) + " write=" + std::string(write_id) +
         " bytes=" + std::to_string(size) + "\n";
}

// Fills out[from, size) from the fill stream of (key, write id).
void Fill(std::string_view key, std::string_view write_id, std::string& out, size_t from) {
  sim::Prng prng(sim::DeriveSeed(BodySeed(key, write_id), kStreamFill));
  for (size_t i = from; i < out.size(); i += 8) {
    const uint64_t word = prng.Next();
    for (size_t b = 0; b < 8 && i + b < out.size(); ++b) {
      out[i + b] = static_cast<char>((word >> (8 * b)) & 0xff);
    }
  }
}

}  // namespace

uint64_t ObjectBodySize(std::string_view key, std::string_view write_id, uint64_t min_bytes,
                        uint64_t max_bytes) {
  sim::Prng prng(sim::DeriveSeed(BodySeed(key, write_id), kStreamSize));
  const uint64_t drawn = prng.Range(min_bytes, std::max(min_bytes, max_bytes));
  // The header's own length depends on the size's digits: bound it by 20.
  const uint64_t header = Header(key, write_id, 0).size() + 19;
  return std::max(drawn, header);
}

std::string ObjectBody(std::string_view key, std::string_view write_id, uint64_t min_bytes,
                       uint64_t max_bytes) {
  const uint64_t size = ObjectBodySize(key, write_id, min_bytes, max_bytes);
  std::string body = Header(key, write_id, size);
  const size_t header = body.size();
  body.resize(size);
  Fill(key, write_id, body, header);
  return body;
}

Result<std::string> VerifyObjectBody(std::string_view key, std::string_view body) {
  const size_t eol = body.find('\n');
  if (body.substr(0, kMagic.size()) != kMagic || eol == std::string_view::npos) {
    return Status::Corruption("the body (" + std::to_string(body.size()) +
                              " bytes) does not start with a header line");
  }
  const std::string_view line = body.substr(kMagic.size(), eol - kMagic.size());
  const size_t write_at = line.rfind(" write=");
  const size_t bytes_at = line.rfind(" bytes=");
  if (write_at == std::string_view::npos || bytes_at == std::string_view::npos ||
      bytes_at < write_at) {
    return Status::Corruption("malformed header line '" + std::string(line) + "'");
  }
  const std::string_view named_key = line.substr(0, write_at);
  const std::string write_id(line.substr(write_at + 7, bytes_at - write_at - 7));
  const std::string_view size_text = line.substr(bytes_at + 7);
  uint64_t size = 0;
  auto [ptr, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
  if (ec != std::errc() || ptr != size_text.data() + size_text.size()) {
    return Status::Corruption("malformed size in header line '" + std::string(line) + "'");
  }
  if (named_key != key) {
    return Status::Corruption("the body of write " + write_id + " names key '" +
                              std::string(named_key) + "'");
  }
  if (size != body.size()) {
    return Status::Corruption("write " + write_id + ": " + std::to_string(body.size()) +
                              " bytes read, the header says " + std::to_string(size));
  }
  std::string expected(body.size(), '\0');
  Fill(key, write_id, expected, eol + 1);
  for (size_t i = eol + 1; i < body.size(); ++i) {
    if (body[i] != expected[i]) {
      return Status::Corruption("write " + write_id + ": byte " + std::to_string(i) + " of " +
                                std::to_string(body.size()) + " differs");
    }
  }
  return write_id;
}

bool IsCopySourceWriteId(std::string_view write_id) {
  return !write_id.empty() && write_id.back() == kCopySourceMark;
}

std::string CopySourceKey(std::string_view sources_prefix, std::string_view write_id) {
  return std::string(sources_prefix) + std::string(write_id);
}

std::string BodyKeyOf(std::string_view key, std::string_view write_id,
                      std::string_view sources_prefix) {
  return IsCopySourceWriteId(write_id) ? CopySourceKey(sources_prefix, write_id) : std::string(key);
}

}  // namespace tessera::experiment
