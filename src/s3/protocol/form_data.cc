#include "s3/protocol/form_data.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace tessera::s3 {
namespace {

constexpr std::string_view kCrlf = "\r\n";
// Bytes of transport padding (RFC 2046) allowed after a delimiter.
constexpr size_t kPaddingBytesMax = 256;

S3Error Malformed() { return S3Error(S3ErrorCode::kMalformedPOSTRequest); }

// What S3 answers a form without a file part, or with a second one
// (InvalidArgument on the wire, not the IncorrectNumberOfFilesInPostRequest
// its error table lists).
S3Error WrongFileCount(std::string count) {
  return InvalidArgumentError("POST requires exactly one file upload per request.", "file",
                              std::move(count));
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A header parameter's value: a quoted-string (backslash escapes) or a token.
std::string Unquote(std::string_view v) {
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return std::string(v);
  std::string out;
  v = v.substr(1, v.size() - 2);
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) ++i;
    out.push_back(v[i]);
  }
  return out;
}

// Splits "a; b=\"x;y\"; c" at the semicolons outside quotes.
std::vector<std::string_view> SplitParams(std::string_view s) {
  std::vector<std::string_view> out;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && quoted) {
      ++i;
    } else if (s[i] == '"') {
      quoted = !quoted;
    } else if (s[i] == ';' && !quoted) {
      out.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(Trim(s.substr(start)));
  return out;
}

struct PartHeaders {
  bool form_data = false;
  std::optional<std::string> name;
  std::optional<std::string> filename;
  std::string content_type;
};

S3Result<PartHeaders> ParsePartHeaders(std::string_view block) {
  PartHeaders out;
  while (!block.empty()) {
    const size_t eol = block.find(kCrlf);
    const std::string_view line = block.substr(0, eol);
    block = eol == std::string_view::npos ? std::string_view() : block.substr(eol + kCrlf.size());
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return Malformed();
    const std::string_view name = Trim(line.substr(0, colon));
    const std::string_view value = Trim(line.substr(colon + 1));
    if (EqualsNoCase(name, "Content-Type")) {
      out.content_type = std::string(value);
    } else if (EqualsNoCase(name, "Content-Disposition")) {
      const std::vector<std::string_view> params = SplitParams(value);
      out.form_data = EqualsNoCase(params.front(), "form-data");
      for (size_t i = 1; i < params.size(); ++i) {
        const size_t eq = params[i].find('=');
        if (eq == std::string_view::npos) continue;
        const std::string_view key = Trim(params[i].substr(0, eq));
        const std::string_view v = Trim(params[i].substr(eq + 1));
        if (EqualsNoCase(key, "name")) out.name = Unquote(v);
        if (EqualsNoCase(key, "filename")) out.filename = Unquote(v);
      }
    }
  }
  if (!out.form_data || !out.name || out.name->empty()) return Malformed();
  return out;
}

}  // namespace

S3Result<std::string> FormDataBoundary(std::string_view content_type) {
  const std::vector<std::string_view> params = SplitParams(content_type);
  if (!EqualsNoCase(params.front(), "multipart/form-data")) return Malformed();
  for (size_t i = 1; i < params.size(); ++i) {
    const size_t eq = params[i].find('=');
    if (eq == std::string_view::npos || !EqualsNoCase(Trim(params[i].substr(0, eq)), "boundary")) {
      continue;
    }
    std::string boundary = Unquote(Trim(params[i].substr(eq + 1)));
    // RFC 2046: 1 to 70 characters.
    if (boundary.empty() || boundary.size() > 70) return Malformed();
    return boundary;
  }
  return Malformed();
}

FormDataReader::FormDataReader(std::string boundary, FormDataSink& sink, FormDataLimits limits)
    : delimiter_("\r\n--" + boundary), sink_(sink), limits_(limits) {
  // The first delimiter has no line break before it: one is assumed, so
  // every delimiter is found the same way.
  buffer_ = kCrlf;
}

S3Status FormDataReader::Fail(S3Error error) {
  failed_ = error;
  buffer_.clear();
  return error;
}

S3Status FormDataReader::Feed(std::string_view bytes) {
  if (failed_) return *failed_;
  if (state_ == State::kEnd) return S3Status::Ok();  // the epilogue is ignored
  buffer_.append(bytes);
  for (bool progressed = true; progressed;) {
    progressed = false;
    if (S3Status st = Step(&progressed); !st.ok()) return Fail(st.error());
  }
  return S3Status::Ok();
}

S3Status FormDataReader::Finish() {
  if (failed_) return *failed_;
  if (state_ != State::kEnd) return Fail(Malformed());
  if (!file_seen_) return Fail(WrongFileCount("0"));
  return S3Status::Ok();
}

