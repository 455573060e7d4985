// One StreamServer connection: reads request heads, hands each request to
// the handler as an Exchange, and carries out the Exchange's calls on the
// connection's strand. See stream_server.h for the contract.
//
// Per connection, at most one read operation (head, body piece, drain or
// linger) and one write operation (100 Continue, response head or piece)
// are outstanding at a time; Beast's tcp_stream keeps one timer per
// direction. Invariants (on the strand):
//  1. read_pending_ <=> a read of a body piece is outstanding and read_cb_
//     is set; write_pending_ <=> a response write is wanted or outstanding
//     and write_cb_ is set (it may wait behind continue_pending_).
//  2. An exchange is live while exchange_active_ and its seq == seq_; every
//     call of an older exchange fails with Aborted.
//  3. The next request head is read only after the response finished, no
//     operation is outstanding and the body was consumed (drained).
//  4. Close() runs the pending callbacks with Aborted, once; completions of
//     operations cancelled by it find closed_ and do nothing.
#include "http/stream_connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <charconv>
#include <string>
#include <type_traits>

#include "common/check.h"
#include "common/http_field_chars.h"

namespace tessera::http::internal {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Scratch buffer for discarded bytes (drain, linger).
constexpr size_t kDiscardBufferBytes = 64 << 10;
// Read buffer beyond the header bound (Beast reads up to 64 KiB at once).
constexpr size_t kReadBufferSlackBytes = 64 << 10;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// Free read-buffer capacity for a body read. Beast reads at most the
// buffer's free capacity, which after the headers is often a few KiB: a
// 256 MiB upload took 61k recv calls, each one Beast read operation, and
// the router spent more on them than on the bytes. Reserved when a body is
// read (at most this much per connection beyond the header buffer).
constexpr size_t kBodyReadBufferBytes = 64 << 10;

std::string_view ToStd(beast::string_view s) { return {s.data(), s.size()}; }

// Statuses whose responses carry no body (RFC 9110 6.4.1).
bool IsBodylessStatus(unsigned status) { return status < 200 || status == 204 || status == 304; }

bool ContainsCloseToken(std::string_view value) {
  for (size_t i = 0; i + 5 <= value.size(); ++i) {
    if (EqualsIgnoreCase(value.substr(i, 5), "close")) return true;
  }
  return false;
}

std::optional<uint64_t> ParseLength(std::optional<std::string_view> value) {
  if (!value) return std::nullopt;
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (ec != std::errc() || end != value->data() + value->size()) return std::nullopt;
  return n;
}

Status ReadStatus(const error_code& ec) {
  if (ec == beast::error::timeout) return Status::Timeout("http: request body idle timeout");
  if (ec == bhttp::error::body_limit) return Status::InvalidArgument("http: request body too large");
  if (ec == asio::error::operation_aborted) return Status::Aborted("http: connection closed");
  return Status::IOError("http: reading the request body: " + ec.message());
}

Status WriteStatus(const error_code& ec) {
  if (ec == beast::error::timeout) return Status::Timeout("http: response write idle timeout");
  if (ec == asio::error::operation_aborted) return Status::Aborted("http: connection closed");
  return Status::IOError("http: writing the response: " + ec.message());
}

Status Dead() { return Status::Aborted("http: exchange is over (connection closed or response finished)"); }

template <class Stream>
class Connection;

template <class Stream>
class ExchangeImpl final : public Exchange {
 public:
  ExchangeImpl(std::shared_ptr<Connection<Stream>> connection, uint64_t seq, RequestHead head)
      : connection_(std::move(connection)), seq_(seq), head_(std::move(head)) {}
  ~ExchangeImpl() override;

  const RequestHead& head() const override { return head_; }
  void ReadBody(size_t bytes_max, BodyPieceCallback callback) override;
  void Respond(unsigned status, Headers headers, std::string body, StatusCallback done) override;
  void StartResponse(unsigned status, Headers headers, std::optional<uint64_t> content_length,
                     StatusCallback done) override;
  using Exchange::WriteBody;
  void WriteBody(SharedBytes piece, StatusCallback done) override;
  void FinishResponse(StatusCallback done) override;
  void Abort() override;

