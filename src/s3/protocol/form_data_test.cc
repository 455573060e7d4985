// Goal: the POST upload body reader hands over exactly the fields and the
// file bytes a browser sent, whatever the chunking of the body, within its
// limits, and refuses every malformed body with S3's error.
#include "s3/protocol/form_data.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace tessera::s3 {
namespace {

struct Recorder : FormDataSink {
  std::vector<std::pair<std::string, std::string>> fields;
  std::optional<FormFile> file;
  std::string bytes;
  bool file_ended = false;
  bool fields_after_file = false;

  S3Status OnField(std::string name, std::string value) override {
    if (file) fields_after_file = true;
    fields.emplace_back(std::move(name), std::move(value));
    return S3Status::Ok();
  }
  S3Status OnFileStart(FormFile f) override {
    file = std::move(f);
    return S3Status::Ok();
  }
  S3Status OnFileBytes(std::string_view b) override {
    EXPECT_FALSE(file_ended);
    bytes.append(b);
    return S3Status::Ok();
  }
  S3Status OnFileEnd() override {
    file_ended = true;
    return S3Status::Ok();
  }
};

const std::string kBoundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW";

std::string Part(std::string_view headers, std::string_view value) {
  return "--" + kBoundary + "\r\n" + std::string(headers) + "\r\n\r\n" + std::string(value) + "\r\n";
}
std::string Field(std::string_view name, std::string_view value) {
  return Part("Content-Disposition: form-data; name=\"" + std::string(name) + "\"", value);
}
std::string FilePart(std::string_view content) {
  return Part("Content-Disposition: form-data; name=\"file\"; filename=\"a;b \\\"c\\\".txt\"\r\n"
              "Content-Type: text/plain",
              content);
}
std::string Close() { return "--" + kBoundary + "--\r\n"; }

// Feeds `body` in chunks of the sizes `rng` draws (1..max_chunk).
S3Status FeedChunked(FormDataReader& reader, const std::string& body, std::mt19937& rng, size_t max_chunk) {
  std::uniform_int_distribution<size_t> size(1, max_chunk);
  for (size_t at = 0; at < body.size();) {
    const size_t n = std::min(size(rng), body.size() - at);
    if (S3Status st = reader.Feed(std::string_view(body).substr(at, n)); !st.ok()) return st;
    at += n;
  }
  return reader.Finish();
}

TEST(FormDataBoundary, ReadsQuotedAndPlainBoundaries) {
  EXPECT_EQ(FormDataBoundary("multipart/form-data; boundary=abc").value(), "abc");
  EXPECT_EQ(FormDataBoundary("Multipart/Form-Data; charset=utf-8; boundary=\"a b;c\"").value(), "a b;c");
  EXPECT_EQ(FormDataBoundary("multipart/form-data").error().code, S3ErrorCode::kMalformedPOSTRequest);
  EXPECT_EQ(FormDataBoundary("text/plain; boundary=x").error().code, S3ErrorCode::kMalformedPOSTRequest);
  EXPECT_EQ(FormDataBoundary("multipart/form-data; boundary=" + std::string(71, 'x')).error().code,
            S3ErrorCode::kMalformedPOSTRequest);
}

TEST(FormDataReader, SameFieldsAndBytesWhateverTheChunking) {
  // File content full of near-delimiters: a line break and dashes, a
  // delimiter cut one byte short, the boundary without its line break.
  std::string content = "\r\n--" + kBoundary.substr(0, kBoundary.size() - 1) + "x\r\n-" + kBoundary + "\r";
  for (int i = 0; i < 2000; ++i) content.push_back(static_cast<char>(i * 7919 % 256));
  const std::string body = "preamble to ignore\r\n" + Field("key", "uploads/${filename}") +
                           Field("x-amz-meta-note", "two\r\nlines") + Field("empty", "") +
                           FilePart(content) + Field("after", "ignored") + Close() + "epilogue";
  for (size_t max_chunk : {1u, 2u, 7u, 64u, 100000u}) {
    std::mt19937 rng(static_cast<unsigned>(max_chunk));
    Recorder r;
    FormDataReader reader(kBoundary, r);
    ASSERT_TRUE(FeedChunked(reader, body, rng, max_chunk).ok()) << max_chunk;
    ASSERT_EQ(r.fields.size(), 3u);
    EXPECT_EQ(r.fields[0], std::make_pair(std::string("key"), std::string("uploads/${filename}")));
    EXPECT_EQ(r.fields[1].second, "two\r\nlines");
    EXPECT_EQ(r.fields[2].second, "");
    EXPECT_FALSE(r.fields_after_file);
    ASSERT_TRUE(r.file.has_value());
    EXPECT_EQ(r.file->filename, "a;b \"c\".txt");
    EXPECT_EQ(r.file->content_type, "text/plain");
    EXPECT_EQ(r.bytes, content);
    EXPECT_TRUE(r.file_ended);
  }
}

TEST(FormDataReader, EmptyFileIsAFile) {
  Recorder r;
  FormDataReader reader(kBoundary, r);
  ASSERT_TRUE(reader.Feed(Field("key", "k") + FilePart("") + Close()).ok());
  ASSERT_TRUE(reader.Finish().ok());
  EXPECT_TRUE(r.file_ended);
  EXPECT_EQ(r.bytes, "");
}

TEST(FormDataReader, FileBytesArePassedOnBeforeTheBodyEnds) {
  Recorder r;
  FormDataReader reader(kBoundary, r);
  ASSERT_TRUE(reader.Feed(FilePart("").substr(0, FilePart("").size() - 2)).ok());
  ASSERT_TRUE(reader.Feed(std::string(1 << 20, 'z')).ok());
  // All but the bytes that could still start the delimiter.
  EXPECT_GE(r.bytes.size(), (1u << 20) - kBoundary.size() - 4);
  EXPECT_FALSE(r.file_ended);
}

TEST(FormDataReader, RefusesMalformedBodies) {
  struct Case {
    std::string body;
    S3ErrorCode code;
  } cases[] = {
      {"", S3ErrorCode::kMalformedPOSTRequest},
      {"no delimiter at all", S3ErrorCode::kMalformedPOSTRequest},
      {Field("key", "k") + FilePart("x"), S3ErrorCode::kMalformedPOSTRequest},  // no closing delimiter
      {Part("Content-Type: text/plain", "v") + Close(), S3ErrorCode::kMalformedPOSTRequest},
      {Part("Content-Disposition: attachment; name=\"a\"", "v") + Close(),
       S3ErrorCode::kMalformedPOSTRequest},
      {Part("Content-Disposition: form-data", "v") + Close(), S3ErrorCode::kMalformedPOSTRequest},
      {Part("Content-Disposition form-data; name=\"a\"", "v") + Close(), S3ErrorCode::kMalformedPOSTRequest},
      {"--" + kBoundary + "junk\r\n" + Close(), S3ErrorCode::kMalformedPOSTRequest},
      {Field("key", "k") + Close(), S3ErrorCode::kInvalidArgument},  // no file
      {Field("key", "k") + FilePart("x") + FilePart("y") + Close(), S3ErrorCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    Recorder r;
    FormDataReader reader(kBoundary, r);
    S3Status st = reader.Feed(c.body);
    if (st.ok()) st = reader.Finish();
    ASSERT_FALSE(st.ok()) << c.body;
    EXPECT_EQ(st.error().code, c.code) << c.body;
    // Spent: the same error again.
    EXPECT_EQ(reader.Feed(FilePart("x") + Close()).error().code, c.code);
  }
}

TEST(FormDataReader, FieldsBeforeTheFileAreBounded) {
  FormDataLimits limits;
  limits.fields_bytes_max = 1000;
  limits.fields_max = 3;
  {
    Recorder r;
    FormDataReader reader(kBoundary, r, limits);
    S3Status st = reader.Feed(Field("big", std::string(2000, 'v')));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, S3ErrorCode::kMaxPostPreDataLengthExceededError);
  }
  {
    Recorder r;
    FormDataReader reader(kBoundary, r, limits);
    S3Status st = reader.Feed(Field("a", "1") + Field("b", "2") + Field("c", "3") + Field("d", "4"));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, S3ErrorCode::kMaxPostPreDataLengthExceededError);
  }
  {
    Recorder r;
    FormDataReader reader(kBoundary, r, limits);
    S3Status st = reader.Feed("--" + kBoundary + "\r\nX-Long: " + std::string(10000, 'h'));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, S3ErrorCode::kMaxPostPreDataLengthExceededError);
  }
  {  // The file itself is not bounded by the field limits.
    Recorder r;
    FormDataReader reader(kBoundary, r, limits);
    ASSERT_TRUE(reader.Feed(Field("a", "1") + FilePart(std::string(100000, 'f')) + Close()).ok());
    ASSERT_TRUE(reader.Finish().ok());
    EXPECT_EQ(r.bytes.size(), 100000u);
  }
}

}  // namespace
}  // namespace tessera::s3
