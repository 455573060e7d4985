#include "s3/front/digest_pool.h"

#include <string>

#include "common/check.h"
#include "common/thread_name.h"
#include "s3/auth/md5.h"

namespace tessera::s3::front {

DigestPool::DigestPool(size_t threads) {
  TESSERA_CHECK(threads >= 1 && threads <= kDigestThreadsMax);
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    threads_.push_back(StartNamedThread("digest-" + std::to_string(i), [this] { Run(); }));
  }
}

DigestPool::~DigestPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
  TESSERA_CHECK(queue_.empty());
}

void DigestPool::Post(DigestJob job) {
  TESSERA_CHECK(job.md5 != nullptr && job.prepare && job.then);
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void DigestPool::Run() {
  std::vector<DigestJob> batch;
  batch.reserve(auth::kMd5LanesMax);
  while (true) {
    {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      while (!queue_.empty() && batch.size() < auth::kMd5LanesMax) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    RunBatch(batch);
    batch.clear();
  }
}

void DigestPool::RunBatch(std::vector<DigestJob>& batch) {
  auth::Md5* streams[auth::kMd5LanesMax];
  std::string_view bytes[auth::kMd5LanesMax];
  size_t n = 0;
  for (DigestJob& job : batch) {
    if (std::optional<std::string_view> data = job.prepare(); data && !data->empty()) {
      streams[n] = job.md5;
      bytes[n] = *data;
      ++n;
    }
  }
  auth::Md5UpdateEach({streams, n}, {bytes, n});
  for (DigestJob& job : batch) job.then();
}

}  // namespace tessera::s3::front
