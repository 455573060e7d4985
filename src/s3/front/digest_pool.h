// DigestPool: threads that digest large request bodies (aws-chunked
// decoding, chunk signatures, MD5, SHA-256, CRCs) so the io threads only
// move bytes. A 256 MiB upload costs ~0.8 s of hashing on this machine
// (MD5 alone runs at ~0.5 GB/s on one stream): on the io thread it stalls
// every other request of that thread; here it runs on another core, in
// parallel with the io thread.
//
// Each pool thread takes every job queued (up to kMd5LanesMax), prepares
// each, then advances all their MD5 streams in one side-by-side pass
// (s3/auth/md5.h, D39): the aws CLI uploads ten parts at once, and their
// ETags cost a fraction of ten separate MD5s.
//
// Contract: each posted job runs once on a pool thread: `prepare`, then the
// MD5 of the bytes it returned, then `then`, all on that thread. Jobs run in
// no particular order relative to each other. Each upload posts one piece at
// a time (its next piece is read only after the previous one was handed
// on), so the queue holds at most one job per upload in progress, bounded by
// the HTTP server's connection limit. The destructor runs the queued jobs to
// the end and joins the threads.
//
// Thread safety: Post from any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

namespace tessera::s3::auth {
class Md5;
}  // namespace tessera::s3::auth

namespace tessera::s3::front {

// Threads of one router's DigestPool at most.
inline constexpr size_t kDigestThreadsMax = 16;

// One piece of one upload's body.
struct DigestJob {
  // Decodes the piece and runs the upload's other digests; returns the
  // bytes to add to *md5 (valid until `then` has run), or nullopt when
  // there are none (an empty piece, or the job failed and `then` says so).
  std::function<std::optional<std::string_view>()> prepare;
  auth::Md5* md5 = nullptr;  // not null; no two queued jobs share one
  // Hands the piece on.
  std::function<void()> then;
};

class DigestPool {
 public:
  // `threads` in 1..kDigestThreadsMax (CHECKed).
  explicit DigestPool(size_t threads);
  ~DigestPool();
  DigestPool(const DigestPool&) = delete;
  DigestPool& operator=(const DigestPool&) = delete;

  void Post(DigestJob job);

 private:
  void Run();
  // Prepares every job, hashes their MD5 streams side by side, then runs
  // each job's `then`.
  static void RunBatch(std::vector<DigestJob>& batch);

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<DigestJob> queue_;  // guarded by mu_
  bool stopping_ = false;        // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace tessera::s3::front
