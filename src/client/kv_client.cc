#include "tessera/kv_client.h"

#include "client/kv_session.h"
#include "common/limits.h"

namespace tessera {

class KvClient::Impl : public kvapi::KvSession {
 public:
  using KvSession::KvSession;
};

KvResult<std::unique_ptr<KvClient>> KvClient::Connect(const std::string& host, uint16_t port,
                                                      const std::string& access_key,
                                                      const std::string& secret_key,
                                                      KvClientOptions options) {
  return Connect(std::vector<KvEndpoint>{{host, port}}, access_key, secret_key, options);
}

KvResult<std::unique_ptr<KvClient>> KvClient::Connect(std::vector<KvEndpoint> routers,
                                                      const std::string& access_key,
                                                      const std::string& secret_key,
                                                      KvClientOptions options) {
  const auto in_range = [](uint32_t ms) { return ms >= 1 && ms <= limits::kNativeClientTimeoutMsMax; };
  if (!in_range(options.connect_timeout_ms) || !in_range(options.request_timeout_ms) ||
      options.inflight_max < 1 || options.inflight_max > limits::kNativeInflightRequestsMax) {
    return KvStatus(KvCode::kInvalidArgument, "KvClientOptions out of range");
  }
  if (routers.empty() || routers.size() > limits::kNativeClientEndpointsMax) {
    return KvStatus(KvCode::kInvalidArgument, "a KvClient takes 1 to " +
                                                  std::to_string(limits::kNativeClientEndpointsMax) +
                                                  " routers");
  }
  auto impl = std::make_shared<Impl>(std::move(routers), access_key, secret_key, options);
  KvStatus connected = impl->Open();
  if (!connected.ok()) return connected;
  return std::unique_ptr<KvClient>(new KvClient(std::move(impl)));
}

KvClient::KvClient(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

KvClient::~KvClient() = default;

bool KvClient::connected() const { return impl_->connected(); }

uint64_t KvClient::reconnects() const { return impl_->reconnects(); }

void KvClient::Submit(KvRequest request, Callback done) { impl_->Submit(std::move(request), std::move(done)); }

std::future<KvResult<KvReply>> KvClient::Submit(KvRequest request) {
  auto promise = std::make_shared<std::promise<KvResult<KvReply>>>();
  std::future<KvResult<KvReply>> future = promise->get_future();
  impl_->Submit(std::move(request), [promise](KvResult<KvReply> reply) { promise->set_value(std::move(reply)); });
  return future;
}

KvResult<std::optional<KvValue>> KvClient::Get(const std::string& table, const std::string& key,
                                               KvConsistency consistency) {
  KvRequest r;
  r.op = KvRequest::Op::kGet;
  r.table = table;
  r.key = key;
  r.consistency = consistency;
  KvResult<KvReply> reply = Submit(std::move(r)).get();
  if (!reply.ok()) return reply.status();
  return std::move(reply->value);
}

KvResult<uint64_t> KvClient::Put(const std::string& table, const std::string& key, const std::string& value) {
  KvRequest r;
  r.op = KvRequest::Op::kPut;
  r.table = table;
  r.key = key;
  r.value = value;
  KvResult<KvReply> reply = Submit(std::move(r)).get();
  if (!reply.ok()) return reply.status();
  return reply->version;
}

KvResult<uint64_t> KvClient::PutIf(const std::string& table, const std::string& key, const std::string& value,
                                   KvCondition::Kind kind, uint64_t expected_version) {
  KvRequest r;
  r.op = KvRequest::Op::kPut;
  r.table = table;
  r.key = key;
  r.value = value;
  r.condition = KvCondition{key, kind, expected_version};
  KvResult<KvReply> reply = Submit(std::move(r)).get();
  if (!reply.ok()) return reply.status();
  return reply->version;
}

KvResult<uint64_t> KvClient::Delete(const std::string& table, const std::string& key,
                                    std::optional<KvCondition> condition) {
  KvRequest r;
  r.op = KvRequest::Op::kDelete;
  r.table = table;
  r.key = key;
  r.condition = std::move(condition);
  KvResult<KvReply> reply = Submit(std::move(r)).get();
  if (!reply.ok()) return reply.status();
  return reply->version;
}

KvResult<KvScanPage> KvClient::Scan(const std::string& table, const std::string& start_key,
                                    const std::string& end_key, uint32_t limit, KvConsistency consistency) {
  KvRequest r;
  r.op = KvRequest::Op::kScan;
  r.table = table;
  r.key = start_key;
  r.end_key = end_key;
  r.limit = limit;
  r.consistency = consistency;
  KvResult<KvReply> reply = Submit(std::move(r)).get();
  if (!reply.ok()) return reply.status();
  return std::move(reply->page);
}

KvResult<uint64_t> KvClient::Batch(const std::string& table, const KvBatch& batch) {
  KvRequest r;
  r.op = KvRequest::Op::kBatch;
  r.table = table;
  r.batch = batch;
  KvResult<KvReply> reply = Submit(std::move(r)).get();
  if (!reply.ok()) return reply.status();
  return reply->version;
}

}  // namespace tessera
