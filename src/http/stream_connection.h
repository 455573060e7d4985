// Internal to StreamServer: one accepted connection (plain or TLS) and the
// Exchanges of its requests. Not for other modules.
//
// Thread safety: a connection lives on its strand; the factories may be
// called from any thread (the returned connection does nothing until
// Start).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <memory>

#include "http/stream_server_core.h"

namespace tessera::http::internal {

std::shared_ptr<ConnectionBase> MakePlainConnection(std::shared_ptr<StreamServerCore> core,
                                                    uint64_t id,
                                                    boost::asio::ip::tcp::socket socket);
// Requires core->ssl_context_.
std::shared_ptr<ConnectionBase> MakeTlsConnection(std::shared_ptr<StreamServerCore> core,
                                                  uint64_t id,
                                                  boost::asio::ip::tcp::socket socket);

}  // namespace tessera::http::internal