 private:
  const std::shared_ptr<Connection<Stream>> connection_;
  const uint64_t seq_;
  const RequestHead head_;
};

template <class Stream>
class Connection final : public ConnectionBase,
                         public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  Connection(std::shared_ptr<StreamServerCore> core, uint64_t id, tcp::socket socket)
      : core_(std::move(core)),
        id_(id),
        stream_(MakeStream(*core_, std::move(socket))),
        executor_(stream_.get_executor()),
        buffer_(core_->options_.header_bytes_max + kReadBufferSlackBytes) {
    error_code ec;
    const tcp::endpoint remote = Tcp().socket().remote_endpoint(ec);
    if (!ec) remote_address_ = remote.address().to_string() + ":" + std::to_string(remote.port());
  }
  ~Connection() override { core_->OnConnectionGone(id_); }

  void Start() override {
    asio::post(executor_, [self = this->shared_from_this()] { self->Begin(); });
  }
  void PostClose() override {
    asio::post(executor_, [self = this->shared_from_this()] { self->Close(); });
  }

  // For ExchangeImpl: runs `op` on the strand, or `fail` inline when the
  // io_context has stopped (nothing would run the strand).
  template <class Op, class Fail>
  void Run(Op op, Fail fail) {
    if (core_->io_.stopped()) return fail();
    asio::post(executor_, std::move(op));
  }

  // --- exchange operations, on the strand --------------------------------
  void DoReadBody(uint64_t seq, size_t bytes_max, BodyPieceCallback callback);
  void DoRespond(uint64_t seq, unsigned status, Headers headers, std::string body,
                 StatusCallback done);
  void DoStartResponse(uint64_t seq, unsigned status, Headers headers,
                       std::optional<uint64_t> content_length, StatusCallback done);
  void DoWriteBody(uint64_t seq, SharedBytes piece, StatusCallback done);
  void DoFinishResponse(uint64_t seq, StatusCallback done);
  void DoAbort(uint64_t seq) {
    if (Check(seq).ok()) Close();
  }
  void Abandon(uint64_t seq);

 private:
  enum class ResponseState { kNone, kStreaming, kFinished };
  using SmallMessage = bhttp::response<bhttp::string_body>;

  static Stream MakeStream(StreamServerCore& core, tcp::socket socket) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *core.ssl_context_);
    } else {
      return Stream(std::move(socket));
    }
  }
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }
  void ArmTimer() {
    Tcp().expires_after(std::chrono::milliseconds(core_->options_.idle_timeout_ms));
  }

  void Begin();
  void ReadHead();
  void OnHead(const error_code& ec);
  std::optional<std::pair<unsigned, const char*>> HeadProblem(const error_code& ec) const;
  void Dispatch();
  void ProtocolError(unsigned status, std::string_view reason);

  void SendContinue();
  void ReadPiece();
  void OnPiece(error_code ec);

  Status Check(uint64_t seq) const;
  bool DecideKeepAlive(const Headers& headers) const;
  template <class Message>
  void FillHead(Message& message, const Headers& headers) const;
  void StartWrite(std::function<void()> start);
  void WriteSmall(std::shared_ptr<SmallMessage> message, bool finishes_response);
  void OnWritten(error_code ec, bool finishes_response);
  void MaybeAdvance();
  void Drain();
  void Linger();
  void LingerRead();
  void Close();

  const std::shared_ptr<StreamServerCore> core_;
  const uint64_t id_;
  Stream stream_;
  const asio::any_io_executor executor_;
  beast::flat_buffer buffer_;
  std::string remote_address_;
  bool closed_ = false;

  // The current request.
  uint64_t seq_ = 0;
  bool exchange_active_ = false;
  std::optional<bhttp::request_parser<bhttp::buffer_body>> parser_;
  unsigned version_ = 11;
  bool request_keep_alive_ = true;
  bool head_method_ = false;
  bool expect_continue_ = false;
  bool continue_sent_ = false;
  std::optional<uint64_t> content_length_;
  uint64_t body_bytes_read_ = 0;
  bool body_failed_ = false;
  bool exchange_dropped_ = false;  // the handler let go of the Exchange

  // Reading a body piece (invariant 1).
  bool read_pending_ = false;
  BodyPieceCallback read_cb_;
  std::string piece_;
  size_t filled_ = 0;

  // Writing the response (invariant 1).
  ResponseState response_ = ResponseState::kNone;
  bool keep_alive_ = true;
  bool write_pending_ = false;
  StatusCallback write_cb_;
  bool continue_pending_ = false;
  std::function<void()> after_continue_;  // a response write waiting for it
  std::optional<bhttp::response<bhttp::buffer_body>> out_message_;
  std::optional<bhttp::response_serializer<bhttp::buffer_body>> out_serializer_;
  std::optional<uint64_t> out_length_;
  uint64_t out_written_ = 0;
  bool out_head_only_ = false;
  SharedBytes out_piece_;

  // Drain and linger.
  std::string discard_;
  size_t lingered_bytes_ = 0;
  std::chrono::steady_clock::time_point linger_deadline_;
};

