#include "cli/router_command.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <algorithm>
#include <filesystem>
#include <future>
#include <iostream>
#include <thread>
#include <vector>

#include "cluster/added_nodes.h"
#include "cluster/process_logging.h"
#include "cluster/cluster_client.h"
#include "cluster/cluster_pki.h"
#include "cluster/io_threads.h"
#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "common/limits.h"
#include "common/metrics.h"
#include "knobs/knobs.h"
#include "router/router_service.h"
#include "s3/front/s3_service.h"
#include "rpc/fault_injector.h"

namespace tessera::router {
namespace {

namespace asio = boost::asio;

int Fail(const std::string& what) {
  std::cerr << "tessera router: " << what << "\n";
  spdlog::error("router.start_failed status=\"{}\"", what);
  return 2;
}

// S3 admission budgets: a flag (>= 0) wins over the layout's
// router_settings, which wins over the built-in default.
Status AdmissionOptions(const RouterCommandArgs& args, const pb::RouterSettings& settings,
                        admission::S3AdmissionOptions& out) {
  auto pick = [](double flag, bool in_layout, double layout, double& field) {
    if (flag >= 0) field = flag;
    else if (in_layout) field = layout;
  };
  pick(args.s3_bucket_rate, settings.has_s3_bucket_rate(), settings.s3_bucket_rate(),
       out.bucket_rate_per_s);
  pick(args.s3_bucket_burst, settings.has_s3_bucket_burst(), settings.s3_bucket_burst(),
       out.bucket_burst);
  pick(args.s3_user_rate, settings.has_s3_user_rate(), settings.s3_user_rate(),
       out.user_rate_per_s);
  pick(args.s3_user_burst, settings.has_s3_user_burst(), settings.s3_user_burst(),
       out.user_burst);
  return admission::ValidateS3AdmissionOptions(out);
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

// <bucket>.s3.localhost is virtual-hosted style (clients resolve *.localhost
// to loopback or are told to); every other Host is path style.
std::string DefaultS3BaseDomain(const pb::RouterSettings& settings) {
  return settings.s3_base_domain().empty() ? std::string(knobs::kRouterS3BaseDomain.default_value)
                                          : settings.s3_base_domain();
}

int RunRouterCommand(const RouterCommandArgs& args) {
  auto layout = cluster::LoadLayout(args.layout_path);
  if (!layout.ok()) return Fail(layout.status().ToString());
  auto loaded = cluster::TableWithAddedNodes(*layout, args.dir);
  if (!loaded.ok()) return Fail(loaded.status().ToString());
  const cluster::ProcessTable& table = *loaded;
  const auto self = table.ByName(args.name);
  if (!self || self->role != cluster::ProcessRole::kRouter) {
    return Fail("'" + args.name + "' is not a router of the layout");
  }
  auto identity = cluster::LoadIdentity(args.dir, self->name, self->id, "router");
  if (!identity.ok()) return Fail(identity.status().ToString());
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
  options.cluster_secret = identity->cluster_secret;
  options.tls = identity->tls;
  options.http_host = self->host;
  options.http_port = static_cast<uint16_t>(self->http_port);
  options.native_port = static_cast<uint16_t>(self->peer_port);  // the layout's kv_port
  if (self->http_tls_port != 0) options.http_tls_port = static_cast<uint16_t>(self->http_tls_port);
  if (self->kv_tls_port != 0) options.native_tls_port = static_cast<uint16_t>(self->kv_tls_port);
  options.tls_files = http::TlsFiles{cluster::HttpsCertPath(args.dir), cluster::HttpsKeyPath(args.dir)};
  options.revoked_tokens_path = args.dir + "/revoked_tokens";
  options.gac = gac::GacOptionsOf(layout->gac_settings());

  // Destroyed in reverse: io threads joined, io_context, then these two.
  s3::front::S3ServiceOptions s3_options;
  s3_options.self = *self;
  s3_options.processes = table.all();
  s3_options.host = self->host;
  s3_options.http_port = static_cast<uint16_t>(self->s3_port);
  if (self->s3_tls_port != 0) {
    s3_options.https_port = static_cast<uint16_t>(self->s3_tls_port);
    s3_options.tls = http::TlsFiles{cluster::HttpsCertPath(args.dir), cluster::HttpsKeyPath(args.dir)};
  }
  const pb::RouterSettings& settings = layout->router_settings();
  s3_options.front.region = !args.region.empty()              ? args.region
                            : !settings.s3_region().empty() ? settings.s3_region()
                                                            : std::string(knobs::kRouterS3Region.default_value);
  s3_options.front.base_domain =
      !args.base_domain.empty() ? args.base_domain : DefaultS3BaseDomain(settings);
  if (Status admission = AdmissionOptions(args, settings, s3_options.front.admission);
      !admission.ok()) {
    return Fail(admission.ToString());
  }
  spdlog::info("router.s3_settings region={} base_domain={} bucket_rate={} bucket_burst={} "
               "user_rate={} user_burst={}",
               s3_options.front.region, s3_options.front.base_domain,
               s3_options.front.admission.bucket_rate_per_s,
               s3_options.front.admission.bucket_burst, s3_options.front.admission.user_rate_per_s,
               s3_options.front.admission.user_burst);
  if (settings.s3_min_part_bytes() != 0) {
    s3_options.front.min_part_bytes = settings.s3_min_part_bytes();
  }
  metrics::Registry registry;
  rpc::FaultInjector faults(self->id);
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  const unsigned io_threads = cluster::IoThreadsFor(settings.io_threads());
  spdlog::info("router.io_threads count={}", io_threads);
  options.io_threads = io_threads;
  s3_options.io_threads = io_threads;
  std::vector<std::thread> threads = cluster::StartIoThreads(io, io_threads);

  int code = 0;
  {
    RouterService service(rpc::RpcContext{io, registry, faults}, std::move(*credentials), options);
    s3::front::S3Service s3(io, registry, service, s3_options);
    Status started = service.Start();
    if (started.ok()) started = s3.Start();
    if (!started.ok()) {
      code = Fail(started.ToString());
    } else {
      spdlog::info("router.serving name={} http_port={} kv_port={} s3_port={} s3_tls_port={}", args.name,
                   service.http_port(), service.native_port(), s3.http_port(), s3.https_port());
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
