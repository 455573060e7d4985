// A streaming reader of the multipart/form-data body (RFC 7578) of an S3
// POST object request (browser-based upload): the form fields before the
// file in memory, the file's bytes passed on as they arrive, so a
// multi-GiB upload never sits in memory.
//
// Contract:
//  1. Fields come before the file, in body order, each through OnField
//     once its value is complete. The part named "file" starts the file:
//     OnFileStart, then OnFileBytes with every byte of its content in
//     order (in chunks of any size), then OnFileEnd once the closing
//     delimiter is seen. Other parts after the file are read and ignored,
//     as S3 ignores them; a second part named "file" is refused (below).
//  2. Limits: a field's name and headers within `part_headers_bytes_max`,
//     all fields' names and values together within `fields_bytes_max`
//     (MaxPostPreDataLengthExceededError beyond), at most `fields_max`
//     fields. Memory held is bounded by those plus one delimiter.
//  3. Every malformed body is MalformedPOSTRequest: a missing first
//     delimiter, a part without Content-Disposition "form-data" and a
//     name, headers without their blank line, a body that ends before the
//     closing delimiter (Finish). No file part (Finish), or a second
//     one, is 400 InvalidArgument "POST requires exactly one file upload
//     per request." (ArgumentName file), as S3 answers on the wire.
//  4. Once Feed or Finish returned an error, the reader is spent: every
//     later call returns the same error.
//
// Thread safety: none; one reader per request.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "s3/protocol/s3_result.h"

namespace tessera::s3 {

// The boundary parameter of a "multipart/form-data; boundary=..."
// Content-Type (quoted or not), or MalformedPOSTRequest.
S3Result<std::string> FormDataBoundary(std::string_view content_type);

struct FormFile {
  std::string field_name;    // the part's name ("file")
  std::string filename;      // the part's filename parameter (may be empty)
  std::string content_type;  // the part's Content-Type, empty when absent
};

class FormDataSink {
 public:
  virtual ~FormDataSink() = default;
  virtual S3Status OnField(std::string name, std::string value) = 0;
  virtual S3Status OnFileStart(FormFile file) = 0;
  virtual S3Status OnFileBytes(std::string_view bytes) = 0;
  virtual S3Status OnFileEnd() = 0;
};

struct FormDataLimits {
  size_t part_headers_bytes_max = 8 << 10;
  size_t fields_bytes_max = 20 << 10;
  size_t fields_max = 100;
};

class FormDataReader {
 public:
  FormDataReader(std::string boundary, FormDataSink& sink, FormDataLimits limits = {});

  // The next bytes of the body, in order.
  S3Status Feed(std::string_view bytes);
  // The body ended: the closing delimiter must have been seen and a file
  // read.
  S3Status Finish();

 private:
  enum class State { kPreamble, kHeaders, kFieldValue, kFileBytes, kAfterDelimiter, kIgnoredPart, kEnd };

  S3Status Step(bool* progressed);
  S3Status StartPart(std::string_view headers);
  S3Status Fail(S3Error error);

  const std::string delimiter_;  // "\r\n--" + boundary
  FormDataSink& sink_;
  const FormDataLimits limits_;
  State state_ = State::kPreamble;
  std::string buffer_;  // bytes received and not yet consumed
  std::string field_name_;
  size_t fields_bytes_ = 0;
  size_t fields_ = 0;
  bool file_seen_ = false;
  std::optional<S3Error> failed_;
};

}  // namespace tessera::s3