S3Status FormDataReader::StartPart(std::string_view headers) {
  auto part = ParsePartHeaders(headers);
  if (!part.ok()) return part.error();
  if (file_seen_) {
    if (EqualsNoCase(*part->name, "file")) return WrongFileCount("2");
    state_ = State::kIgnoredPart;
    return S3Status::Ok();
  }
  if (EqualsNoCase(*part->name, "file")) {
    file_seen_ = true;
    state_ = State::kFileBytes;
    return sink_.OnFileStart(FormFile{std::move(*part->name), part->filename.value_or(""),
                                      std::move(part->content_type)});
  }
  if (++fields_ > limits_.fields_max) {
    return S3Error(S3ErrorCode::kMaxPostPreDataLengthExceededError);
  }
  fields_bytes_ += part->name->size();
  field_name_ = std::move(*part->name);
  state_ = State::kFieldValue;
  return S3Status::Ok();
}

S3Status FormDataReader::Step(bool* progressed) {
  const std::string_view buf(buffer_);
  const size_t keep = delimiter_.size() - 1;  // a delimiter may start in the last bytes
  switch (state_) {
    case State::kPreamble:
    case State::kIgnoredPart: {
      const size_t at = buf.find(delimiter_);
      if (at == std::string_view::npos) {
        if (buffer_.size() > keep) buffer_.erase(0, buffer_.size() - keep);
        return S3Status::Ok();
      }
      buffer_.erase(0, at + delimiter_.size());
      state_ = State::kAfterDelimiter;
      *progressed = true;
      return S3Status::Ok();
    }
    case State::kAfterDelimiter: {
      if (buf.size() < 2) return S3Status::Ok();
      if (buf.substr(0, 2) == "--") {
        state_ = State::kEnd;
        buffer_.clear();
        return S3Status::Ok();
      }
      const size_t eol = buf.find(kCrlf);
      if (eol == std::string_view::npos) {
        return buf.size() > kPaddingBytesMax ? S3Status(Malformed()) : S3Status::Ok();
      }
      if (Trim(buf.substr(0, eol)).size() != 0) return Malformed();
      buffer_.erase(0, eol + kCrlf.size());
      state_ = State::kHeaders;
      *progressed = true;
      return S3Status::Ok();
    }
    case State::kHeaders: {
      if (buf.substr(0, kCrlf.size()) == kCrlf) {  // a part without headers
        return Malformed();
      }
      const size_t end = buf.find("\r\n\r\n");
      if (end == std::string_view::npos) {
        return buf.size() > limits_.part_headers_bytes_max
                   ? S3Status(S3ErrorCode::kMaxPostPreDataLengthExceededError)
                   : S3Status::Ok();
      }
      if (end > limits_.part_headers_bytes_max) {
        return S3Error(S3ErrorCode::kMaxPostPreDataLengthExceededError);
      }
      const std::string headers(buf.substr(0, end));
      buffer_.erase(0, end + 4);
      *progressed = true;
      return StartPart(headers);
    }
    case State::kFieldValue: {
      const size_t at = buf.find(delimiter_);
      const size_t value_bytes = at == std::string_view::npos ? buf.size() - std::min(buf.size(), keep) : at;
      if (fields_bytes_ + value_bytes > limits_.fields_bytes_max) {
        return S3Error(S3ErrorCode::kMaxPostPreDataLengthExceededError);
      }
      if (at == std::string_view::npos) return S3Status::Ok();
      fields_bytes_ += at;
      std::string value(buf.substr(0, at));
      buffer_.erase(0, at + delimiter_.size());
      state_ = State::kAfterDelimiter;
      *progressed = true;
      return sink_.OnField(std::move(field_name_), std::move(value));
    }
    case State::kFileBytes: {
      const size_t at = buf.find(delimiter_);
      if (at == std::string_view::npos) {
        if (buffer_.size() <= keep) return S3Status::Ok();
        const size_t pass = buffer_.size() - keep;
        S3Status st = sink_.OnFileBytes(buf.substr(0, pass));
        buffer_.erase(0, pass);
        return st;
      }
      if (at > 0) {
        if (S3Status st = sink_.OnFileBytes(buf.substr(0, at)); !st.ok()) return st;
      }
      buffer_.erase(0, at + delimiter_.size());
      state_ = State::kAfterDelimiter;
      *progressed = true;
      return sink_.OnFileEnd();
    }
    case State::kEnd:
      buffer_.clear();
      return S3Status::Ok();
  }
  return S3Status::Ok();
}

}  // namespace tessera::s3
