#include "router/token.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "common/check.h"
#include "common/limits.h"

namespace tessera::router {
namespace {

constexpr std::string_view kTokenPrefix = "tk1.";
constexpr std::string_view kGrantTokenPrefix = "tk2.";
constexpr size_t kSignatureHexBytes = 64;

std::string Hex(const unsigned char* data, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 0xF]);
  }
  return out;
}

std::string Signature(std::string_view secret_key, std::string_view signed_text) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  const unsigned char* result =
      HMAC(EVP_sha256(), secret_key.data(), static_cast<int>(secret_key.size()),
           reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), mac, &mac_len);
  TESSERA_CHECK(result != nullptr && mac_len == 32);
  return Hex(mac, mac_len);
}

bool ValidAccessKey(std::string_view key) {
  if (key.empty() || key.size() > 64) return false;
  for (const char c : key) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool ValidSecretKey(std::string_view key) {
  if (key.size() < 16 || key.size() > 256) return false;
  for (const char c : key) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

Result<std::string> RandomHex(size_t bytes) {
  unsigned char buffer[64];
  TESSERA_CHECK(bytes <= sizeof(buffer));
  if (RAND_bytes(buffer, static_cast<int>(bytes)) != 1) {
    return Status::IOError("RAND_bytes failed");
  }
  return Hex(buffer, bytes);
}

}  // namespace

Status CredentialStore::Add(Credential credential) {
  if (!ValidAccessKey(credential.access_key)) {
    return Status::InvalidArgument("access key must be 1 to 64 of [A-Za-z0-9_-]");
  }
  if (!ValidSecretKey(credential.secret_key)) {
    return Status::InvalidArgument("secret key must be 16 to 256 printable bytes without spaces");
  }
  if (entries_.size() >= limits::kRouterCredentialsMax) {
    return Status::InvalidArgument("too many credentials");
  }
  if (!entries_
           .emplace(std::move(credential.access_key),
                    Entry{std::move(credential.secret_key), std::move(credential.grant)})
           .second) {
    return Status::InvalidArgument("duplicate access key");
  }
  return Status::Ok();
}

const std::string* CredentialStore::SecretOf(std::string_view access_key) const {
  const auto it = entries_.find(access_key);
  return it == entries_.end() ? nullptr : &it->second.secret;
}

const KvGrant* CredentialStore::GrantOf(std::string_view access_key) const {
  const auto it = entries_.find(access_key);
  return it == entries_.end() ? nullptr : &it->second.grant;
}

Credential CredentialStore::First() const {
  TESSERA_CHECK(!entries_.empty());
  const auto& [access_key, entry] = *entries_.begin();
  return Credential{access_key, entry.secret, entry.grant};
}

Result<CredentialStore> ParseCredentials(std::string_view text) {
  CredentialStore store;
  std::istringstream lines{std::string(text)};
  std::string line;
  int line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream fields(line);
    Credential credential;
    const auto malformed = [line_number](const std::string& why) {
      return Status::InvalidArgument("credentials line " + std::to_string(line_number) + ": " + why);
    };
    if (!(fields >> credential.access_key >> credential.secret_key)) {
      return malformed("expected \"<access_key> <secret_key> [tables=T1,T2] [read-only]\"");
    }
    std::optional<std::set<std::string, std::less<>>> tables;
    bool read_only = false;
    for (std::string field; fields >> field;) {
      if (field == "read-only" && !read_only) {
        read_only = true;
      } else if (field.rfind("tables=", 0) == 0 && !tables) {
        std::string_view list = std::string_view(field).substr(7);
        tables.emplace();
        while (!list.empty()) {
          const size_t comma = list.find(',');
          tables->emplace(list.substr(0, comma));
          list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        }
        if (tables->empty()) return malformed("tables= names no table");
      } else {
        return malformed("unexpected field '" + field + "' (tables=T1,T2 or read-only)");
      }
    }
    auto grant = KvGrant::Of(tables.value_or(std::set<std::string, std::less<>>{}), read_only);
    if (!grant.ok()) return malformed(grant.status().message());
    credential.grant = std::move(grant).value();
    const Status added = store.Add(std::move(credential));
    if (!added.ok()) {
      return Status::InvalidArgument("credentials line " + std::to_string(line_number) + ": " +
                                     added.message());
    }
  }
  return store;
}

Result<CredentialStore> LoadCredentials(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read credentials file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return ParseCredentials(text.str());
}

Result<Credential> GenerateCredential() {
  Result<std::string> access = RandomHex(10);
  if (!access.ok()) return access.status();
  Result<std::string> secret = RandomHex(32);
  if (!secret.ok()) return secret.status();
  return Credential{"TK" + *access, *secret};
}