// --- reading heads ------------------------------------------------------------

template <class Stream>
void Connection<Stream>::Begin() {
  if (closed_) return;
  if constexpr (kTls) {
    ArmTimer();
    stream_.async_handshake(asio::ssl::stream_base::server,
                            [self = this->shared_from_this()](const error_code& ec) {
                              if (self->closed_) return;
                              if (ec) {
                                self->core_->tls_failed_.fetch_add(1, std::memory_order_relaxed);
                                spdlog::debug("http.tls_handshake_failed peer={} error={}",
                                              self->remote_address_, ec.message());
                                return self->Close();
                              }
                              self->ReadHead();
                            });
  } else {
    ReadHead();
  }
}

template <class Stream>
void Connection<Stream>::ReadHead() {
  if (closed_) return;
  if (core_->stopping()) return Close();
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(core_->options_.header_bytes_max));
  parser_->body_limit(core_->options_.body_bytes_max);
  ArmTimer();
  bhttp::async_read_header(stream_, buffer_, *parser_,
                           [self = this->shared_from_this()](const error_code& ec, size_t) {
                             self->OnHead(ec);
                           });
}

// The status and reason to answer a failed or unacceptable head with, or
// nullopt to close silently (EOF, reset, timeout).
template <class Stream>
std::optional<std::pair<unsigned, const char*>> Connection<Stream>::HeadProblem(
    const error_code& ec) const {
  if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
    return std::pair{431u, "request header too large"};
  }
  if (ec == bhttp::error::body_limit) return std::pair{413u, "request body too large"};
  if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message) return std::nullopt;
  if (ec) {
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category()) {
      return std::pair{400u, "malformed request"};
    }
    return std::nullopt;
  }
  // Beast ignores transfer codings other than a final "chunked"; a body it
  // does not frame must not be parsed as the next request.
  for (const auto& field : parser_->get()) {
    if (field.name() != bhttp::field::transfer_encoding) continue;
    std::string_view value = ToStd(field.value());
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (!EqualsIgnoreCase(value, "chunked")) return std::pair{501u, "transfer coding not implemented"};
  }
  return std::nullopt;
}

template <class Stream>
void Connection<Stream>::OnHead(const error_code& ec) {
  if (closed_) return;
  if (auto problem = HeadProblem(ec)) return ProtocolError(problem->first, problem->second);
  if (ec) return Close();
  if (core_->stopping()) return ProtocolError(503, "server stopping");
  Dispatch();
}

