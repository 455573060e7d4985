#include "router/router_service.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "common/check.h"

namespace tessera::router {

RouterService::RouterService(rpc::RpcContext context, CredentialStore credentials,
                             RouterServiceOptions options)
    : context_(context), credentials_(std::move(credentials)), options_(std::move(options)) {}

RouterService::~RouterService() { Stop(); }

Status RouterService::Start() {
  TESSERA_CHECK(pool_ == nullptr);
  TESSERA_RETURN_IF_ERROR(ValidateKvRouterOptions(options_.kv));
  if (options_.async_lookups_max > limits::kRouterAsyncLookupsMax) {
    return Status::InvalidArgument("async_lookups_max beyond kRouterAsyncLookupsMax");
  }
  if (credentials_.size() == 0) return Status::InvalidArgument("no KV API credentials");
  rpc::ChannelOptions defaults;
  defaults.identity = rpc::Identity{options_.self.id, "router", options_.cluster_secret, options_.tls};
  TESSERA_RETURN_IF_ERROR(rpc::ValidateIdentity(defaults.identity));
  defaults.connect_timeout_ms = 1'000;
  defaults.backoff_initial_ms = 20;
  defaults.backoff_max_ms = 500;
  pool_ = std::make_unique<rpc::ChannelPool>(context_, defaults);
  std::vector<uint32_t> meta_ids;
  for (const cluster::ProcessEntry& p : options_.processes) {
    if (!cluster::ServesRpc(p.role)) continue;
    TESSERA_RETURN_IF_ERROR(pool_->SetPeerAddress(p.id, p.host, static_cast<uint16_t>(p.peer_port)));
    peers_.push_back(p.id);
    if (p.role == cluster::ProcessRole::kMeta) meta_ids.push_back(p.id);
  }
  if (meta_ids.empty()) return Status::InvalidArgument("no metadata replicas to ask");
  if (options_.memds_refresh_linger.count() < 0 ||
      options_.memds_refresh_linger > MemdsClient::kRefreshLingerMax) {
    return Status::InvalidArgument("memds_refresh_linger beyond MemdsClient::kRefreshLingerMax");
  }
  memds_ = std::make_unique<MemdsClient>(context_.io, *pool_, std::move(meta_ids),
                                        options_.memds_timeout_ms, options_.memds_refresh_linger,
                                        context_.metrics);
  resolver_ = std::make_unique<RouteResolver>(cache_, *memds_, context_.metrics,
                                              options_.async_lookups_max);
  kv_ = std::make_unique<KvRouter>(context_.io, *pool_, *resolver_, context_.metrics, options_.kv);
  TESSERA_RETURN_IF_ERROR(StartGac());
  api_ = std::make_unique<KvHttpApi>(
      *kv_, credentials_, context_.metrics, KvHttpApi::NowUnix(),
      options_.revoked_tokens_path.empty() ? nullptr
                                           : std::make_shared<TokenRevocations>(options_.revoked_tokens_path));
  http::HttpServerOptions http_options;
  http_options.host = options_.http_host;
  http_options.port = options_.http_port;
  http_options.body_bytes_max = limits::kRouterBodyBytesMax;
  http_options.io_threads = options_.io_threads;
  // Credentials are checked on the head: no body is read for a request
  // that is refused anyway.
  http_options.head_check = [api = api_.get()](const http::Request& head) { return api->CheckHead(head); };
  const http::Handler handle = [api = api_.get()](http::Request request, http::Respond respond) {
    api->Handle(std::move(request), std::move(respond));
  };
  http_ = std::make_unique<http::HttpServer>(context_.io, http_options, handle);
  TESSERA_RETURN_IF_ERROR(http_->Start());
  if (options_.http_tls_port) {
    http_options.port = *options_.http_tls_port;
    http_options.tls = options_.tls_files;
    http_tls_ = std::make_unique<http::HttpServer>(context_.io, http_options, handle);
    TESSERA_RETURN_IF_ERROR(http_tls_->Start());
  }
  native_handler_ = std::make_unique<NativeKvHandler>(*kv_, *resolver_);
  NativeApiOptions native_options;
  native_options.host = options_.http_host;
  native_options.port = options_.native_port;
  native_ = std::make_unique<NativeKvServer>(context_.io, *native_handler_, credentials_, context_.metrics,
                                             native_options);
  TESSERA_RETURN_IF_ERROR(native_->Start());
  if (options_.native_tls_port) {
    native_options.port = *options_.native_tls_port;
    native_options.tls = options_.tls_files;
    native_tls_ = std::make_unique<NativeKvServer>(context_.io, *native_handler_, credentials_,
                                                   context_.metrics, native_options);
    TESSERA_RETURN_IF_ERROR(native_tls_->Start());
  }
  spdlog::info("router.listening id={} http={}:{} kv={}:{} https={} kv_tls={}", options_.self.id,
               options_.http_host, http_->port(), options_.http_host, native_->port(), http_tls_port(),
               native_tls_port());
  return Status::Ok();
}

uint16_t RouterService::http_tls_port() const { return http_tls_ ? http_tls_->port() : 0; }

uint16_t RouterService::native_tls_port() const { return native_tls_ ? native_tls_->port() : 0; }

uint16_t RouterService::http_port() const { return http_ ? http_->port() : 0; }

uint16_t RouterService::native_port() const { return native_ ? native_->port() : 0; }

Status RouterService::StartGac() {
  if (std::string error = gac::GacOptionsError(options_.gac); !error.empty()) {
    return Status::InvalidArgument("gac options: " + error);
  }
  std::vector<uint32_t> gac_ids;
  uint32_t routers = 0;
  for (const cluster::ProcessEntry& p : options_.processes) {
    if (p.role == cluster::ProcessRole::kRouter) ++routers;
    if (p.role != cluster::ProcessRole::kGac) continue;
    TESSERA_RETURN_IF_ERROR(pool_->SetPeerAddress(p.id, p.host, static_cast<uint16_t>(p.peer_port)));
    peers_.push_back(p.id);
    gac_ids.push_back(p.id);
  }
  gac_ = std::make_unique<gac::GacClient>(options_.gac, options_.self.id, std::max(1u, routers),
                                          std::move(gac_ids), *pool_, context_.metrics);
  if (!gac_->active()) return Status::Ok();
  kv_->set_gac(gac_.get());
  gac_->Start();
  return Status::Ok();
}

void RouterService::Stop() {
  if (gac_) gac_->Stop();
  if (http_) http_->Stop();
  if (http_tls_) http_tls_->Stop();
  if (native_) native_->Stop();
  if (native_tls_) native_tls_->Stop();
  if (pool_) {
    for (const uint32_t peer : peers_) pool_->RemovePeer(peer);
  }
  peers_.clear();
}

}  // namespace tessera::router