Result<Credential> CreateCredentialsFile(const std::string& path) {
  Result<Credential> credential = GenerateCredential();
  if (!credential.ok()) return credential.status();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return Status::Conflict("credentials file " + path + " already exists");
    return Status::IOError("cannot create " + path + ": " + std::strerror(errno));
  }
  const std::string text =
      "# Tessera credentials (docs/formats/credentials.md):\n"
      "# <access_key> <secret_key> [tables=T1,T2] [read-only]\n" +
      credential->access_key + " " + credential->secret_key + "\n";
  const ssize_t written = ::write(fd, text.data(), text.size());
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (written != static_cast<ssize_t>(text.size()) || !synced) {
    return Status::IOError("cannot write " + path);
  }
  return credential;
}

Result<Credential> EnsureCredentialsFile(const std::string& path) {
  Result<Credential> created = CreateCredentialsFile(path);
  if (created.ok() || created.status().code() != StatusCode::kConflict) return created;
  Result<CredentialStore> store = LoadCredentials(path);
  if (!store.ok()) return store.status();
  if (store->size() == 0) return Status::InvalidArgument(path + " holds no credential");
  return store->First();
}

Result<std::string> IssueTokenFromDir(const std::string& dir, int64_t ttl_seconds,
                                      int64_t now_unix, const std::string& access_key,
                                      const std::optional<KvGrant>& narrowed) {
  if (ttl_seconds < 1 || ttl_seconds > limits::kRouterTokenLifetimeSecondsMax) {
    return Status::InvalidArgument("token lifetime must be 1.." +
                                   std::to_string(limits::kRouterTokenLifetimeSecondsMax) + " s");
  }
  Result<CredentialStore> store = LoadCredentials(dir + "/credentials");
  if (!store.ok()) return store.status();
  if (store->size() == 0) return Status::NotFound("no credential in " + dir + "/credentials");
  Credential credential = store->First();
  if (!access_key.empty()) {
    const std::string* secret = store->SecretOf(access_key);
    if (secret == nullptr) return Status::NotFound("unknown access key " + access_key);
    credential = Credential{access_key, *secret, *store->GrantOf(access_key)};
  }
  if (!narrowed) return IssueToken(credential, now_unix + ttl_seconds);
  const KvGrant grant = credential.grant.Narrowed(*narrowed);
  if (grant.allows_nothing()) {
    return Status::InvalidArgument("credential " + credential.access_key + " (grant " +
                                   credential.grant.ToText() + ") has none of the tables asked for");
  }
  return IssueToken(credential, now_unix + ttl_seconds, grant);
}

std::string IssueToken(const Credential& credential, int64_t expiry_unix,
                       const std::optional<KvGrant>& grant) {
  std::string signed_text = credential.access_key + "." + std::to_string(expiry_unix);
  if (grant) signed_text += "." + grant->ToText();
  return std::string(grant ? kGrantTokenPrefix : kTokenPrefix) + signed_text + "." +
         Signature(credential.secret_key, signed_text);
}

Result<VerifiedToken> VerifyToken(const CredentialStore& store, std::string_view token,
                                  int64_t now_unix) {
  const bool with_grant = token.substr(0, kGrantTokenPrefix.size()) == kGrantTokenPrefix;
  if (token.size() > limits::kRouterTokenBytesMax ||
      (!with_grant && token.substr(0, kTokenPrefix.size()) != kTokenPrefix)) {
    return Status::InvalidArgument("malformed token");
  }
  // access_key "." expiry ["." grant] "." signature; a grant may hold dots
  // (table names), the other fields never do.
  const std::string_view body = token.substr(kTokenPrefix.size());
  const size_t dot1 = body.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : body.find('.', dot1 + 1);
  const size_t last = body.rfind('.');
  if (dot2 == std::string_view::npos || (with_grant && last == dot2)) {
    return Status::InvalidArgument("malformed token");
  }
  const std::string_view access_key = body.substr(0, dot1);
  const std::string_view expiry_text = body.substr(dot1 + 1, dot2 - dot1 - 1);
  const std::string_view signature = body.substr(last + 1);
  if (expiry_text.empty() || expiry_text.size() > 18 || signature.size() != kSignatureHexBytes ||
      (!with_grant && last != dot2)) {
    return Status::InvalidArgument("malformed token");
  }
  int64_t expiry_unix = 0;
  for (const char c : expiry_text) {
    if (c < '0' || c > '9') return Status::InvalidArgument("malformed token");
    expiry_unix = expiry_unix * 10 + (c - '0');
  }
  const std::string* secret = store.SecretOf(access_key);
  if (secret == nullptr) return Status::NotFound("unknown access key");
  const std::string expected = Signature(*secret, body.substr(0, last));
  if (CRYPTO_memcmp(expected.data(), signature.data(), kSignatureHexBytes) != 0) {
    return Status::Conflict("bad token signature");
  }
  if (expiry_unix <= now_unix) return Status::Timeout("token expired");
  if (expiry_unix - now_unix > limits::kRouterTokenLifetimeSecondsMax) {
    return Status::InvalidArgument("token valid for longer than " +
                                   std::to_string(limits::kRouterTokenLifetimeSecondsMax) + " s");
  }
  KvGrant grant = *store.GrantOf(access_key);
  if (with_grant) {
    auto named = KvGrant::Parse(body.substr(dot2 + 1, last - dot2 - 1));
    if (!named.ok()) return Status::InvalidArgument("malformed token grant");
    grant = grant.Narrowed(*named);
  }
  return VerifiedToken{std::string(access_key), expiry_unix, std::move(grant)};
}

