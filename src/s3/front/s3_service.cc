#include "s3/front/s3_service.h"

#include "blob/blob_slot_map.h"

namespace tessera::s3::front {

S3Service::S3Service(boost::asio::io_context& io, metrics::Registry& metrics,
                     router::RouterService& router, S3ServiceOptions options)
    : io_(io), metrics_(metrics), router_(router), options_(std::move(options)) {}

S3Service::~S3Service() { Stop(); }

Status S3Service::Start() {
  const Result<uint64_t> request_id_salt = NewRequestIdSalt();
  if (!request_id_salt.ok()) return request_id_salt.status();
  router::RegistryClientOptions registry_options;
  std::vector<blob::NodeRef> nodes;
  for (const cluster::ProcessEntry& p : options_.processes) {
    if (p.role == cluster::ProcessRole::kMeta) registry_options.meta_ids.push_back(p.id);
    // The layout's map from the layout's nodes; added ones come with the storage node map.
    if (p.role == cluster::ProcessRole::kNode && !p.added) nodes.push_back(blob::NodeRef{p.id, p.az});
  }
  if (registry_options.meta_ids.empty() || nodes.empty()) {
    return Status::InvalidArgument("the S3 service needs meta replicas and storage nodes");
  }
  auto slot_map = blob::BlobSlotMap::Build(std::move(nodes));
  if (!slot_map.ok()) return slot_map.status();
  registry_ = std::make_unique<router::RegistryClient>(router_.pool(), metrics_, registry_options);
  blobs_ = std::make_unique<blob::BlobClient>(router_.pool(), *slot_map, options_.self.az, metrics_);
  slot_map_refresher_ = std::make_unique<blob::SlotMapRefresher>(
      router_.pool(), registry_options.meta_ids, std::move(slot_map).value(), *blobs_, metrics_,
      blob::SlotMapRefresher::kIntervalMsDefault);
  slot_map_refresher_->Start();
  index_ = std::make_unique<ObjectIndex>(
      router_.kv(), &metrics_.GetCounter("tessera_s3_list_partition_reads_total",
                                         "s3.list reads sent: one per partition a listing visits",
                                         {}));
  front_ = std::make_unique<S3Front>(*index_, *registry_, *blobs_, metrics_, options_.front,
                                     *request_id_salt);
  front_->set_gac(router_.gac());
  http::StreamServerOptions server_options;
  server_options.host = options_.host;
  server_options.http_port = options_.http_port;
  server_options.https_port = options_.https_port;
  server_options.tls = options_.tls;
  server_options.io_threads = options_.io_threads;
  server_options.on_protocol_error = [front = front_.get()](unsigned status,
                                                            std::string_view reason) {
    return front->RenderProtocolError(status, reason);
  };
  server_ = std::make_unique<http::StreamServer>(
      io_, server_options, [front = front_.get()](std::shared_ptr<http::Exchange> exchange) {
        front->Handle(std::move(exchange));
      });
  return server_->Start();
}

void S3Service::Stop() {
  if (slot_map_refresher_) slot_map_refresher_->Stop();
  if (server_) server_->Stop();
}

uint16_t S3Service::http_port() const { return server_ ? server_->http_port() : 0; }
uint16_t S3Service::https_port() const { return server_ ? server_->https_port() : 0; }

}  // namespace tessera::s3::front