template <class Stream>
void Connection<Stream>::Dispatch() {
  const auto& message = parser_->get();
  RequestHead head;
  head.method = std::string(message.method_string());
  head.target = std::string(message.target());
  const size_t question = head.target.find('?');
  head.path = head.target.substr(0, question);
  if (question != std::string::npos) head.query = head.target.substr(question + 1);
  for (const auto& field : message) {
    head.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  head.version = message.version();
  head.remote_address = remote_address_;
  head.tls = kTls;
  if (const auto length = parser_->content_length()) head.content_length = *length;
  head.chunked = parser_->chunked();
  head.expect_continue = message.version() >= 11 &&
                         EqualsIgnoreCase(ToStd(message[bhttp::field::expect]), "100-continue");

  ++seq_;
  exchange_active_ = true;
  version_ = head.version;
  request_keep_alive_ = message.keep_alive();
  head_method_ = message.method() == bhttp::verb::head;
  expect_continue_ = head.expect_continue;
  continue_sent_ = false;
  content_length_ = head.content_length;
  body_bytes_read_ = 0;
  body_failed_ = false;
  exchange_dropped_ = false;
  response_ = ResponseState::kNone;
  keep_alive_ = true;
  out_length_.reset();
  out_written_ = 0;
  out_head_only_ = false;
  core_->requests_.fetch_add(1, std::memory_order_relaxed);
  core_->handler_(std::make_shared<ExchangeImpl<Stream>>(this->shared_from_this(), seq_,
                                                         std::move(head)));
}

template <class Stream>
void Connection<Stream>::ProtocolError(unsigned status, std::string_view reason) {
  core_->protocol_errors_.fetch_add(1, std::memory_order_relaxed);
  spdlog::warn("http.protocol_error peer={} status={} reason=\"{}\"", remote_address_, status,
               reason);
  ProtocolErrorResponse rendered = core_->RenderProtocolError(status, reason);
  if (rendered.status != 0) status = rendered.status;
  auto message = std::make_shared<SmallMessage>(static_cast<bhttp::status>(status), 11);
  keep_alive_ = false;
  FillHead(*message, rendered.headers);
  message->body() = std::move(rendered.body);
  message->content_length(message->body().size());
  ArmTimer();
  bhttp::async_write(stream_, *message,
                     [self = this->shared_from_this(), message](const error_code& ec, size_t) {
                       if (self->closed_) return;
                       if (ec) return self->Close();
                       self->Linger();
                     });
}

// --- reading the body ---------------------------------------------------------

template <class Stream>
Status Connection<Stream>::Check(uint64_t seq) const {
  if (closed_ || !exchange_active_ || seq != seq_) return Dead();
  return Status::Ok();
}

template <class Stream>
void Connection<Stream>::DoReadBody(uint64_t seq, size_t bytes_max, BodyPieceCallback callback) {
  Status status = Check(seq);
  if (status.ok() && response_ == ResponseState::kFinished) status = Dead();
  if (status.ok() && read_pending_) status = Status::Aborted("http: a ReadBody is already pending");
  if (status.ok() && body_failed_) status = Status::Aborted("http: the request body failed before");
  if (!status.ok()) return callback(std::move(status), true);
  if (parser_->is_done()) return callback(std::string(), true);

  size_t size = std::clamp<size_t>(bytes_max, 1, core_->options_.body_read_chunk_bytes);
  if (content_length_) size = static_cast<size_t>(std::min<uint64_t>(size, *content_length_ - body_bytes_read_));
  read_pending_ = true;
  read_cb_ = std::move(callback);
  piece_.assign(size, '\0');
  filled_ = 0;
  if (expect_continue_ && !continue_sent_ && response_ == ResponseState::kNone) return SendContinue();
  ReadPiece();
}

template <class Stream>
void Connection<Stream>::SendContinue() {
  continue_pending_ = true;
  ArmTimer();
  asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                    [self = this->shared_from_this()](const error_code& ec, size_t) {
                      self->continue_pending_ = false;
                      if (self->closed_) return;
                      if (ec) {
                        BodyPieceCallback callback = std::move(self->read_cb_);
                        self->read_cb_ = nullptr;
                        self->Close();
                        return callback(WriteStatus(ec), true);
                      }
                      self->continue_sent_ = true;
                      self->ReadPiece();
                      if (self->after_continue_) {
                        std::function<void()> start = std::move(self->after_continue_);
                        self->after_continue_ = nullptr;
                        start();
                      }
                    });
}

template <class Stream>
void Connection<Stream>::ReadPiece() {
  auto& body = parser_->get().body();
  body.data = piece_.data() + filled_;
  body.size = piece_.size() - filled_;
  ArmTimer();
  if (buffer_.capacity() < kBodyReadBufferBytes) buffer_.reserve(kBodyReadBufferBytes);
  bhttp::async_read(stream_, buffer_, *parser_,
                    [self = this->shared_from_this()](const error_code& ec, size_t) {
                      self->OnPiece(ec);
                    });
}