std::string StringToSign(const SignedParts& request, int64_t timestamp_unix) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(request.body.data()), request.body.size(), digest);
  std::string out(kSignedRequestScheme);
  out += "\n" + std::to_string(timestamp_unix) + "\n";
  out += request.method;
  out += "\n";
  out += request.path;
  out += "\n";
  out += request.query;
  out += "\ncontent-type:";
  out += request.content_type;
  out += "\nif-match:";
  out += request.if_match;
  out += "\nif-none-match:";
  out += request.if_none_match;
  out += "\n";
  out += Hex(digest, sizeof(digest));
  return out;
}

std::string SignRequest(const Credential& credential, const SignedParts& request, int64_t timestamp_unix) {
  return std::string(kSignedRequestScheme) + " Credential=" + credential.access_key +
         ", Timestamp=" + std::to_string(timestamp_unix) +
         ", Signature=" + Signature(credential.secret_key, StringToSign(request, timestamp_unix));
}

namespace {

// The value of `name=` among the comma-separated fields of `params`.
std::optional<std::string_view> SignedField(std::string_view params, std::string_view name) {
  while (!params.empty()) {
    const size_t comma = params.find(',');
    std::string_view field = params.substr(0, comma);
    params = comma == std::string_view::npos ? std::string_view() : params.substr(comma + 1);
    while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\t')) field.remove_suffix(1);
    if (field.size() > name.size() && field.substr(0, name.size()) == name && field[name.size()] == '=') {
      return field.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

}  // namespace

namespace {

struct SignedHeader {
  std::string_view access_key;
  int64_t timestamp = 0;
  std::string_view signature;
};

// The fields of a TK1-HMAC-SHA256 Authorization value, its key known and
// its timestamp within the window.
Result<SignedHeader> ParseSignedHeader(const CredentialStore& store, std::string_view authorization,
                                       int64_t now_unix) {
  if (authorization.size() > limits::kRouterTokenBytesMax ||
      authorization.substr(0, kSignedRequestScheme.size()) != kSignedRequestScheme ||
      authorization.size() == kSignedRequestScheme.size() || authorization[kSignedRequestScheme.size()] != ' ') {
    return Status::InvalidArgument("malformed signature header");
  }
  const std::string_view params = authorization.substr(kSignedRequestScheme.size() + 1);
  const std::optional<std::string_view> access_key = SignedField(params, "Credential");
  const std::optional<std::string_view> timestamp_text = SignedField(params, "Timestamp");
  const std::optional<std::string_view> signature = SignedField(params, "Signature");
  if (!access_key || !timestamp_text || !signature || timestamp_text->empty() || timestamp_text->size() > 18 ||
      signature->size() != kSignatureHexBytes) {
    return Status::InvalidArgument("signature header needs Credential, Timestamp and a 64-hex-digit Signature");
  }
  SignedHeader header{*access_key, 0, *signature};
  for (const char c : *timestamp_text) {
    if (c < '0' || c > '9') return Status::InvalidArgument("malformed Timestamp");
    header.timestamp = header.timestamp * 10 + (c - '0');
  }
  if (store.SecretOf(header.access_key) == nullptr) return Status::NotFound("unknown access key");
  const int64_t skew = header.timestamp > now_unix ? header.timestamp - now_unix : now_unix - header.timestamp;
  if (skew > limits::kRouterSignatureSkewSecondsMax) {
    return Status::Timeout("request timestamp " + std::to_string(skew) + " s away from the router's clock");
  }
  return header;
}

}  // namespace

Result<std::string> CheckSignedRequestHead(const CredentialStore& store, std::string_view authorization,
                                           int64_t now_unix) {
  auto header = ParseSignedHeader(store, authorization, now_unix);
  if (!header.ok()) return header.status();
  return std::string(header->access_key);
}

Result<std::string> VerifySignedRequest(const CredentialStore& store, std::string_view authorization,
                                        const SignedParts& request, int64_t now_unix) {
  auto header = ParseSignedHeader(store, authorization, now_unix);
  if (!header.ok()) return header.status();
  const std::string expected = Signature(*store.SecretOf(header->access_key), StringToSign(request, header->timestamp));
  if (CRYPTO_memcmp(expected.data(), header->signature.data(), kSignatureHexBytes) != 0) {
    return Status::Conflict("bad request signature");
  }
  return std::string(header->access_key);
}

}  // namespace tessera::router
