#include "router/http_client.h"

#include <strings.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <limits>
#include <optional>

namespace tessera::router {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

std::string HttpReply::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && ::strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return "";
}

class HttpClient::Impl {
 public:
  Impl(std::string host, uint16_t port, std::chrono::milliseconds timeout)
      : host_(std::move(host)), port_(port), timeout_(timeout), stream_(io_) {}

  Result<HttpReply> Request(const std::string& method, const std::string& target,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const std::string& body) {
    // A kept-alive connection the server closed fails on first use: retry
    // once on a fresh connection (only when the request may be resent,
    // i.e. the old connection failed before a response).
    const bool reused = connected_;
    written_ = false;
    Result<HttpReply> reply = Once(method, target, headers, body);
    if (!reply.ok() && reused && reply.status().code() == StatusCode::kUnavailable) {
      reply = Once(method, target, headers, body);
    }
    if (reply.ok()) return reply;
    // written_ spans both attempts: the first may have reached the server.
    return reply.status().WithSendOutcome(written_ ? SendOutcome::kSentOutcomeUnknown
                                                   : SendOutcome::kNotSent);
  }

 private:
  Result<HttpReply> Once(const std::string& method, const std::string& target,
                         const std::vector<std::pair<std::string, std::string>>& headers,
                         const std::string& body) {
    beast::error_code error;
    if (!connected_) {
      asio::ip::tcp::resolver resolver(io_);
      auto endpoints = resolver.resolve(host_, std::to_string(port_), error);
      if (error) return Status::Unavailable("resolve " + host_ + ": " + error.message());
      stream_.expires_after(timeout_);
      stream_.async_connect(endpoints, [&](beast::error_code e, const auto&) { error = e; });
      RunIo();
      if (error) return Status::Unavailable("connect " + host_ + ":" + std::to_string(port_) + ": " + error.message());
      connected_ = true;
    }
    bhttp::request<bhttp::string_body> request{bhttp::string_to_verb(method), target, 11};
    if (request.method() == bhttp::verb::unknown) request.method_string(method);
    request.set(bhttp::field::host, host_);
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = body;
    request.prepare_payload();
    stream_.expires_after(timeout_);
    written_ = true;  // from here on, some of it may reach the server
    bhttp::async_write(stream_, request, [&](beast::error_code e, size_t) { error = e; });
    RunIo();
    if (error) return Fail(error, "write");
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    if (method == "HEAD") parser.skip(true);
    stream_.expires_after(timeout_);
    bhttp::async_read(stream_, buffer, parser, [&](beast::error_code e, size_t) { error = e; });
    RunIo();
    if (error) return Fail(error, "read");
    bhttp::response<bhttp::string_body> response = parser.release();
    HttpReply reply;
    reply.status = response.result_int();
    for (const auto& field : response) {
      reply.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    reply.body = std::move(response.body());
    if (!response.keep_alive()) Close();
    return reply;
  }

  // Runs the one pending operation to completion (tcp_stream's expiry
  // applies to asynchronous operations only, hence async ops run here).
  void RunIo() {
    io_.restart();
    io_.run();
  }

  Status Fail(const beast::error_code& error, const char* what) {
    Close();
    if (error == beast::error::timeout) return Status::Timeout(std::string("http ") + what + " timed out");
    return Status::Unavailable(std::string("http ") + what + ": " + error.message());
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    stream_.close();
    connected_ = false;
  }

  const std::string host_;
  const uint16_t port_;
  const std::chrono::milliseconds timeout_;
  asio::io_context io_;
  beast::tcp_stream stream_;
  bool connected_ = false;
  bool written_ = false;  // some of the current Request was handed to a connection
};

HttpClient::HttpClient(std::string host, uint16_t port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(std::move(host), port, timeout)) {}

HttpClient::~HttpClient() = default;

Result<HttpReply> HttpClient::Request(const std::string& method, const std::string& target,
                                      const std::vector<std::pair<std::string, std::string>>& headers,
                                      const std::string& body) {
  return impl_->Request(method, target, headers, body);
}

}  // namespace tessera::router
