#include "meta/meta_command.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <thread>

#include "cluster/cluster_client.h"
#include "cluster/cluster_pki.h"
#include "cluster/io_threads.h"
#include "cluster/process_logging.h"
#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "common/metrics.h"
#include "http/http_server.h"
#include "meta/meta_service.h"
#include "rpc/fault_injector.h"

namespace tessera::meta {
namespace {

namespace asio = boost::asio;

http::Response ServeHttp(const http::Request& request, const metrics::Registry& registry) {
  if (request.path == "/metrics") {
    http::Response r = http::Response::Text(200, registry.RenderText());
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  if (request.path == "/health") return http::Response::Text(200, "ok\n");
  return http::Response::Text(404, "not found\n");
}

// Builds the service options for `self` of `layout`.
Result<MetaServiceOptions> ServiceOptions(const pb::ClusterLayout& layout,
                                          const cluster::ProcessEntry& self,
                                          const MetaCommandArgs& args) {
  auto identity = cluster::LoadIdentity(args.dir, self.name, self.id, "meta");
  if (!identity.ok()) return identity.status();
  MetaServiceOptions options;
  options.self_id = self.id;
  options.store_path = args.dir + "/data/" + args.name + "/rocksdb";
  options.cluster_secret = identity->cluster_secret;
  options.tls = identity->tls;
  options.processes = cluster::ProcessTable(layout).all();
  options.azs.assign(layout.azs().begin(), layout.azs().end());
  options.layout = layout;
  // Within the knob's bounds: LoadLayout checked (cluster/layout_knobs.h).
  if (layout.meta_settings().has_placement_weights_max_age_ms()) {
    options.placement_weights_max_age_ms = layout.meta_settings().placement_weights_max_age_ms();
  }
  if (layout.meta_settings().has_s3_user_buckets_max()) {
    options.s3_user_buckets_max = layout.meta_settings().s3_user_buckets_max();
  }
  return options;
}

// Runs the replica on `io` (already run by threads) until a signal.
int Serve(asio::io_context& io, rpc::RpcContext context, metrics::Registry& registry,
          MetaServiceOptions options, const cluster::ProcessEntry& self) {
  auto service = MetaService::Start(context, std::move(options));
  if (!service.ok()) {
    spdlog::error("meta.start_failed status=\"{}\"", service.status().ToString());
    std::cerr << "tessera meta: " << service.status().ToString() << "\n";
    return 2;
  }
  http::HttpServerOptions http_options;
  http_options.host = self.host;
  http_options.port = static_cast<uint16_t>(self.http_port);
  http::HttpServer http(io, http_options, [&registry](http::Request request, http::Respond respond) {
    respond(ServeHttp(request, registry));
  });
  const Status http_started = http.Start();
  if (!http_started.ok()) {
    spdlog::error("meta.http_failed status=\"{}\"", http_started.ToString());
    std::cerr << "tessera meta: http: " << http_started.ToString() << "\n";
    (*service)->Shutdown();
    return 2;
  }

  std::promise<int> signalled;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&signalled](const boost::system::error_code& ec, int signal) {
    signalled.set_value(ec ? 0 : signal);
  });
  const int signal = signalled.get_future().get();
  spdlog::info("meta.stopping signal={}", signal);
  http.Stop();
  (*service)->Shutdown();
  return 0;
}

}  // namespace

int RunMetaCommand(const MetaCommandArgs& args) {
  auto layout = cluster::LoadLayout(args.layout_path);
  if (!layout.ok()) {
    std::cerr << "tessera meta: " << layout.status().ToString() << "\n";
    return 2;
  }
  const auto self = cluster::ProcessTable(*layout).ByName(args.name);
  if (!self || self->role != cluster::ProcessRole::kMeta) {
    std::cerr << "tessera meta: '" << args.name << "' is not a meta replica of the layout\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(args.dir + "/logs", ec);
  std::filesystem::create_directories(args.dir + "/data/" + args.name, ec);
  auto options = ServiceOptions(*layout, *self, args);
  if (!options.ok()) {
    std::cerr << "tessera meta: " << options.status().ToString() << "\n";
    return 2;
  }
  if (Status logging = cluster::SetUpProcessLogging(args.dir, args.name, "meta"); !logging.ok()) {
    std::cerr << "tessera meta: " << logging.ToString() << "\n";
    return 2;
  }

  // Destroyed in reverse: io threads joined, io_context, then these two.
  metrics::Registry registry;
  rpc::FaultInjector faults(self->id);
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  const unsigned io_threads = cluster::IoThreadsFor(0);
  spdlog::info("meta.io_threads count={}", io_threads);
  std::vector<std::thread> threads = cluster::StartIoThreads(io, io_threads);

  const int code = Serve(io, rpc::RpcContext{io, registry, faults}, registry, std::move(*options), *self);
  work.reset();
  io.stop();  // servers and channels are gone; drop whatever timers remain
  for (std::thread& t : threads) t.join();
  spdlog::info("meta.exit code={}", code);
  spdlog::shutdown();
  return code;
}

}  // namespace tessera::meta