template <class Stream>
void Connection<Stream>::OnPiece(error_code ec) {
  if (closed_) return;
  if (ec == bhttp::error::need_buffer) ec = {};
  const size_t got = (piece_.size() - filled_) - parser_->get().body().size;
  filled_ += got;
  body_bytes_read_ += got;
  const bool end = !ec && parser_->is_done();
  if (!ec && !end && filled_ < piece_.size()) return ReadPiece();

  read_pending_ = false;
  BodyPieceCallback callback = std::move(read_cb_);
  read_cb_ = nullptr;
  if (ec) {
    body_failed_ = true;
    callback(ReadStatus(ec), true);
  } else {
    piece_.resize(filled_);
    callback(std::move(piece_), end);
    piece_ = std::string();
  }
  MaybeAdvance();
}

// --- writing the response -----------------------------------------------------

// Keep the connection after this response? Not when either side asked to
// close, the server stops, or an unread body rest could not be drained
// safely (contract 5).
template <class Stream>
bool Connection<Stream>::DecideKeepAlive(const Headers& headers) const {
  if (!request_keep_alive_ || core_->stopping() || body_failed_) return false;
  if (const auto connection = FindHeader(headers, "Connection"); connection && ContainsCloseToken(*connection)) {
    return false;
  }
  // Expect: 100-continue answered without a 100 (e.g. an empty body):
  // close. The client may not send the body at all, and some clients
  // (botocore) misread the final answer on a reused connection.
  if (expect_continue_ && !continue_sent_) return false;
  if (parser_->is_done()) return true;
  if (!content_length_) return false;                     // chunked: the rest is unknown
  return *content_length_ - body_bytes_read_ <= core_->options_.drain_bytes_max;
}

template <class Stream>
template <class Message>
void Connection<Stream>::FillHead(Message& message, const Headers& headers) const {
  bool has_server = false;
  size_t left_out = 0;
  for (const auto& [name, value] : headers) {
    if (EqualsIgnoreCase(name, "Content-Length") || EqualsIgnoreCase(name, "Transfer-Encoding") ||
        EqualsIgnoreCase(name, "Connection")) {
      continue;
    }
    // The last check before bytes go out: Beast writes fields as given, so
    // a CR/LF in a value would split the response.
    if (!IsWritableFieldName(name) || !IsWritableFieldValue(value)) {
      ++left_out;
      continue;
    }
    has_server = has_server || EqualsIgnoreCase(name, "Server");
    message.insert(name, value);
  }
  if (left_out > 0) {
    spdlog::error("http.response_headers_dropped peer={} count={} (could split the response)",
                  remote_address_, left_out);
  }
  if (!has_server) message.set(bhttp::field::server, core_->options_.server_name);
  message.keep_alive(keep_alive_);
}

template <class Stream>
void Connection<Stream>::StartWrite(std::function<void()> start) {
  if (continue_pending_) {
    after_continue_ = std::move(start);
    return;
  }
  start();
}

template <class Stream>
void Connection<Stream>::DoRespond(uint64_t seq, unsigned status, Headers headers,
                                   std::string body, StatusCallback done) {
  Status check = Check(seq);
  if (check.ok() && response_ != ResponseState::kNone) {
    check = Status::InvalidArgument("http: a response was already started");
  }
  if (!check.ok()) {
    if (done) done(std::move(check));
    return;
  }
  response_ = ResponseState::kStreaming;
  keep_alive_ = DecideKeepAlive(headers);
  auto message = std::make_shared<SmallMessage>(static_cast<bhttp::status>(status), version_);
  FillHead(*message, headers);
  if (head_method_) {
    const auto given = ParseLength(FindHeader(headers, "Content-Length"));
    message->content_length(given.value_or(body.size()));
  } else if (!IsBodylessStatus(status)) {
    message->content_length(body.size());
    message->body() = std::move(body);
  }
  write_pending_ = true;
  write_cb_ = std::move(done);
  StartWrite([self = this->shared_from_this(), message] { self->WriteSmall(message, true); });
}

template <class Stream>
void Connection<Stream>::WriteSmall(std::shared_ptr<SmallMessage> message,
                                    bool finishes_response) {
  if (closed_) return;
  ArmTimer();
  bhttp::async_write(stream_, *message,
                     [self = this->shared_from_this(), message, finishes_response](
                         const error_code& ec, size_t) { self->OnWritten(ec, finishes_response); });
}

