#include "gac/gac_service.h"

#include <spdlog/spdlog.h>

#include <future>

#include "admission/capacity_units.h"
#include "cluster/rpc_access.h"
#include "common/limits.h"
#include "tessera/cluster_rpc.pb.h"
#include "tessera/gac.pb.h"
#include "tessera/s3_registry.pb.h"

namespace tessera::gac {
namespace {

constexpr std::chrono::milliseconds kPollTimeout{2'000};

}  // namespace

GacService::GacService(rpc::RpcContext context, GacServiceOptions options)
    : context_(context),
      options_(std::move(options)),
      reports_(context.metrics.GetCounter("tessera_gac_reports_total", "Router reports answered")),
      poll_failures_(context.metrics.GetCounter("tessera_gac_table_poll_failures_total",
                                                "meta.tables polls that failed")),
      allocator_(options_.gac) {}

Result<std::unique_ptr<GacService>> GacService::Start(rpc::RpcContext context, GacServiceOptions options) {
  if (std::string error = GacOptionsError(options.gac); !error.empty()) {
    return Status::InvalidArgument("gac options: " + error);
  }
  std::unique_ptr<GacService> service(new GacService(context, std::move(options)));
  TESSERA_RETURN_IF_ERROR(service->Init());
  return service;
}

Status GacService::Init() {
  TESSERA_RETURN_IF_ERROR(rpc::ValidateIdentity(options_.identity));
  rpc::ChannelOptions defaults;
  defaults.identity = options_.identity;
  defaults.connect_timeout_ms = 1'000;
  pool_ = std::make_unique<rpc::ChannelPool>(context_, defaults);
  for (const cluster::ProcessEntry& p : options_.processes) {
    if (p.role != cluster::ProcessRole::kMeta) continue;
    TESSERA_RETURN_IF_ERROR(pool_->SetPeerAddress(p.id, p.host, static_cast<uint16_t>(p.peer_port)));
    meta_ids_.push_back(p.id);
  }
  if (meta_ids_.empty()) return Status::InvalidArgument("no metadata replicas to ask");
  rpc::ServerOptions server_options;
  server_options.identity = options_.identity;
  server_options.access = cluster::GacAccessPolicy();
  server_options.host = options_.self.host;
  server_options.port = static_cast<uint16_t>(options_.self.peer_port);
  server_ = std::make_unique<rpc::RpcServer>(context_, server_options);
  TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
      "gac.report", [this](const rpc::PeerInfo&, pb::Envelope& request, rpc::Responder responder) {
        HandleReport(request, std::move(responder));
      }));
  TESSERA_RETURN_IF_ERROR(server_->Start());
  PollTables();  // answer reports as soon as meta does
  poller_.Start("gac-tables", options_.gac.interval_ms, [this] { PollTables(); });
  spdlog::info("gac.started id={} port={} interval_ms={}", options_.self.id, server_->port(),
               options_.gac.interval_ms);
  return Status::Ok();
}

void GacService::Stop() {
  poller_.Stop();
  if (server_) server_->Stop();
}

void GacService::HandleReport(pb::Envelope& request, rpc::Responder responder) {
  pb::GacReportRequest report;
  if (!report.ParseFromString(request.payload())) {
    return responder.Fail(Status::InvalidArgument("unparsable gac.report request"));
  }
  if (report.router_id() == 0) return responder.Fail(Status::InvalidArgument("gac.report without a router id"));
  if (static_cast<size_t>(report.tables_size()) > limits::kGacTablesPerReportMax) {
    return responder.Fail(Status::InvalidArgument(
        "gac.report of more than " + std::to_string(limits::kGacTablesPerReportMax) + " tables"));
  }
  pb::GacReportResponse response;
  {
    std::lock_guard lock(mu_);
    if (!allocator_.has_tables()) {
      return responder.Fail(Status::Unavailable("gac has not read the tables' capacities yet"));
    }
    response = allocator_.Report(report, Clock::now());
  }
  reports_.Increment();
  responder.Reply(response.SerializeAsString());
}

Result<std::string> GacService::CallMeta(uint32_t meta, const std::string& method,
                                         const std::string& payload) {
  auto channel = pool_->Get(meta);
  if (!channel.ok()) return channel.status();
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  auto answer = promise->get_future();
  const Status accepted = (*channel)->Call(method, payload, kPollTimeout, [promise](Result<std::string> r) {
    promise->set_value(std::move(r));
  });
  if (!accepted.ok()) return accepted;
  // The promise outlives a late answer (shared); this thread waits bounded.
  if (answer.wait_for(kPollTimeout + std::chrono::seconds(1)) != std::future_status::ready) {
    return Status::Timeout(method + " did not answer");
  }
  return answer.get();
}

// The tables' capacities and the S3 buckets' (as tables named
// BucketGacName(name), a name space of their own), from one meta replica.
// A poll that gets only one of them changes nothing.
void GacService::PollTables() {
  const uint32_t meta = meta_ids_[next_meta_++ % meta_ids_.size()];
  Result<std::string> raw = CallMeta(meta, "meta.tables", pb::TablesRequest().SerializeAsString());
  pb::TablesResponse tables;
  if (!raw.ok() || !tables.ParseFromString(*raw)) {
    poll_failures_.Increment();
    return;
  }
  Result<std::string> raw_buckets =
      CallMeta(meta, "meta.list_buckets", pb::ListBucketsRequest().SerializeAsString());
  pb::ListBucketsResponse buckets;
  if (!raw_buckets.ok() || !buckets.ParseFromString(*raw_buckets)) {
    poll_failures_.Increment();
    return;
  }
  for (const pb::BucketDescriptor& b : buckets.buckets()) {
    if (b.capacity().mode() == pb::TableCapacity::CAPACITY_UNSET) continue;
    pb::TableDescriptor* t = tables.add_tables();
    t->set_name(admission::BucketGacName(b.name()));
    *t->mutable_capacity() = b.capacity();
  }
  std::lock_guard lock(mu_);
  allocator_.SetTables(tables);
  UpdateGauges();
}

void GacService::UpdateGauges() {
  metrics::Registry& m = context_.metrics;
  for (const GacAllocator::TableView& v : allocator_.View(Clock::now())) {
    for (const char* kind : {"read", "write"}) {
      const bool read = kind[0] == 'r';
      const metrics::Labels labels = {{"table", v.table}, {"kind", kind}};
      m.GetGauge("tessera_gac_table_units_per_s", "A table's consumption over its routers, units/s", labels)
          .Set(read ? v.read_units_per_s : v.write_units_per_s);
      m.GetGauge("tessera_gac_table_capacity_units_per_s", "A table's capacity as the GAC splits it", labels)
          .Set(read ? v.read_capacity : v.write_capacity);
      for (const auto& [router, grant] : v.grants) {
        m.GetGauge("tessera_gac_granted_units_per_s", "A router's share of a table's capacity",
                   {{"table", v.table}, {"kind", kind}, {"router", std::to_string(router)}})
            .Set(read ? grant.first : grant.second);
      }
    }
  }
}

}  // namespace tessera::gac
