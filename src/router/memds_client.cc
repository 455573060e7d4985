#include "router/memds_client.h"

#include <chrono>

#include "common/check.h"

namespace tessera::router {

struct MemdsClient::Attempt {
  std::string request;  // serialized LookupRequest
  PartitionCallback done;
  size_t first = 0;
  size_t tried = 0;
  Status last;
};

MemdsClient::MemdsClient(rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids, uint32_t timeout_ms)
    : pool_(pool), meta_ids_(std::move(meta_ids)), timeout_ms_(timeout_ms) {
  TESSERA_CHECK(!meta_ids_.empty());
  TESSERA_CHECK(timeout_ms_ >= 1 && timeout_ms_ <= limits::kRpcCallTimeoutMsMax);
}

void MemdsClient::Lookup(const std::string& table, const std::string& key, PartitionCallback done) {
  pb::LookupRequest request;
  request.set_table(table);
  request.set_key(key);
  auto attempt = std::make_shared<Attempt>();
  attempt->request = request.SerializeAsString();
  attempt->done = std::move(done);
  attempt->first = next_.fetch_add(1) % meta_ids_.size();
  TryNext(std::move(attempt));
}

void MemdsClient::TryNext(std::shared_ptr<Attempt> attempt) {
  // Bounded by meta_ids_.size(): each pass tries one more replica.
  while (attempt->tried < meta_ids_.size()) {
    const uint32_t meta_id = meta_ids_[(attempt->first + attempt->tried) % meta_ids_.size()];
    ++attempt->tried;
    Result<std::shared_ptr<rpc::Channel>> channel = pool_.Get(meta_id);
    if (!channel.ok()) {
      attempt->last = channel.status();
      continue;
    }
    const Status accepted = (*channel)->Call(
        "meta.lookup", attempt->request, std::chrono::milliseconds(timeout_ms_),
        [this, attempt](Result<std::string> response) {
          if (response.ok()) {
            pb::LookupResponse parsed;
            if (!parsed.ParseFromString(*response)) {
              attempt->done(Status::Corruption("unparsable meta.lookup response"));
            } else {
              attempt->done(std::move(*parsed.mutable_partition()));
            }
            return;
          }
          const StatusCode code = response.status().code();
          if (code == StatusCode::kNotFound || code == StatusCode::kInvalidArgument) {
            attempt->done(response.status());
            return;
          }
          attempt->last = response.status();
          TryNext(attempt);
        });
    if (accepted.ok()) return;
    attempt->last = accepted;
  }
  attempt->done(Status::Unavailable("metadata service unavailable: " + attempt->last.ToString()));
}

}  // namespace tessera::router