template <class Stream>
void Connection<Stream>::DoStartResponse(uint64_t seq, unsigned status, Headers headers,
                                         std::optional<uint64_t> content_length,
                                         StatusCallback done) {
  Status check = Check(seq);
  if (check.ok() && response_ != ResponseState::kNone) {
    check = Status::InvalidArgument("http: a response was already started");
  }
  if (!check.ok()) {
    if (done) done(std::move(check));
    return;
  }
  response_ = ResponseState::kStreaming;
  keep_alive_ = DecideKeepAlive(headers);
  out_length_ = content_length;
  out_written_ = 0;
  out_head_only_ = head_method_ || IsBodylessStatus(status);
  write_pending_ = true;
  write_cb_ = std::move(done);
  if (out_head_only_) {
    // Only the head goes out; the response stays open until FinishResponse.
    auto message = std::make_shared<SmallMessage>(static_cast<bhttp::status>(status), version_);
    FillHead(*message, headers);
    if (content_length && !IsBodylessStatus(status)) message->content_length(*content_length);
    return StartWrite(
        [self = this->shared_from_this(), message] { self->WriteSmall(message, false); });
  }
  if (!content_length && version_ < 11) keep_alive_ = false;  // HTTP/1.0: delimited by close
  out_message_.emplace(static_cast<bhttp::status>(status), version_);
  FillHead(*out_message_, headers);
  if (content_length) {
    out_message_->content_length(*content_length);
  } else if (version_ >= 11) {
    out_message_->chunked(true);
  }
  out_message_->body().data = nullptr;
  out_message_->body().more = true;
  out_serializer_.emplace(*out_message_);
  StartWrite([self = this->shared_from_this()] {
    if (self->closed_) return;
    self->ArmTimer();
    bhttp::async_write_header(self->stream_, *self->out_serializer_,
                              [self](const error_code& ec, size_t) { self->OnWritten(ec, false); });
  });
}

template <class Stream>
void Connection<Stream>::DoWriteBody(uint64_t seq, SharedBytes piece, StatusCallback done) {
  Status check = Check(seq);
  if (check.ok() && response_ != ResponseState::kStreaming) {
    check = Status::InvalidArgument("http: WriteBody without a started streaming response");
  }
  if (check.ok() && write_pending_) check = Status::InvalidArgument("http: a write is pending");
  if (!check.ok()) {
    if (done) done(std::move(check));
    return;
  }
  if (piece.empty() || out_head_only_) {
    if (done) done(Status::Ok());
    return;
  }
  if (out_length_ && out_written_ + piece.size() > *out_length_) {
    Close();  // the handler broke its own framing: the exchange is dead
    if (done) done(Status::InvalidArgument("http: WriteBody beyond the announced Content-Length"));
    return;
  }
  out_written_ += piece.size();
  out_piece_ = std::move(piece);
  out_message_->body().data = const_cast<char*>(out_piece_.data());  // only read
  out_message_->body().size = out_piece_.size();
  out_message_->body().more = true;
  write_pending_ = true;
  write_cb_ = std::move(done);
  ArmTimer();
  bhttp::async_write(stream_, *out_serializer_,
                     [self = this->shared_from_this()](const error_code& ec, size_t) {
                       self->OnWritten(ec == bhttp::error::need_buffer ? error_code() : ec, false);
                     });
}

template <class Stream>
void Connection<Stream>::DoFinishResponse(uint64_t seq, StatusCallback done) {
  Status check = Check(seq);
  if (check.ok() && response_ != ResponseState::kStreaming) {
    check = Status::InvalidArgument("http: FinishResponse without a started streaming response");
  }
  if (check.ok() && write_pending_) check = Status::InvalidArgument("http: a write is pending");
  if (!check.ok()) {
    if (done) done(std::move(check));
    return;
  }
  if (out_head_only_) {
    response_ = ResponseState::kFinished;
    if (done) done(Status::Ok());
    return MaybeAdvance();
  }
  if (out_length_ && out_written_ != *out_length_) {
    Close();  // the client would wait for bytes that never come
    if (done) done(Status::InvalidArgument("http: FinishResponse short of the announced Content-Length"));
    return;
  }
  out_message_->body().data = nullptr;
  out_message_->body().size = 0;
  out_message_->body().more = false;
  write_pending_ = true;
  write_cb_ = std::move(done);
  ArmTimer();
  bhttp::async_write(stream_, *out_serializer_,
                     [self = this->shared_from_this()](const error_code& ec, size_t) {
                       self->OnWritten(ec == bhttp::error::need_buffer ? error_code() : ec, true);
                     });
}

