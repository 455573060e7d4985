// The executor a server runs one connection's handlers on.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>

namespace tessera::http {

// A connection's handlers must run one at a time. With several threads
// running `io` that takes a strand per connection. When exactly one thread
// runs it (`io_threads` == 1) its handlers already run one at a time, so the
// io_context's own executor is returned: a strand would only add a mutex and
// shared-pointer traffic to every operation (8% of the router's CPU per KV
// write, D36). 0 means the count is unknown: a strand.
// Other components enter a connection with post, never dispatch: on the
// io_context's executor a dispatch from any handler of the io thread would
// run inline, inside the caller (a strand would have queued it).
boost::asio::any_io_executor ConnectionExecutor(boost::asio::io_context& io, unsigned io_threads);

}  // namespace tessera::http
