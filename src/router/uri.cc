#include "router/uri.h"

#include "common/limits.h"

namespace tessera::router {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

bool IsTableChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

}  // namespace

Result<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else if (c != '%') {
      out.push_back(c);
    } else {
      if (i + 2 >= text.size()) {
        return Status::InvalidArgument("truncated percent escape");
      }
      const int hi = HexValue(text[i + 1]);
      const int lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return Status::InvalidArgument("invalid percent escape");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
  }
  return out;
}

std::string PercentEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size());
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (IsUnreserved(u)) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    }
  }
  return out;
}

Result<std::map<std::string, std::string>> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    Result<std::string> name = PercentDecode(part.substr(0, eq), true);
    if (!name.ok()) return name.status();
    Result<std::string> value = eq == std::string_view::npos
                                    ? Result<std::string>(std::string())
                                    : PercentDecode(part.substr(eq + 1), true);
    if (!value.ok()) return value.status();
    out[std::move(name).value()] = std::move(value).value();
  }
  return out;
}

Result<KvTarget> ParseKvTarget(std::string_view target) {
  static constexpr std::string_view kPrefix = "/kv/";
  const size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  KvTarget out;
  if (question != std::string_view::npos) {
    Result<std::map<std::string, std::string>> query = ParseQuery(target.substr(question + 1));
    if (!query.ok()) return query.status();
    out.query = std::move(query).value();
  }
  if (path.substr(0, kPrefix.size()) != kPrefix) {
    return Status::InvalidArgument("path must start with /kv/");
  }
  const std::string_view rest = path.substr(kPrefix.size());
  const size_t slash = rest.find('/');
  const std::string_view table = rest.substr(0, slash);
  if (table.empty() || table.size() > limits::kRouterTableBytesMax) {
    return Status::InvalidArgument("table name must be 1 to " +
                                   std::to_string(limits::kRouterTableBytesMax) + " bytes");
  }
  for (const char c : table) {
    if (!IsTableChar(c)) return Status::InvalidArgument("table name allows [A-Za-z0-9_.-] only");
  }
  out.table = std::string(table);
  if (slash == std::string_view::npos) return out;
  Result<std::string> key = PercentDecode(rest.substr(slash + 1));
  if (!key.ok()) return key.status();
  if (key->empty() || key->size() > limits::kRouterKeyBytesMax) {
    return Status::InvalidArgument("key must be 1 to " +
                                   std::to_string(limits::kRouterKeyBytesMax) + " bytes");
  }
  out.key = std::move(key).value();
  return out;
}

}  // namespace tessera::router