template <class Stream>
void Connection<Stream>::OnWritten(error_code ec, bool finishes_response) {
  if (closed_) return;
  write_pending_ = false;
  StatusCallback done = std::move(write_cb_);
  write_cb_ = nullptr;
  out_piece_ = SharedBytes();
  if (ec) {
    Close();
    if (done) done(WriteStatus(ec));
    return;
  }
  if (finishes_response) {
    response_ = ResponseState::kFinished;
    out_serializer_.reset();
    out_message_.reset();
  }
  if (done) done(Status::Ok());
  // A dropped exchange cannot finish its response: cut it (contract 3).
  if (exchange_dropped_ && response_ != ResponseState::kFinished) return Close();
  MaybeAdvance();
}

template <class Stream>
void Connection<Stream>::Abandon(uint64_t seq) {
  if (!Check(seq).ok()) return;
  switch (response_) {
    case ResponseState::kNone:
      spdlog::warn("http.exchange_dropped peer={} answer=500", remote_address_);
      return DoRespond(seq, 500, {{"Content-Type", "text/plain; charset=utf-8"}},
                       "internal error: request dropped unanswered\n", nullptr);
    case ResponseState::kStreaming:
      // A pending write (Respond, or a piece whose callback does not hold
      // the exchange) ends first; OnWritten then closes if unfinished.
      exchange_dropped_ = true;
      if (!write_pending_) Close();
      return;
    case ResponseState::kFinished:
      return;
  }
}

// --- after the response ---------------------------------------------------------

template <class Stream>
void Connection<Stream>::MaybeAdvance() {
  if (closed_ || !exchange_active_ || response_ != ResponseState::kFinished || read_pending_ ||
      write_pending_ || continue_pending_) {
    return;
  }
  exchange_active_ = false;
  if (!keep_alive_ || body_failed_) return Linger();
  if (!parser_->is_done()) return Drain();
  ReadHead();
}

template <class Stream>
void Connection<Stream>::Drain() {
  if (discard_.empty()) discard_.resize(kDiscardBufferBytes);
  auto& body = parser_->get().body();
  body.data = discard_.data();
  body.size = discard_.size();
  ArmTimer();
  bhttp::async_read(stream_, buffer_, *parser_,
                    [self = this->shared_from_this()](error_code ec, size_t) {
                      if (self->closed_) return;
                      if (ec == bhttp::error::need_buffer) ec = {};
                      if (ec) return self->Close();
                      if (!self->parser_->is_done()) return self->Drain();
                      self->ReadHead();
                    });
}

// The connection closes after this response: stop sending, then discard
// what the client still sends for a bounded time so that it reads the
// response instead of a reset.
template <class Stream>
void Connection<Stream>::Linger() {
  if (closed_) return;
  if constexpr (!kTls) {
    error_code ignored;
    Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
  }
  if (discard_.empty()) discard_.resize(kDiscardBufferBytes);
  lingered_bytes_ = 0;
  linger_deadline_ =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(limits::kHttpStreamLingerMs);
  LingerRead();
}

template <class Stream>
void Connection<Stream>::LingerRead() {
  if (closed_) return;
  if (std::chrono::steady_clock::now() >= linger_deadline_ ||
      lingered_bytes_ >= limits::kHttpStreamLingerBytesMax) {
    return Close();
  }
  Tcp().expires_at(linger_deadline_);
  stream_.async_read_some(asio::buffer(discard_),
                          [self = this->shared_from_this()](const error_code& ec, size_t n) {
                            if (self->closed_) return;
                            if (ec) return self->Close();
                            self->lingered_bytes_ += n;
                            self->LingerRead();
                          });
}

