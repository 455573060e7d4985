#include "s3/front/digest_pool.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/check.h"

namespace tessera::s3::front {

DigestPool::DigestPool(size_t threads) {
  TESSERA_CHECK(threads >= 1 && threads <= kDigestThreadsMax);
  pool_ = std::make_unique<boost::asio::thread_pool>(threads);
}

DigestPool::~DigestPool() { pool_->join(); }

void DigestPool::Post(std::function<void()> task) { boost::asio::post(*pool_, std::move(task)); }

}  // namespace tessera::s3::front
