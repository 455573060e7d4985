// S3Service: the S3 endpoint of a router process, wired onto a running
// RouterService (its node channels and KvRouter): the registry client (meta
// replicas), the blob client (slot map built from the layout's nodes), the
// ObjectIndex, the S3Front, and the streaming HTTP/HTTPS server.
//
// Lifetime as RouterService: Start, serve, Stop (from a thread that is not
// running the io_context, while it runs), join the io threads, destroy.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blob/blob_client.h"
#include "blob/slot_map_refresher.h"
#include "cluster/process_table.h"
#include "http/stream_server.h"
#include "router/registry_client.h"
#include "router/router_service.h"
#include "s3/front/object_index.h"
#include "s3/front/s3_front.h"

namespace tessera::s3::front {

struct S3ServiceOptions {
  cluster::ProcessEntry self;                    // the router (az, host)
  std::vector<cluster::ProcessEntry> processes;  // nodes and meta replicas
  std::string host = "127.0.0.1";
  std::optional<uint16_t> http_port = 0;         // nullopt: no plain listener
  std::optional<uint16_t> https_port;            // nullopt: no TLS listener
  http::TlsFiles tls;
  S3FrontOptions front;
  unsigned io_threads = 0;  // threads running the io_context (StreamServerOptions); 0: unknown
};

class S3Service {
 public:
  S3Service(boost::asio::io_context& io, metrics::Registry& metrics,
            router::RouterService& router, S3ServiceOptions options);
  ~S3Service();

  Status Start();
  void Stop();
  uint16_t http_port() const;
  uint16_t https_port() const;
  S3Front& front() { return *front_; }

 private:
  boost::asio::io_context& io_;
  metrics::Registry& metrics_;
  router::RouterService& router_;
  const S3ServiceOptions options_;
  std::unique_ptr<router::RegistryClient> registry_;
  std::unique_ptr<blob::BlobClient> blobs_;
  std::unique_ptr<blob::SlotMapRefresher> slot_map_refresher_;  // after blobs_: stopped first
  std::unique_ptr<ObjectIndex> index_;
  std::unique_ptr<S3Front> front_;
  std::unique_ptr<http::StreamServer> server_;
};

}  // namespace tessera::s3::front
