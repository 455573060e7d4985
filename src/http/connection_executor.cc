#include "http/connection_executor.h"

#include <boost/asio/strand.hpp>

namespace tessera::http {

boost::asio::any_io_executor ConnectionExecutor(boost::asio::io_context& io, unsigned io_threads) {
  if (io_threads == 1) return io.get_executor();
  return boost::asio::make_strand(io);
}

}  // namespace tessera::http
