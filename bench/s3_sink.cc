// tessera_s3_sink: an S3 endpoint that stores nothing, to measure how fast a
// client alone can go on this machine (the ceiling any server can reach
// with it). Uploads (PutObject, multipart) are read and discarded; every
// object reads back as `--object-bytes` zero bytes, ranges included. No
// authentication is checked. A benchmark tool, not part of Tessera.
//
//   tessera_s3_sink --port 19480 --object-bytes 268435456
#include <CLI/CLI.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "s3/protocol/http_rules.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kPieceBytes = 1 << 20;  // bound on one body read or write

bool HasQuery(const std::string& target, std::string_view name) {
  const size_t q = target.find('?');
  if (q == std::string::npos) return false;
  const auto params = tessera::s3::ParseQuery(std::string_view(target).substr(q + 1));
  return params.ok() && tessera::s3::FindQueryParam(params.value(), name) != nullptr;
}

std::string KeyOf(const std::string& target) {
  std::string path = target.substr(0, target.find('?'));
  const size_t slash = path.find('/', 1);
  return slash == std::string::npos ? "" : path.substr(slash + 1);
}

void WriteSimple(tcp::socket& socket, unsigned status, const std::string& body,
                 const std::vector<std::pair<std::string, std::string>>& headers, bool keep_alive) {
  http::response<http::string_body> response{static_cast<http::status>(status), 11};
  response.set(http::field::server, "tessera-s3-sink");
  response.set("x-amz-request-id", "sink");
  for (const auto& [name, value] : headers) response.set(name, value);
  if (!body.empty()) response.set(http::field::content_type, "application/xml");
  response.body() = body;
  response.keep_alive(keep_alive);
  response.prepare_payload();
  http::write(socket, response);
}

// Streams `range` of a zero-filled object in kPieceBytes writes.
void WriteZeros(tcp::socket& socket, uint64_t object_bytes, std::optional<tessera::s3::ByteRange> range,
                bool head, bool keep_alive) {
  const uint64_t length = range ? range->length() : object_bytes;
  http::response<http::empty_body> response{range ? http::status::partial_content : http::status::ok,
                                            11};
  response.set(http::field::server, "tessera-s3-sink");
  response.set(http::field::etag, "\"00000000000000000000000000000000\"");
  response.set(http::field::last_modified, "Tue, 01 Dec 2026 00:00:00 GMT");
  response.set(http::field::content_type, "application/octet-stream");
  response.set(http::field::accept_ranges, "bytes");
  if (range) {
    response.set(http::field::content_range, tessera::s3::ContentRange(*range, object_bytes));
  }
  response.content_length(length);
  response.keep_alive(keep_alive);
  http::response_serializer<http::empty_body> serializer{response};
  http::write_header(socket, serializer);
  if (head) return;
  static const std::string zeros(kPieceBytes, '\0');
  for (uint64_t left = length; left > 0;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, zeros.size()));
    asio::write(socket, asio::buffer(zeros.data(), n));
    left -= n;
  }
}

void Serve(tcp::socket socket, uint64_t object_bytes) {
  beast::flat_buffer buffer;
  std::vector<char> sink(kPieceBytes);
  beast::error_code ec;
  for (;;) {
    http::request_parser<http::buffer_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    parser.get().body().data = sink.data();
    parser.get().body().size = sink.size();
    http::read_header(socket, buffer, parser, ec);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return;
    const auto& head = parser.get();
    if (head[http::field::expect] == "100-continue") {
      http::response<http::empty_body> go{http::status::continue_, 11};
      http::write(socket, go, ec);
      if (ec) return;
    }
    while (!parser.is_done()) {
      parser.get().body().data = sink.data();
      parser.get().body().size = sink.size();
      http::read(socket, buffer, parser, ec);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return;
    }
    const std::string target(head.target());
    const std::string key = KeyOf(target);
    const bool keep_alive = head.keep_alive();
    const std::string etag = "\"00000000000000000000000000000000\"";
    try {
      if (head.method() == http::verb::get || head.method() == http::verb::head) {
        if (key.empty()) {
          WriteSimple(socket, 200,
                      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>sink</Name>"
                      "<KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>"
                      "</ListBucketResult>",
                      {}, keep_alive);
          continue;
        }
        // A Range that selects nothing is served whole: the sink only
        // measures clients that ask for ranges inside the object.
        std::optional<tessera::s3::ByteRange> range;
        if (const auto it = head.find(http::field::range); it != head.end()) {
          auto resolved = tessera::s3::ResolveRange(std::string_view(it->value().data(), it->value().size()),
                                                    object_bytes);
          if (resolved.ok()) range = resolved.value();
        }
        WriteZeros(socket, object_bytes, range, head.method() == http::verb::head, keep_alive);
      } else if (head.method() == http::verb::post && HasQuery(target, "uploads")) {
        WriteSimple(socket, 200,
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><InitiateMultipartUploadResult>"
                    "<Bucket>sink</Bucket><Key>" + key + "</Key><UploadId>sink-upload</UploadId>"
                    "</InitiateMultipartUploadResult>",
                    {}, keep_alive);
      } else if (head.method() == http::verb::post && HasQuery(target, "uploadId")) {
        WriteSimple(socket, 200,
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUploadResult>"
                    "<Bucket>sink</Bucket><Key>" + key + "</Key><ETag>" + etag +
                        "</ETag></CompleteMultipartUploadResult>",
                    {}, keep_alive);
      } else {
        // PutObject, UploadPart, CreateBucket, DeleteObject...: accepted.
        WriteSimple(socket, head.method() == http::verb::delete_ ? 204 : 200, "",
                    {{"ETag", etag}}, keep_alive);
      }
    } catch (const boost::system::system_error&) {
      return;
    }
    if (!keep_alive) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"S3 endpoint that stores nothing: a client's ceiling on this machine"};
  uint16_t port = 19480;
  uint64_t object_bytes = 256ull << 20;
  app.add_option("--port", port, "listen on 127.0.0.1:PORT");
  app.add_option("--object-bytes", object_bytes, "size every object reads back as (zeros)");
  CLI11_PARSE(app, argc, argv);
  try {
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    std::printf("s3 sink on http://127.0.0.1:%u, objects of %llu bytes\n", acceptor.local_endpoint().port(),
                static_cast<unsigned long long>(object_bytes));
    std::fflush(stdout);
    for (;;) {
      tcp::socket socket = acceptor.accept();
      std::thread(Serve, std::move(socket), object_bytes).detach();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera_s3_sink: %s\n", e.what());
    return 1;
  }
}
