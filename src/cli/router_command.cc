#include "cli/router_command.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <filesystem>
#include <future>
#include <iostream>
#include <thread>
#include <vector>

#include "cluster/process_logging.h"
#include "cluster/cluster_client.h"
#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "common/metrics.h"
#include "router/router_service.h"
#include "s3/front/s3_service.h"
#include "rpc/fault_injector.h"

namespace tessera::router {
namespace {

namespace asio = boost::asio;
constexpr int kIoThreads = 4;

int Fail(const std::string& what) {
  std::cerr << "tessera router: " << what << "\n";
  spdlog::error("router.start_failed status=\"{}\"", what);
  return 2;
}

int WaitForSignal(asio::io_context& io) {
  std::promise<int> signalled;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&signalled](const boost::system::error_code& ec, int signal) {
    signalled.set_value(ec ? 0 : signal);
  });
  return signalled.get_future().get();
}

}  // namespace

int RunRouterCommand(const RouterCommandArgs& args) {
  auto layout = cluster::LoadLayout(args.layout_path);
  if (!layout.ok()) return Fail(layout.status().ToString());
  const cluster::ProcessTable table(*layout);
  const auto self = table.ByName(args.name);
  if (!self || self->role != cluster::ProcessRole::kRouter) {
    return Fail("'" + args.name + "' is not a router of the layout");
  }
  auto secret = cluster::ReadClusterSecret(args.dir);
  if (!secret.ok()) return Fail(secret.status().ToString());
  auto credentials = LoadCredentials(args.dir + "/credentials");
  if (!credentials.ok()) return Fail(credentials.status().ToString());
  std::error_code ec;
  std::filesystem::create_directories(args.dir + "/logs", ec);
  if (Status logging = cluster::SetUpProcessLogging(args.dir, args.name, "router"); !logging.ok()) {
    return Fail(logging.ToString());
  }

  RouterServiceOptions options;
  options.self = *self;
  options.processes = table.all();
  options.cluster_secret = *secret;
  options.http_host = self->host;
  options.http_port = static_cast<uint16_t>(self->http_port);

  // Destroyed in reverse: io threads joined, io_context, then these two.
  s3::front::S3ServiceOptions s3_options;
  s3_options.self = *self;
  s3_options.processes = table.all();
  s3_options.host = self->host;
  s3_options.http_port = static_cast<uint16_t>(self->s3_port);
  if (self->s3_tls_port != 0) {
    s3_options.https_port = static_cast<uint16_t>(self->s3_tls_port);
    s3_options.tls = http::TlsFiles{args.dir + "/tls/cert.pem", args.dir + "/tls/key.pem"};
  }
  s3_options.front.region = args.region;
  s3_options.front.base_domain = args.base_domain;
  metrics::Registry registry;
  rpc::FaultInjector faults(self->id);
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::vector<std::thread> threads;
  for (int i = 0; i < kIoThreads; ++i) threads.emplace_back([&io] { io.run(); });

  int code = 0;
  {
    RouterService service(rpc::RpcContext{io, registry, faults}, std::move(*credentials), options);
    s3::front::S3Service s3(io, registry, service, s3_options);
    Status started = service.Start();
    if (started.ok()) started = s3.Start();
    if (!started.ok()) {
      code = Fail(started.ToString());
    } else {
      spdlog::info("router.serving name={} http_port={} s3_port={} s3_tls_port={}", args.name,
                   service.http_port(), s3.http_port(), s3.https_port());
      const int signal = WaitForSignal(io);
      spdlog::info("router.stopping signal={}", signal);
    }
    s3.Stop();
    service.Stop();
    work.reset();
    io.stop();  // servers and channels are closed; drop whatever timers remain
    for (std::thread& t : threads) t.join();
  }  // the service's router and caches go after the io threads
  spdlog::info("router.exit code={}", code);
  spdlog::shutdown();
  return code;
}

}  // namespace tessera::router
