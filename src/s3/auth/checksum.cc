#include "s3/auth/checksum.h"

#include <openssl/evp.h>
#include <isa-l/crc.h>

#include <algorithm>
#include <array>

#include "common/check.h"
#include "common/crc32c.h"
#include "common/crc_combine.h"
#include "s3/auth/crypto.h"
#include "s3/auth/request_parts.h"

namespace tessera::s3::auth {
namespace {

struct AlgorithmInfo {
  ChecksumAlgorithm algorithm;
  std::string_view name;
  std::string_view header;
  size_t digest_bytes;
};

constexpr std::array<AlgorithmInfo, 6> kAlgorithms = {{
    {ChecksumAlgorithm::kCrc32, "CRC32", "x-amz-checksum-crc32", 4},
    {ChecksumAlgorithm::kCrc32c, "CRC32C", "x-amz-checksum-crc32c", 4},
    {ChecksumAlgorithm::kSha1, "SHA1", "x-amz-checksum-sha1", 20},
    {ChecksumAlgorithm::kSha256, "SHA256", "x-amz-checksum-sha256", 32},
    {ChecksumAlgorithm::kMd5, "MD5", "content-md5", 16},
    {ChecksumAlgorithm::kCrc64Nvme, "CRC64NVME", "x-amz-checksum-crc64nvme", 8},
}};

const AlgorithmInfo& Info(ChecksumAlgorithm algorithm) {
  for (const AlgorithmInfo& info : kAlgorithms) {
    if (info.algorithm == algorithm) return info;
  }
  TESSERA_CHECK(false && "unknown checksum algorithm");
  return kAlgorithms[0];
}

// CRC-64/NVME: reflected polynomial of 0xad93d23594c93659, init and xorout
// all ones. Slicing-by-8 tables built at compile time.

constexpr std::array<std::array<uint64_t, 256>, 8> MakeCrc64Tables() {
  std::array<std::array<uint64_t, 256>, 8> t{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCrc64NvmePolynomial : c >> 1;
    t[0][i] = c;
  }
  for (size_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}

constexpr auto kCrc64Tables = MakeCrc64Tables();

// Extends a CRC-64/NVME register (not inverted: the caller inverts at the
// start and the end).
uint64_t Crc64NvmeUpdate(uint64_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint64_t word = 0;
    for (int i = 0; i < 8; ++i) word |= uint64_t{p[i]} << (8 * i);
    const uint64_t x = crc ^ word;
    crc = kCrc64Tables[7][x & 0xFF] ^ kCrc64Tables[6][(x >> 8) & 0xFF] ^
          kCrc64Tables[5][(x >> 16) & 0xFF] ^ kCrc64Tables[4][(x >> 24) & 0xFF] ^
          kCrc64Tables[3][(x >> 32) & 0xFF] ^ kCrc64Tables[2][(x >> 40) & 0xFF] ^
          kCrc64Tables[1][(x >> 48) & 0xFF] ^ kCrc64Tables[0][x >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kCrc64Tables[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return crc;
}

std::string BigEndian(uint64_t value, size_t bytes) {
  std::string out(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) {
    out[bytes - 1 - i] = static_cast<char>(value & 0xFF);
    value >>= 8;
  }
  return out;
}

const EVP_MD* EvpOf(ChecksumAlgorithm algorithm) {
  switch (algorithm) {
    case ChecksumAlgorithm::kSha1: return EVP_sha1();
    case ChecksumAlgorithm::kSha256: return EVP_sha256();
    case ChecksumAlgorithm::kMd5: return EVP_md5();
    default: return nullptr;
  }
}

}  // namespace

std::string_view ChecksumName(ChecksumAlgorithm algorithm) { return Info(algorithm).name; }
std::string_view ChecksumHeaderName(ChecksumAlgorithm algorithm) { return Info(algorithm).header; }
size_t ChecksumDigestBytes(ChecksumAlgorithm algorithm) { return Info(algorithm).digest_bytes; }

std::optional<ChecksumAlgorithm> ChecksumFromHeaderName(std::string_view name) {
  for (const AlgorithmInfo& info : kAlgorithms) {
    if (info.algorithm != ChecksumAlgorithm::kMd5 && EqualsIgnoreCase(name, info.header)) {
      return info.algorithm;
    }
  }
  return std::nullopt;
}

std::optional<ChecksumAlgorithm> ChecksumFromAlgorithmValue(std::string_view value) {
  for (const AlgorithmInfo& info : kAlgorithms) {
    if (info.algorithm != ChecksumAlgorithm::kMd5 && EqualsIgnoreCase(Trim(value), info.name)) {
      return info.algorithm;
    }
  }
  return std::nullopt;
}

struct Checksummer::Impl {
  uint64_t crc = 0;  // CRC32 / CRC32C value, or the CRC64 register
  EVP_MD_CTX* md = nullptr;
  bool finished = false;
  ~Impl() {
    if (md != nullptr) EVP_MD_CTX_free(md);
  }
};

Checksummer::Checksummer(ChecksumAlgorithm algorithm)
    : algorithm_(algorithm), impl_(std::make_unique<Impl>()) {
  if (const EVP_MD* md = EvpOf(algorithm)) {
    impl_->md = EVP_MD_CTX_new();
    TESSERA_CHECK(impl_->md != nullptr);
    TESSERA_CHECK(EVP_DigestInit_ex(impl_->md, md, nullptr) == 1);
  } else if (algorithm == ChecksumAlgorithm::kCrc64Nvme) {
    impl_->crc = ~uint64_t{0};
  }
}

Checksummer::~Checksummer() = default;
Checksummer::Checksummer(Checksummer&&) noexcept = default;
Checksummer& Checksummer::operator=(Checksummer&&) noexcept = default;

void Checksummer::Update(std::string_view data) {
  TESSERA_CHECK(impl_ && !impl_->finished);
  switch (algorithm_) {
    case ChecksumAlgorithm::kCrc32:
      // isa-l's CRC-32 with the reflected polynomial is zlib's crc32():
      // the same running value in and out, ~20x faster (PCLMULQDQ).
      impl_->crc = crc32_gzip_refl(static_cast<uint32_t>(impl_->crc),
                                   reinterpret_cast<const unsigned char*>(data.data()), data.size());
      break;
    case ChecksumAlgorithm::kCrc32c:
      impl_->crc = Crc32c(data, static_cast<uint32_t>(impl_->crc));
      break;
    case ChecksumAlgorithm::kCrc64Nvme:
      impl_->crc = Crc64NvmeUpdate(impl_->crc, data);
      break;
    default:
      TESSERA_CHECK(EVP_DigestUpdate(impl_->md, data.data(), data.size()) == 1);
  }
}

std::string Checksummer::Finish() {
  TESSERA_CHECK(impl_ && !impl_->finished);
  impl_->finished = true;
  switch (algorithm_) {
    case ChecksumAlgorithm::kCrc32:
    case ChecksumAlgorithm::kCrc32c:
      return BigEndian(impl_->crc, 4);
    case ChecksumAlgorithm::kCrc64Nvme:
      return BigEndian(~impl_->crc, 8);
    default: {
      unsigned char out[EVP_MAX_MD_SIZE];
      unsigned int len = 0;
      TESSERA_CHECK(EVP_DigestFinal_ex(impl_->md, out, &len) == 1);
      return std::string(reinterpret_cast<const char*>(out), len);
    }
  }
}

std::string ComputeChecksum(ChecksumAlgorithm algorithm, std::string_view data) {
  Checksummer c(algorithm);
  c.Update(data);
  return c.Finish();
}

std::string HexEncode(std::string_view raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string Sha256Hex(std::string_view data) { return HexEncode(Sha256(data)); }

S3Status VerifyChecksum(ChecksumAlgorithm algorithm, std::string_view declared_base64,
                        std::string_view computed_raw) {
  const bool md5 = algorithm == ChecksumAlgorithm::kMd5;
  Result<std::string> declared = Base64Decode(Trim(declared_base64));
  if (!declared.ok() || declared->size() != ChecksumDigestBytes(algorithm)) {
    if (md5) {
      return S3Error(S3ErrorCode::kInvalidDigest).With("Content-MD5", std::string(declared_base64));
    }
    return S3Status(S3ErrorCode::kInvalidRequest,
                    "Value for " + std::string(ChecksumHeaderName(algorithm)) +
                        " header is invalid.");
  }
  if (*declared == computed_raw) return S3Status::Ok();
  if (md5) {
    return S3Error(S3ErrorCode::kBadDigest,
                   "The Content-MD5 you specified did not match what we received.")
        .With("ExpectedDigest", HexEncode(*declared))
        .With("CalculatedDigest", Base64Encode(computed_raw));
  }
  return S3Status(S3ErrorCode::kBadDigest, "The " + std::string(ChecksumName(algorithm)) +
                                               " you specified did not match the calculated "
                                               "checksum.");
}

S3Result<std::optional<DeclaredChecksum>> FindDeclaredChecksum(const HeaderList& headers) {
  static constexpr std::string_view kPrefix = "x-amz-checksum-";
  std::optional<DeclaredChecksum> found;
  for (const auto& [name, value] : headers) {
    if (!StartsWithIgnoreCase(name, kPrefix)) continue;
    if (EqualsIgnoreCase(name, "x-amz-checksum-type") ||
        EqualsIgnoreCase(name, "x-amz-checksum-algorithm") ||
        EqualsIgnoreCase(name, "x-amz-checksum-mode")) {
      continue;
    }
    std::optional<ChecksumAlgorithm> algorithm = ChecksumFromHeaderName(name);
    if (!algorithm) {
      return S3Error(S3ErrorCode::kInvalidRequest,
                     "The algorithm of header " + ToLowerAscii(name) + " is not supported.");
    }
    if (found) {
      return S3Error(S3ErrorCode::kInvalidRequest,
                     "Expecting a single x-amz-checksum- header. Multiple checksum Types are not "
                     "allowed.");
    }
    found = DeclaredChecksum{*algorithm, std::string(Trim(value))};
  }
  return found;
}

}  // namespace tessera::s3::auth