template <class Stream>
void Connection<Stream>::Close() {
  if (closed_) return;
  closed_ = true;
  error_code ignored;
  Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
  Tcp().close();
  BodyPieceCallback read_cb = std::move(read_cb_);
  StatusCallback write_cb = std::move(write_cb_);
  read_cb_ = nullptr;
  write_cb_ = nullptr;
  after_continue_ = nullptr;
  if (read_cb) read_cb(Status::Aborted("http: connection closed"), true);
  if (write_cb) write_cb(Status::Aborted("http: connection closed"));
  // Last: Stop returns once every connection is gone, so the callbacks
  // above have run by then (contract 8).
  core_->OnConnectionGone(id_);
}

// --- ExchangeImpl ---------------------------------------------------------------

template <class Stream>
ExchangeImpl<Stream>::~ExchangeImpl() {
  connection_->Run([c = connection_, seq = seq_] { c->Abandon(seq); }, [] {});
}

template <class Stream>
void ExchangeImpl<Stream>::ReadBody(size_t bytes_max, BodyPieceCallback callback) {
  TESSERA_CHECK(callback);
  auto shared = std::make_shared<BodyPieceCallback>(std::move(callback));
  connection_->Run(
      [c = connection_, seq = seq_, bytes_max, shared] {
        c->DoReadBody(seq, bytes_max, std::move(*shared));
      },
      [shared] { (*shared)(Dead(), true); });
}

template <class Stream>
void ExchangeImpl<Stream>::Respond(unsigned status, Headers headers, std::string body,
                                   StatusCallback done) {
  auto shared = std::make_shared<StatusCallback>(std::move(done));
  connection_->Run(
      [c = connection_, seq = seq_, status, headers = std::move(headers), body = std::move(body),
       shared]() mutable {
        c->DoRespond(seq, status, std::move(headers), std::move(body), std::move(*shared));
      },
      [shared] {
        if (*shared) (*shared)(Dead());
      });
}

template <class Stream>
void ExchangeImpl<Stream>::StartResponse(unsigned status, Headers headers,
                                         std::optional<uint64_t> content_length,
                                         StatusCallback done) {
  auto shared = std::make_shared<StatusCallback>(std::move(done));
  connection_->Run(
      [c = connection_, seq = seq_, status, headers = std::move(headers), content_length,
       shared]() mutable {
        c->DoStartResponse(seq, status, std::move(headers), content_length, std::move(*shared));
      },
      [shared] {
        if (*shared) (*shared)(Dead());
      });
}

template <class Stream>
void ExchangeImpl<Stream>::WriteBody(SharedBytes piece, StatusCallback done) {
  auto shared = std::make_shared<StatusCallback>(std::move(done));
  connection_->Run(
      [c = connection_, seq = seq_, piece = std::move(piece), shared]() mutable {
        c->DoWriteBody(seq, std::move(piece), std::move(*shared));
      },
      [shared] {
        if (*shared) (*shared)(Dead());
      });
}

template <class Stream>
void ExchangeImpl<Stream>::FinishResponse(StatusCallback done) {
  auto shared = std::make_shared<StatusCallback>(std::move(done));
  connection_->Run(
      [c = connection_, seq = seq_, shared] { c->DoFinishResponse(seq, std::move(*shared)); },
      [shared] {
        if (*shared) (*shared)(Dead());
      });
}

template <class Stream>
void ExchangeImpl<Stream>::Abort() {
  connection_->Run([c = connection_, seq = seq_] { c->DoAbort(seq); }, [] {});
}

}  // namespace

std::shared_ptr<ConnectionBase> MakePlainConnection(std::shared_ptr<StreamServerCore> core,
                                                    uint64_t id, tcp::socket socket) {
  return std::make_shared<Connection<PlainStream>>(std::move(core), id, std::move(socket));
}

std::shared_ptr<ConnectionBase> MakeTlsConnection(std::shared_ptr<StreamServerCore> core,
                                                  uint64_t id, tcp::socket socket) {
  TESSERA_CHECK(core->ssl_context_ != nullptr);
  return std::make_shared<Connection<TlsStream>>(std::move(core), id, std::move(socket));
}

}  // namespace tessera::http::internal
