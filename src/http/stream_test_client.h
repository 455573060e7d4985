// Test only: a blocking HTTP/1.1 client (plain or TLS) on Boost.Beast with
// its own io_context, for stream_server_test. Every
// operation gives up after timeout (default 10 s) with beast::error::timeout.
//
// Thread safety: one thread per client.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::http::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using error_code = boost::system::error_code;
using StringResponse = bhttp::response<bhttp::string_body>;

class TestClient {
 public:
  // tls: trust `ca_file` and verify the certificate for `host_name`.
  TestClient(uint16_t port, bool tls, const std::string& ca_file = "",
             const std::string& host_name = "localhost")
      : port_(port), tls_(tls), host_name_(host_name), ssl_context_(asio::ssl::context::tls_client) {
    if (tls_) {
      error_code ignored;
      ssl_context_.load_verify_file(ca_file, ignored);
      ssl_context_.set_verify_mode(asio::ssl::verify_peer);
    }
  }

  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  // For tests that restrict what the client offers (protocol versions,
  // cipher suites); before Connect.
  SSL_CTX* native_tls_context() { return ssl_context_.native_handle(); }

  error_code Connect() {
    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), port_);
    if (!tls_) {
      plain_.emplace(io_);
      plain_->expires_after(timeout_);
      return Run([&](auto handler) { plain_->async_connect(endpoint, handler); });
    }
    secure_.emplace(io_, ssl_context_);
    SSL_set_tlsext_host_name(secure_->native_handle(), host_name_.c_str());
    secure_->set_verify_callback(asio::ssl::host_name_verification(host_name_));
    beast::get_lowest_layer(*secure_).expires_after(timeout_);
    error_code ec = Run([&](auto handler) {
      beast::get_lowest_layer(*secure_).async_connect(endpoint, handler);
    });
    if (ec) return ec;
    beast::get_lowest_layer(*secure_).expires_after(timeout_);
    return Run([&](auto handler) {
      secure_->async_handshake(asio::ssl::stream_base::client,
                               [handler](const error_code& e) { handler(e, 0); });
    });
  }

  error_code Write(std::string_view bytes) {
    return With([&](auto& stream) {
      Lowest().expires_after(timeout_);
      return Run([&](auto handler) {
        asio::async_write(stream, asio::buffer(bytes.data(), bytes.size()), handler);
      });
    });
  }

  error_code Write(bhttp::request<bhttp::string_body>& request) {
    if (!request.chunked()) request.prepare_payload();
    return With([&](auto& stream) {
      Lowest().expires_after(timeout_);
      return Run([&](auto handler) { bhttp::async_write(stream, request, handler); });
    });
  }

  // The next response, or nullopt on error (see last_error()).
  std::optional<StringResponse> Read(bool head_request = false) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(std::uint64_t{1} << 30);
    parser.skip(head_request);
    last_error_ = With([&](auto& stream) {
      Lowest().expires_after(timeout_);
      return Run([&](auto handler) { bhttp::async_read(stream, buffer_, parser, handler); });
    });
    if (last_error_) return std::nullopt;
    return parser.release();
  }

  // Reads the next response, handing its body to on_bytes piece by piece
  // through a fixed buffer. Returns the head (nullopt on error).
  std::optional<bhttp::response_header<>> ReadStreaming(
      const std::function<void(std::string_view)>& on_bytes) {
    bhttp::response_parser<bhttp::buffer_body> parser;
    parser.body_limit(std::uint64_t{1} << 40);
    last_error_ = With([&](auto& stream) {
      Lowest().expires_after(timeout_);
      return Run([&](auto handler) { bhttp::async_read_header(stream, buffer_, parser, handler); });
    });
    if (last_error_) return std::nullopt;
    std::string chunk(256 << 10, '\0');
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      error_code ec = With([&](auto& stream) {
        Lowest().expires_after(timeout_);
        return Run([&](auto handler) { bhttp::async_read(stream, buffer_, parser, handler); });
      });
      if (ec == bhttp::error::need_buffer) ec = {};
      const size_t got = chunk.size() - parser.get().body().size;
      on_bytes(std::string_view(chunk.data(), got));
      if (ec) {
        last_error_ = ec;
        return std::nullopt;
      }
    }
    return bhttp::response_header<>(parser.get().base());
  }

  // Reads raw bytes until `count` arrived or an error (EOF counts).
  error_code ReadRaw(size_t count, std::string* out) {
    while (out->size() < count) {
      if (buffer_.size() > 0) {
        const size_t take = std::min(count - out->size(), buffer_.size());
        out->append(static_cast<const char*>(buffer_.data().data()), take);
        buffer_.consume(take);
        continue;
      }
      char chunk[4096];
      size_t got = 0;
      const error_code ec = With([&](auto& stream) {
        Lowest().expires_after(timeout_);
        return Run([&](auto handler) {
          stream.async_read_some(asio::buffer(chunk, std::min(sizeof(chunk), count - out->size())),
                                 [handler, &got](const error_code& e, size_t n) {
                                   got = n;
                                   handler(e, n);
                                 });
        });
      });
      out->append(chunk, got);
      if (ec) return ec;
    }
    return {};
  }

  // True when the server closed the connection (a read ends with EOF or a
  // reset within the timeout, no bytes).
  bool WaitClosed() {
    std::string rest;
    const error_code ec = ReadRaw(1, &rest);
    return ec && ec != beast::error::timeout && rest.empty();
  }

  void Close() {
    error_code ignored;
    Lowest().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    Lowest().close();
  }

  // Abortive close (RST): the server sees a reset, not an orderly EOF.
  void Reset() {
    error_code ignored;
    Lowest().socket().set_option(asio::socket_base::linger(true, 0), ignored);
    Lowest().close();
  }

  // Bytes received and not yet read.
  size_t Available() {
    error_code ignored;
    return buffer_.size() + Lowest().socket().available(ignored);
  }

  error_code last_error() const { return last_error_; }
  beast::flat_buffer& buffer() { return buffer_; }

 private:
  beast::tcp_stream& Lowest() {
    return tls_ ? beast::get_lowest_layer(*secure_) : *plain_;
  }
  template <class F>
  error_code With(F f) {
    return tls_ ? f(*secure_) : f(*plain_);
  }
  // Starts one async operation and runs the io_context until it completed.
  template <class Start>
  error_code Run(Start start) {
    error_code result = asio::error::would_block;
    start([&result](const error_code& ec, size_t = 0) { result = ec; });
    io_.restart();
    io_.run();
    return result;
  }

  const uint16_t port_;
  const bool tls_;
  const std::string host_name_;
  std::chrono::milliseconds timeout_{10'000};
  asio::io_context io_;
  asio::ssl::context ssl_context_;
  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure_;
  beast::flat_buffer buffer_;
  error_code last_error_;
};

}  // namespace tessera::http::testing
