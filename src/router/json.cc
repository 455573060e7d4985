#include "router/json.h"

#include <cstdint>

#include "common/base64.h"

namespace tessera::router {
namespace {

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// A cursor over JSON text; every Parse* skips leading whitespace.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }

  Result<std::string> ParseString() {
    if (!Consume('"')) return Status::InvalidArgument("expected a JSON string");
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return Status::InvalidArgument("control character in JSON string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      TESSERA_RETURN_IF_ERROR(ParseEscape(out));
    }
    return Status::InvalidArgument("unterminated JSON string");
  }

 private:
  Status ParseEscape(std::string& out) {
    if (pos_ >= text_.size()) return Status::InvalidArgument("truncated JSON escape");
    const char e = text_[pos_++];
    switch (e) {
      case '"': out.push_back('"'); return Status::Ok();
      case '\\': out.push_back('\\'); return Status::Ok();
      case '/': out.push_back('/'); return Status::Ok();
      case 'b': out.push_back('\b'); return Status::Ok();
      case 'f': out.push_back('\f'); return Status::Ok();
      case 'n': out.push_back('\n'); return Status::Ok();
      case 'r': out.push_back('\r'); return Status::Ok();
      case 't': out.push_back('\t'); return Status::Ok();
      case 'u': break;
      default: return Status::InvalidArgument("bad JSON escape");
    }
    Result<uint32_t> cp = ParseHex4();
    if (!cp.ok()) return cp.status();
    uint32_t code = *cp;
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (pos_ + 1 >= text_.size() || text_[pos_] != '\\' || text_[pos_ + 1] != 'u') {
        return Status::InvalidArgument("unpaired surrogate in JSON string");
      }
      pos_ += 2;
      Result<uint32_t> low = ParseHex4();
      if (!low.ok()) return low.status();
      if (*low < 0xDC00 || *low > 0xDFFF) return Status::InvalidArgument("bad surrogate pair");
      code = 0x10000 + ((code - 0xD800) << 10) + (*low - 0xDC00);
    } else if (code >= 0xDC00 && code <= 0xDFFF) {
      return Status::InvalidArgument("unpaired surrogate in JSON string");
    }
    AppendUtf8(code, out);
    return Status::Ok();
  }

  Result<uint32_t> ParseHex4() {
    if (pos_ + 4 > text_.size()) return Status::InvalidArgument("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
      else return Status::InvalidArgument("bad \\u escape");
    }
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

bool IsValidUtf8(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    size_t extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { extra = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { extra = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { extra = 3; cp = c & 0x07; }
    else return false;
    if (i + extra >= bytes.size()) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(bytes[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

std::string JsonQuote(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20) {
      out += "\\u00";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

std::string JsonBytesMember(std::string_view name, std::string_view bytes) {
  if (IsValidUtf8(bytes)) return JsonQuote(name) + ":" + JsonQuote(bytes);
  return JsonQuote(std::string(name) + "_base64") + ":" + JsonQuote(Base64Encode(bytes));
}

std::string JsonError(std::string_view message, std::string_view code_name) {
  return "{\"error\":" + JsonQuote(message) + ",\"code\":" + JsonQuote(code_name) + "}\n";
}

Result<std::map<std::string, std::string>> ParseJsonStringObject(std::string_view text) {
  Reader reader(text);
  std::map<std::string, std::string> out;
  if (!reader.Consume('{')) return Status::InvalidArgument("expected a JSON object");
  if (!reader.Consume('}')) {
    do {
      Result<std::string> name = reader.ParseString();
      if (!name.ok()) return name.status();
      if (!reader.Consume(':')) return Status::InvalidArgument("expected ':' in JSON object");
      Result<std::string> value = reader.ParseString();
      if (!value.ok()) return Status::InvalidArgument("JSON member values must be strings");
      out[std::move(name).value()] = std::move(value).value();
    } while (reader.Consume(','));
    if (!reader.Consume('}')) return Status::InvalidArgument("expected '}' in JSON object");
  }
  if (!reader.AtEnd()) return Status::InvalidArgument("trailing bytes after JSON object");
  return out;
}

}  // namespace tessera::router
