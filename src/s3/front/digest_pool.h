// DigestPool: threads that digest large request bodies (aws-chunked
// decoding, chunk signatures, MD5, SHA-256, CRCs) so the io threads only
// move bytes. A 256 MiB upload costs ~0.5 s of hashing (MD5 alone runs at
// ~0.9 GB/s): on the io thread it stalls every other request of that
// thread; here it runs on another core, in parallel with the io thread.
//
// Contract: Post runs `task` once on a pool thread, in no particular order
// relative to other tasks. Each upload posts one piece at a time (its next
// piece is read only after the previous one was handed on), so the queue
// holds at most one task per upload in progress, bounded by the HTTP
// server's connection limit. The destructor runs the queued tasks to the
// end and joins the threads.
//
// Thread safety: Post from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace boost::asio {
class thread_pool;
}  // namespace boost::asio

namespace tessera::s3::front {

// Threads of one router's DigestPool at most.
inline constexpr size_t kDigestThreadsMax = 16;

class DigestPool {
 public:
  // `threads` in 1..kDigestThreadsMax (CHECKed).
  explicit DigestPool(size_t threads);
  ~DigestPool();
  DigestPool(const DigestPool&) = delete;
  DigestPool& operator=(const DigestPool&) = delete;

  void Post(std::function<void()> task);

 private:
  std::unique_ptr<boost::asio::thread_pool> pool_;
};

}  // namespace tessera::s3::front
