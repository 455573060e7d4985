#include "gac/gac_command.h"

#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <filesystem>
#include <future>
#include <iostream>
#include <thread>

#include "cluster/cluster_pki.h"
#include "cluster/io_threads.h"
#include "cluster/layout.h"
#include "cluster/process_logging.h"
#include "cluster/process_table.h"
#include "common/metrics.h"
#include "gac/gac_service.h"
#include "http/http_server.h"
#include "rpc/fault_injector.h"

namespace tessera::gac {
namespace {

namespace asio = boost::asio;

int Fail(const std::string& what) {
  spdlog::error("gac.start_failed status=\"{}\"", what);
  std::cerr << "tessera gac: " << what << "\n";
  return 2;
}

// Serves until a signal; the service and the HTTP server run on `io`.
int Serve(asio::io_context& io, rpc::RpcContext context, metrics::Registry& registry,
          GacServiceOptions options) {
  const cluster::ProcessEntry self = options.self;
  auto service = GacService::Start(context, std::move(options));
  if (!service.ok()) return Fail(service.status().ToString());
  http::HttpServerOptions http_options;
  http_options.host = self.host;
  http_options.port = static_cast<uint16_t>(self.http_port);
  http::HttpServer http(io, http_options, [&registry](http::Request request, http::Respond respond) {
    if (request.path == "/metrics") {
      http::Response r = http::Response::Text(200, registry.RenderText());
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return respond(std::move(r));
    }
    if (request.path == "/health") return respond(http::Response::Text(200, "ok\n"));
    respond(http::Response::Text(404, "not found\n"));
  });
  if (Status started = http.Start(); !started.ok()) {
    (*service)->Stop();
    return Fail("http: " + started.ToString());
  }
  std::promise<int> signalled;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&signalled](const boost::system::error_code& e, int signal) {
    signalled.set_value(e ? 0 : signal);
  });
  const int signal = signalled.get_future().get();
  spdlog::info("gac.stopping signal={}", signal);
  http.Stop();
  (*service)->Stop();
  return 0;
}

}  // namespace

int RunGacCommand(const GacCommandArgs& args) {
  auto layout = cluster::LoadLayout(args.layout_path);
  if (!layout.ok()) {
    std::cerr << "tessera gac: " << layout.status().ToString() << "\n";
    return 2;
  }
  const cluster::ProcessTable table(*layout);
  const auto self = table.ByName(args.name);
  if (!self || self->role != cluster::ProcessRole::kGac) {
    std::cerr << "tessera gac: '" << args.name << "' is not a gac entry of the layout\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(args.dir + "/logs", ec);
  if (Status logging = cluster::SetUpProcessLogging(args.dir, args.name, "gac"); !logging.ok()) {
    std::cerr << "tessera gac: " << logging.ToString() << "\n";
    return 2;
  }
  auto identity = cluster::LoadIdentity(args.dir, self->name, self->id, "gac");
  if (!identity.ok()) return Fail(identity.status().ToString());
  GacServiceOptions options;
  options.self = *self;
  options.processes = table.all();
  options.identity = *identity;
  options.gac = GacOptionsOf(layout->gac_settings());

  // Destroyed in reverse: io threads joined, io_context, then these two.
  metrics::Registry registry;
  rpc::FaultInjector faults(self->id);
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::vector<std::thread> threads = cluster::StartIoThreads(io, 1);
  const int code = Serve(io, rpc::RpcContext{io, registry, faults}, registry, std::move(options));
  work.reset();
  io.stop();
  for (std::thread& t : threads) t.join();
  spdlog::info("gac.exit code={}", code);
  spdlog::shutdown();
  return code;
}

}  // namespace tessera::gac
