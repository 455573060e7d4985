// MaybeTlsStream<Next>: a byte stream that is either `Next` itself (plain
// TCP) or TLS over it, chosen once at construction; for servers and
// clients that offer both on the same code path.
//
// Contract:
//  1. With a context, the stream is TLS: the owner runs handshake() before
//     any read or write; without, handshake() is not called.
//  2. With() runs an operation on the stream in use (a generic callable:
//     it must compile for both `Next&` and `ssl::stream<Next>&`);
//     next_layer() is the underlying stream either way (timeouts, close).
//
// Thread safety: as `Next`: one strand or thread at a time.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <memory>
#include <optional>
#include <utility>

namespace tessera {

template <class Next>
class MaybeTlsStream {
 public:
  using TlsStream = boost::asio::ssl::stream<Next>;

  // Plain.
  explicit MaybeTlsStream(Next next) : plain_(std::move(next)) {}
  // TLS over `next` with `context` (which must outlive the stream).
  MaybeTlsStream(Next next, boost::asio::ssl::context& context)
      : tls_(std::make_unique<TlsStream>(std::move(next), context)) {}

  bool is_tls() const { return tls_ != nullptr; }
  Next& next_layer() { return tls_ ? tls_->next_layer() : *plain_; }
  const Next& next_layer() const { return tls_ ? tls_->next_layer() : *plain_; }
  // The TLS stream; null when plain.
  TlsStream* tls() { return tls_.get(); }

  template <class Op>
  decltype(auto) With(Op&& op) {
    if (tls_ != nullptr) return std::forward<Op>(op)(*tls_);
    return std::forward<Op>(op)(*plain_);
  }

 private:
  std::optional<Next> plain_;
  std::unique_ptr<TlsStream> tls_;
};

}  // namespace tessera
