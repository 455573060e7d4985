#include "router/token_revocations.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <sstream>

#include "common/posix_file.h"

namespace tessera::router {
namespace {

bool IsLowerHex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// signature -> expiry, from the file text; InvalidArgument naming the line.
Result<std::map<std::string, int64_t>> Parse(std::string_view text) {
  std::map<std::string, int64_t> entries;
  size_t line_number = 0;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string signature;
    int64_t expiry = 0;
    std::string extra;
    if (!(fields >> signature >> expiry) || (fields >> extra) || signature.size() != 64 ||
        !IsLowerHex(signature) || expiry <= 0) {
      return Status::InvalidArgument("revoked tokens: bad line " + std::to_string(line_number));
    }
    entries[signature] = expiry;
  }
  return entries;
}

// The file's text; empty when absent. IOError when unreadable or too large.
Result<std::string> ReadAll(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::string();
    return posix::ErrnoStatus("stat " + path, errno);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read " + path);
  std::string text;
  char buffer[8192];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kRevokedTokensFileBytesMax) {
      return Status::IOError(path + " is larger than " +
                             std::to_string(kRevokedTokensFileBytesMax) + " bytes");
    }
  }
  return text;
}

}  // namespace

std::string_view TokenSignature(std::string_view token) {
  const size_t dot = token.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : token.substr(dot + 1);
}

Status RevokeToken(const std::string& path, const CredentialStore& store, std::string_view token,
                   int64_t now_unix) {
  Result<VerifiedToken> verified = VerifyToken(store, token, now_unix);
  if (!verified.ok()) {
    return Status::InvalidArgument("not a valid token of this cluster: " + verified.status().message());
  }
  auto text = ReadAll(path);
  if (!text.ok()) return text.status();
  auto entries = Parse(*text);
  if (!entries.ok()) return entries.status();
  std::erase_if(*entries, [now_unix](const auto& entry) { return entry.second <= now_unix; });
  (*entries)[std::string(TokenSignature(token))] = verified->expiry_unix;
  if (entries->size() > kRevokedTokensMax) {
    return Status::Throttled("more than " + std::to_string(kRevokedTokensMax) +
                             " revoked tokens are still valid");
  }
  std::string out = "# Revoked KV bearer tokens: <signature> <expiry_unix> (tessera kv revoke)\n";
  for (const auto& [signature, expiry] : *entries) out += signature + " " + std::to_string(expiry) + "\n";
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  posix::Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.valid()) return posix::ErrnoStatus("create " + temp, errno);
  Status written = posix::WriteAll(fd.get(), out, temp);
  if (written.ok()) written = posix::Fsync(fd.get(), temp);
  if (written.ok() && fd.Close() != 0) written = posix::ErrnoStatus("close " + temp, errno);
  if (written.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    written = posix::ErrnoStatus("rename " + temp, errno);
  }
  if (!written.ok()) ::unlink(temp.c_str());
  return written;
}

TokenRevocations::TokenRevocations(std::string path, std::chrono::milliseconds recheck)
    : path_(std::move(path)),
      recheck_(recheck),
      revoked_(std::make_shared<const std::unordered_set<std::string>>()) {}

bool TokenRevocations::Revoked(std::string_view signature) {
  std::shared_ptr<const std::unordered_set<std::string>> revoked;
  {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_check_) {
      next_check_ = now + recheck_;
      ReloadIfChanged();
    }
    revoked = revoked_;
  }
  return revoked->count(std::string(signature)) > 0;
}

void TokenRevocations::ReloadIfChanged() {
  struct stat st;
  int64_t mtime_ns = -1, size = -1;
  if (::stat(path_.c_str(), &st) == 0) {
    mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    size = static_cast<int64_t>(st.st_size);
  }
  if (mtime_ns == seen_mtime_ns_ && size == seen_size_) return;
  auto text = ReadAll(path_);
  auto entries = text.ok() ? Parse(*text) : Result<std::map<std::string, int64_t>>(text.status());
  if (!entries.ok()) {
    spdlog::error("router.revoked_tokens_unreadable path={} error=\"{}\"", path_, entries.status().ToString());
    return;  // keeps the previous list; tried again after the next change
  }
  auto revoked = std::make_shared<std::unordered_set<std::string>>();
  for (const auto& [signature, expiry] : *entries) revoked->insert(signature);
  revoked_ = std::move(revoked);
  seen_mtime_ns_ = mtime_ns;
  seen_size_ = size;
  spdlog::info("router.revoked_tokens_loaded path={} tokens={}", path_, revoked_->size());
}

}  // namespace tessera::router
