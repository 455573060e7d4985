// RouterService: one router's parts wired together: the channel pool to
// nodes and meta replicas (identity = the router's process id), the MemDS
// client, route cache and resolver, the KV router, the HTTP/JSON KV API
// on an HttpServer and the native KV API (native_api.h) on its kv_port.
// `tessera router` runs one; tests run one in process.
//
// Lifetime: Start, serve, Stop (from a thread that is not running the
// io_context, while it runs), then stop and join the io threads, then
// destroy the service: callbacks still queued capture its parts.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/process_table.h"
#include "common/metrics.h"
#include "http/http_server.h"
#include "router/http_api.h"
#include "router/kv_router.h"
#include "router/memds_client.h"
#include "router/native_api.h"
#include "router/native_handler.h"
#include "router/route_cache.h"
#include "router/route_resolver.h"
#include "router/token.h"
#include "rpc/channel_pool.h"

namespace tessera::router {

struct RouterServiceOptions {
  cluster::ProcessEntry self;                      // id (peer id), role router
  std::vector<cluster::ProcessEntry> processes;    // nodes and meta replicas to reach
  std::string cluster_secret;
  // This process's certificate and the cluster CA (cluster::LoadIdentity);
  // null: plain TCP (tests of the process alone).
  std::shared_ptr<const rpc::TlsCredentials> tls;
  std::string http_host = "127.0.0.1";
  uint16_t http_port = 0;                          // 0: any free port
  uint16_t native_port = 0;                        // kv_port, on http_host; 0: any free port
  // TLS listeners beside the plain ones (0: any free port; nullopt: off),
  // with the certificate and key of `tls_files`.
  std::optional<uint16_t> http_tls_port;           // the HTTP/JSON KV API (and metrics, health)
  std::optional<uint16_t> native_tls_port;         // the native KV API
  http::TlsFiles tls_files;
  // The revoked-token list the HTTP API checks bearer tokens against
  // (router/token_revocations.h); empty: none.
  std::string revoked_tokens_path;
  KvRouterOptions kv;
  uint32_t memds_timeout_ms = 1'000;               // one meta.lookup attempt
  // How long a cache hit's refresh lookup may wait to share a call with
  // others (MemdsClient); <= MemdsClient::kRefreshLingerMax.
  std::chrono::microseconds memds_refresh_linger{2'000};
  size_t async_lookups_max = 256;                  // <= limits::kRouterAsyncLookupsMax
  unsigned io_threads = 0;  // threads running the io_context (HttpServerOptions); 0: unknown
  // Global admission control (gac/gac_client.h): with GAC instances among
  // `processes` and gac.enabled, KV requests are charged to this router's
  // share of their table's capacity.
  gac::GacOptions gac;
};

class RouterService {
 public:
  RouterService(rpc::RpcContext context, CredentialStore credentials, RouterServiceOptions options);
  ~RouterService();
  RouterService(const RouterService&) = delete;
  RouterService& operator=(const RouterService&) = delete;

  // Validates the options, registers peers and starts the HTTP server and
  // the native KV API. InvalidArgument for bad options, IOError when a
  // port is taken.
  Status Start();
  uint16_t http_port() const;
  uint16_t native_port() const;
  // The TLS listeners' ports; 0 when off.
  uint16_t http_tls_port() const;
  uint16_t native_tls_port() const;
  // Stops both servers and closes every channel. Idempotent.
  void Stop();

  RouteCache& cache() { return cache_; }
  // The channels to nodes and meta replicas, and the KV router (after a
  // successful Start), for the S3 service that shares them.
  rpc::ChannelPool& pool() { return *pool_; }
  KvRouter& kv() { return *kv_; }
  // The GAC client when global admission control is on (after a
  // successful Start), else nullptr.
  gac::GacClient* gac() { return gac_ && gac_->active() ? gac_.get() : nullptr; }
  // The HTTP handler (after a successful Start), for tests that bypass the
  // transport.
  KvHttpApi& api() { return *api_; }

 private:
  Status StartGac();  // after kv_ exists

  rpc::RpcContext context_;
  const CredentialStore credentials_;
  const RouterServiceOptions options_;
  RouteCache cache_;
  std::unique_ptr<rpc::ChannelPool> pool_;
  std::unique_ptr<MemdsClient> memds_;
  std::unique_ptr<RouteResolver> resolver_;
  std::unique_ptr<gac::GacClient> gac_;  // before kv_: the router holds a pointer
  std::unique_ptr<KvRouter> kv_;
  std::unique_ptr<KvHttpApi> api_;
  std::unique_ptr<http::HttpServer> http_;
  std::unique_ptr<http::HttpServer> http_tls_;
  std::unique_ptr<NativeKvHandler> native_handler_;
  std::unique_ptr<NativeKvServer> native_;
  std::unique_ptr<NativeKvServer> native_tls_;
  std::vector<uint32_t> peers_;
};

}  // namespace tessera::router
