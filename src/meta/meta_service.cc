#include "meta/meta_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <set>

#include "cluster/rpc_access.h"
#include "common/thread_name.h"
#include "node/fault_rules.h"
#include "common/check.h"
#include "common/fault_clock.h"
#include "common/limits.h"
#include "meta/meta_group_calls.h"
#include "meta/meta_keys.h"
#include "meta/registry_keys.h"
#include "meta/table_capacity.h"
#include "node/partition_state_machine.h"

namespace tessera::meta {
namespace {

constexpr std::chrono::milliseconds kCreateGroupCallTimeout{1'000};
// A forwarded create_table may itself retry admin.create_group for the
// whole deadline.
constexpr std::chrono::milliseconds kForwardTimeout{limits::kMetaCreateGroupDeadlineMs + 10'000};

void AddCounterCondition(pb::KvBatch& batch, std::string_view key,
                         const std::optional<pb::KvRecord>& current) {
  pb::KvCondition* c = batch.add_conditions();
  c->set_key(std::string(key));
  if (current) c->set_version(current->version());
  else c->set_absent(true);
}

void AddWrite(pb::KvBatch& batch, std::string key, std::string value) {
  pb::KvWrite* w = batch.add_writes();
  w->set_key(std::move(key));
  w->set_value(std::move(value));
}

Result<uint64_t> CounterOr(const std::optional<pb::KvRecord>& record, uint64_t first) {
  if (!record) return first;
  return DecodeCounter(record->value());
}

// Keys the MemDS (partition map and registry) holds.
bool IsMapKey(std::string_view key) {
  return key.starts_with(kTablePrefix) || key.starts_with(kPartitionPrefix) ||
         key == kBlobSlotsKey || IsRegistryKey(key);
}

}  // namespace

Result<std::unique_ptr<MetaService>> MetaService::Start(rpc::RpcContext context,
                                                        MetaServiceOptions options) {
  std::unique_ptr<MetaService> service(new MetaService(context, std::move(options)));
  Status started = service->Init();
  if (!started.ok()) {
    service->Shutdown();
    return started;
  }
  return service;
}

MetaService::MetaService(rpc::RpcContext context, MetaServiceOptions options)
    : context_(context),
      options_(std::move(options)),
      lookups_(context.metrics.GetCounter("tessera_meta_lookups_total",
                                          "meta.lookup requests served from the MemDS")),
      create_tables_(context.metrics.GetCounter("tessera_meta_create_table_requests_total",
                                                "meta.create_table requests handled here")),
      map_version_(context.metrics.GetGauge(
          "tessera_meta_map_version", "applied index of the meta group reflected in the MemDS")) {}

MetaService::~MetaService() { Shutdown(); }

Status MetaService::Init() {
  std::optional<cluster::ProcessEntry> self;
  for (const cluster::ProcessEntry& e : options_.processes) {
    if (e.role == cluster::ProcessRole::kNode) nodes_.push_back(NodeInfo{e.id, e.az});
    if (e.id == options_.self_id) self = e;
  }
  if (!self || self->role != cluster::ProcessRole::kMeta) {
    return Status::InvalidArgument("process " + std::to_string(options_.self_id) +
                                   " is not a meta replica of the layout");
  }
  storage::NodeStoreOptions store_options;
  store_options.path = options_.store_path;
  store_options.group_commit.faults = storage_faults_;
  auto store = storage::NodeStore::Open(store_options);
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();

  rpc::ChannelOptions defaults;
  defaults.identity = rpc::Identity{options_.self_id, "meta", options_.cluster_secret, options_.tls};
  TESSERA_RETURN_IF_ERROR(rpc::ValidateIdentity(defaults.identity));
  pool_ = std::make_unique<rpc::ChannelPool>(context_, defaults);
  pb::Membership membership;
  for (const cluster::ProcessEntry& e : options_.processes) {
    if (e.role == cluster::ProcessRole::kMeta) membership.add_voters(e.id);
    if (e.id == options_.self_id || !cluster::ServesRpc(e.role)) continue;
    TESSERA_RETURN_IF_ERROR(
        pool_->SetPeerAddress(e.id, e.host, static_cast<uint16_t>(e.peer_port)));
  }
  rpc::ChannelPool* pool = pool_.get();  // outlives the sender (stopped first)
  sender_ = std::make_unique<node::BatchingMessageSender>(
      context_.io,
      [pool](uint32_t peer, std::string payload) -> Status {
        auto channel = pool->Get(peer);
        if (!channel.ok()) return channel.status();
        return (*channel)->Send("consensus.batch", std::move(payload));
      },
      &context_.metrics);
  TESSERA_RETURN_IF_ERROR(RebuildMemds());

  node::GroupHostOptions group;
  group.consensus = options_.consensus;
  group.consensus.self = options_.self_id;
  group.consensus.group_id = kMetaGroupId;
  group.consensus.random_seed =
      options_.self_id * 0x9E3779B97F4A7C15ull ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  group.bootstrap_membership = membership;
  group.on_applied = [this](const std::vector<pb::Entry>& entries) { OnApplied(entries); };
  group.on_state_replaced = [this] {
    const Status rebuilt = RebuildMemds();
    TESSERA_CHECK(rebuilt.ok());  // serving a wrong partition map is worse than stopping
  };
  auto host = node::GroupHost::Start(context_.io, store_.get(), sender_.get(), std::move(group));
  if (!host.ok()) return host.status();
  host_ = *host;

  worker_ = StartNamedThread("meta-worker", [this] { WorkerLoop(); });
  registry_service_ = std::make_unique<RegistryService>(options_.self_id, memds_, registry_, host_,
                                                        *pool_, context_.metrics,
                                                        options_.s3_user_buckets_max,
                                                        options_.placement_weights_max_age_ms);
  partition_admin_ = std::make_unique<PartitionAdmin>(*host_, options_.layout);

  rpc::ServerOptions server_options;
  server_options.identity = defaults.identity;
  server_options.access = cluster::MetaAccessPolicy();
  server_options.host = self->host;
  server_options.port = static_cast<uint16_t>(self->peer_port);
  server_ = std::make_unique<rpc::RpcServer>(context_, server_options);
  TESSERA_RETURN_IF_ERROR(RegisterHandlers());
  TESSERA_RETURN_IF_ERROR(registry_service_->Start(*server_));
  TESSERA_RETURN_IF_ERROR(server_->Start());
  spdlog::info("meta.started self={} port={} map_version={} nodes={}", options_.self_id,
               server_->port(), memds_.version(), nodes_.size());
  return Status::Ok();
}

Status MetaService::RegisterHandlers() {
  TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
      "consensus.batch",
      [this](const rpc::PeerInfo&, const pb::Envelope& request, rpc::Responder) {
        HandleConsensus(request);
      }));
  TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
      "meta.lookup", [this](const rpc::PeerInfo&, const pb::Envelope& request,
                            rpc::Responder responder) { HandleLookup(request, responder); }));
  TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
      "meta.lookup_batch",
      [this](const rpc::PeerInfo&, const pb::Envelope& request, rpc::Responder responder) {
        HandleLookupBatch(request, responder);
      }));
  TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
      "meta.tables", [this](const rpc::PeerInfo&, const pb::Envelope&, rpc::Responder responder) {
        responder.Reply(memds_.Tables().SerializeAsString());
      }));
  TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
      "meta.blob_slots", [this](const rpc::PeerInfo&, const pb::Envelope&, rpc::Responder responder) {
        responder.Reply(memds_.BlobSlots().SerializeAsString());
      }));
  TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
      "meta.create_table",
      [this](const rpc::PeerInfo& peer, const pb::Envelope& request, rpc::Responder responder) {
        HandleCreateTable(peer, request, responder);
      }));
  for (const char* method : {"meta.autoadmin_lease", "meta.update_partition", "meta.split_partition",
                             "meta.request_split", "meta.splits", "meta.update_blob_slots", "meta.set_drain", "meta.drains",
                             "meta.add_node", "meta.update_table_capacity", "meta.set_placement_weights"}) {
    TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
        method, [this](const rpc::PeerInfo& peer, const pb::Envelope& request,
                       rpc::Responder responder) {
          Enqueue(request.method().c_str(), responder, [this, peer, request, responder] {
            RunPartitionAdmin(peer, request, responder);
          });
        }));
  }
  TESSERA_RETURN_IF_ERROR(server_->RegisterHandler(
      "admin.faults", [this](const rpc::PeerInfo&, const pb::Envelope& request,
                             rpc::Responder responder) { HandleFaults(request, responder); }));
  return server_->RegisterHandler(
      "admin.status", [this](const rpc::PeerInfo&, const pb::Envelope&,
                             rpc::Responder responder) { HandleStatus(responder); });
}

void MetaService::HandleFaults(const pb::Envelope& request, const rpc::Responder& responder) {
  pb::FaultRules rules;
  if (!rules.ParseFromString(request.payload())) {
    return responder.Fail(Status::InvalidArgument("admin.faults: unparseable FaultRules"));
  }
  const Status applied = node::ApplyFaultRules(rules, context_.faults, *storage_faults_);
  if (!applied.ok()) return responder.Fail(applied);
  std::vector<uint32_t> peers;
  for (const cluster::ProcessEntry& e : options_.processes) peers.push_back(e.id);
  responder.Reply(node::FaultRulesInForce(peers, context_.faults, *storage_faults_).SerializeAsString());
}

void MetaService::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (server_) server_->Stop();  // no handler runs after this
  if (host_) {
    host_->Stop();
    std::promise<void> stopped;  // the strand has run Stop once this runs
    host_->GetStatus([&stopped](node::GroupStatus) { stopped.set_value(); });
    stopped.get_future().wait();
  }
  if (worker_.joinable()) worker_.join();
  if (registry_service_) registry_service_->Stop();  // after the group: no mutation blocks
  if (sender_) sender_->Stop();
  pool_.reset();
  spdlog::info("meta.stopped self={}", options_.self_id);
}

// --- MemDS maintenance (group strand) ---------------------------------------

Status MetaService::RebuildMemds() {
  auto snapshot = store_->OpenSnapshot(kMetaGroupId);
  if (!snapshot.ok()) return snapshot.status();
  std::vector<KeyChange> state;
  for (;;) {
    auto next = (*snapshot)->Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) break;
    if (!IsMapKey((*next)->key)) continue;
    pb::KvRecord record;
    if (!record.ParseFromString((*next)->value)) {
      return Status::Corruption("meta state: bad KvRecord at a map key");
    }
    state.push_back(KeyChange{std::move((*next)->key), std::move(*record.mutable_value())});
  }
  const uint64_t version = (*snapshot)->applied_index();
  TESSERA_RETURN_IF_ERROR(memds_.Reset(state, version));
  TESSERA_RETURN_IF_ERROR(registry_.Reset(state, version));
  map_version_.Set(static_cast<double>(version));
  spdlog::info("meta.memds_rebuilt keys={} map_version={}", state.size(), version);
  return Status::Ok();
}

void MetaService::OnApplied(const std::vector<pb::Entry>& entries) {
  std::set<std::string> touched;
  for (const pb::Entry& e : entries) {
    if (e.type() != pb::ENTRY_COMMAND) continue;
    pb::KvCommand command;
    if (!command.ParseFromString(e.command())) continue;  // applied as a no-op
    for (const pb::KvWrite& w : command.batch().writes()) {
      if (IsMapKey(w.key())) touched.insert(w.key());
    }
  }
  // The state already holds these entries: read back what each key is now
  // (this also skips batches whose conditions failed).
  std::vector<KeyChange> changes;
  for (const std::string& key : touched) {
    auto stored = store_->Get(kMetaGroupId, key);
    if (!stored.ok()) {
      TESSERA_CHECK(stored.status().code() == StatusCode::kNotFound);
      changes.push_back(KeyChange{key, std::nullopt});
      continue;
    }
    pb::KvRecord record;
    TESSERA_CHECK(record.ParseFromString(*stored));
    changes.push_back(KeyChange{key, std::move(*record.mutable_value())});
  }
  const uint64_t version = entries.back().slot();
  const Status updated = memds_.Update(changes, version);
  TESSERA_CHECK(updated.ok());  // our own leader wrote these descriptors
  const Status registry_updated = registry_.Update(changes, version);
  TESSERA_CHECK(registry_updated.ok());
  map_version_.Set(static_cast<double>(memds_.version()));
}

// --- handlers (io threads) ---------------------------------------------------

void MetaService::HandleConsensus(const pb::Envelope& request) {
  pb::ConsensusBatch batch;
  if (!batch.ParseFromString(request.payload())) return;
  for (pb::Message& m : *batch.mutable_messages()) {
    if (m.group_id() != kMetaGroupId || m.to() != options_.self_id) continue;
    host_->Deliver(std::move(m));
  }
}

void MetaService::HandleLookup(const pb::Envelope& request, rpc::Responder responder) {
  pb::LookupRequest lookup;
  if (!lookup.ParseFromString(request.payload())) {
    return responder.Fail(Status::InvalidArgument("meta.lookup: bad LookupRequest"));
  }
  lookups_.Increment();
  auto found = memds_.Lookup(lookup.table(), lookup.key());
  if (!found.ok()) return responder.Fail(found.status());
  responder.Reply(found->SerializeAsString());
}

void MetaService::HandleLookupBatch(const pb::Envelope& request, rpc::Responder responder) {
  pb::LookupBatchRequest batch;
  if (!batch.ParseFromString(request.payload())) {
    return responder.Fail(Status::InvalidArgument("meta.lookup_batch: bad LookupBatchRequest"));
  }
  if (static_cast<size_t>(batch.lookups_size()) > limits::kMetaLookupBatchMax) {
    return responder.Fail(Status::InvalidArgument(
        "meta.lookup_batch: more than " + std::to_string(limits::kMetaLookupBatchMax) + " lookups"));
  }
  lookups_.Increment(static_cast<uint64_t>(batch.lookups_size()));
  pb::LookupBatchResponse response;
  for (const pb::LookupRequest& lookup : batch.lookups()) {
    pb::LookupResult* result = response.add_results();
    auto found = memds_.Lookup(lookup.table(), lookup.key());
    if (!found.ok()) {
      result->set_status_code(static_cast<uint32_t>(found.status().code()));
      result->set_status_message(found.status().message());
      continue;
    }
    response.set_map_version(found->map_version());
    *result->mutable_partition() = std::move(*found->mutable_partition());
  }
  responder.Reply(response.SerializeAsString());
}

void MetaService::HandleStatus(rpc::Responder responder) {
  const uint32_t self = options_.self_id;
  host_->GetStatus([responder, self](node::GroupStatus s) {
    pb::NodeStatus status;
    status.set_node_id(self);
    pb::GroupStatusProto* g = status.add_groups();
    g->set_group_id(kMetaGroupId);
    g->set_role(consensus::RoleName(s.role));
    g->set_leader(s.leader);
    *g->mutable_ballot() = s.ballot;
    g->set_chosen(s.chosen);
    g->set_applied(s.applied);
    g->set_last_slot(s.last_slot);
    g->set_holds_lease(s.holds_lease);
    responder.Reply(status.SerializeAsString());
  });
}

void MetaService::HandleCreateTable(const rpc::PeerInfo& peer, const pb::Envelope& request,
                                    rpc::Responder responder) {
  Enqueue("meta.create_table", responder, [this, peer, payload = request.payload(), responder] {
    RunCreateTable(peer, payload, responder);
  });
}

void MetaService::Enqueue(const char* method, const rpc::Responder& responder, Task task) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_ && tasks_.size() < limits::kMetaAdminQueueMax) {
      tasks_.push_back(std::move(task));
      cv_.notify_all();
      return;
    }
  }
  responder.Fail(Status::Throttled(std::string(method) + " queue full"));
}

namespace {

// Parses `payload` as Request and answers `serve(request)` serialized;
// InvalidArgument for a payload that does not parse.
template <class Request, class Serve>
Result<std::string> Answer(const pb::Envelope& envelope, Serve serve) {
  Request request;
  if (!request.ParseFromString(envelope.payload())) {
    return Status::InvalidArgument(envelope.method() + ": unparseable request");
  }
  auto r = serve(request);
  if (!r.ok()) return r.status();
  return r->SerializeAsString();
}

// Wall time with the process's injected offset (admin.faults clock_offset_ms).
uint64_t UnixMs() { return static_cast<uint64_t>(fault_clock::WallNowMs()); }

}  // namespace

Result<pb::SplitRequestRecord> MetaService::RequestSplit(PartitionAdmin& admin,
                                                         const pb::RequestSplitRequest& request) {
  if (!memds_.Table(request.table())) {
    return Status::InvalidArgument("no table '" + request.table() + "'");
  }
  auto holder = memds_.Lookup(request.table(), request.key());
  if (!holder.ok()) return holder.status();
  return admin.RequestSplit(request, holder->partition());
}

void MetaService::RunPartitionAdmin(const rpc::PeerInfo& peer, const pb::Envelope& request,
                                    rpc::Responder responder) {
  PartitionAdmin& admin = *partition_admin_;
  Result<std::string> answer = Status::InvalidArgument("unknown method " + request.method());
  const std::string& m = request.method();
  if (m == "meta.autoadmin_lease") {
    answer = Answer<pb::AutoadminLeaseRequest>(
        request, [&](const pb::AutoadminLeaseRequest& r) { return admin.Lease(r, UnixMs()); });
  } else if (m == "meta.update_partition") {
    answer = Answer<pb::UpdatePartitionRequest>(
        request, [&](const pb::UpdatePartitionRequest& r) { return admin.UpdatePartition(r); });
  } else if (m == "meta.split_partition") {
    answer = Answer<pb::SplitPartitionRequest>(
        request, [&](const pb::SplitPartitionRequest& r) { return admin.SplitPartition(r); });
  } else if (m == "meta.request_split") {
    answer = Answer<pb::RequestSplitRequest>(request, [&](const pb::RequestSplitRequest& r) {
      return RequestSplit(admin, r);
    });
  } else if (m == "meta.splits") {
    answer = Answer<pb::SplitsRequest>(request, [&](const pb::SplitsRequest&) { return admin.Splits(); });
  } else if (m == "meta.update_blob_slots") {
    answer = Answer<pb::UpdateBlobSlotsRequest>(
        request, [&](const pb::UpdateBlobSlotsRequest& r) { return admin.UpdateBlobSlots(r); });
  } else if (m == "meta.set_drain") {
    answer = Answer<pb::SetDrainRequest>(
        request, [&](const pb::SetDrainRequest& r) { return admin.SetDrain(r); });
  } else if (m == "meta.drains") {
    answer = Answer<pb::DrainsRequest>(request, [&](const pb::DrainsRequest&) { return admin.Drains(); });
  } else if (m == "meta.add_node") {
    answer = Answer<pb::AddNodeRequest>(
        request, [&](const pb::AddNodeRequest& r) { return admin.AddNode(r); });
  } else if (m == "meta.set_placement_weights") {
    answer = Answer<pb::SetPlacementWeightsRequest>(request, [&](const pb::SetPlacementWeightsRequest& r) {
      return admin.SetPlacementWeights(r, UnixMs());
    });
  } else if (m == "meta.update_table_capacity") {
    answer = Answer<pb::UpdateTableCapacityRequest>(
        request, [&](const pb::UpdateTableCapacityRequest& r) { return UpdateTableCapacity(*host_, r); });
  }
  if (answer.ok()) return responder.Reply(std::move(answer).value());
  const Status& s = answer.status();
  if (ShouldForwardToLeader(s, peer, options_.self_id)) {
    return ForwardToLeader(*pool_, s.leader_hint(), request.method(), request.payload(),
                           kCreateGroupCallTimeout, responder);
  }
  responder.Fail(s);
}

// --- create_table (worker thread) --------------------------------------------

void MetaService::WorkerLoop() {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();  // after Shutdown began, each fails fast (group stopped)
  }
}

bool MetaService::SleepUnlessStopping(uint32_t ms) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
}

void MetaService::RunCreateTable(const rpc::PeerInfo& peer, const std::string& payload,
                                 rpc::Responder responder) {
  pb::CreateTableRequest request;
  if (!request.ParseFromString(payload)) {
    return responder.Fail(Status::InvalidArgument("meta.create_table: bad CreateTableRequest"));
  }
  create_tables_.Increment();
  auto created = CreateTable(request);
  if (created.ok()) {
    spdlog::info("meta.table_ready table={} table_id={} partitions={}", request.name(),
                 created->table().table_id(), created->partitions_size());
    return responder.Reply(created->SerializeAsString());
  }
  const Status& s = created.status();
  if (ShouldForwardToLeader(s, peer, options_.self_id)) {
    return ForwardToLeader(*pool_, s.leader_hint(), "meta.create_table", payload, kForwardTimeout,
                           responder);
  }
  spdlog::warn("meta.create_table_failed table={} status=\"{}\"", request.name(), s.ToString());
  responder.Fail(s);
}

Result<pb::CreateTableResponse> MetaService::CreateTable(const pb::CreateTableRequest& request) {
  const std::string& name = request.name();
  TESSERA_RETURN_IF_ERROR(ValidateTableName(name));
  TESSERA_RETURN_IF_ERROR(ValidateTableCapacity(request.capacity()));
  auto points = SplitPointsOf(request);
  if (!points.ok()) return points.status();
  for (int attempt = 0; attempt < limits::kMetaCreateAttemptsMax; ++attempt) {
    auto existing = ReadStrong(TableKey(name));
    if (!existing.ok()) return existing.status();
    if (existing->has_value()) return AnswerExisting(name, *points, request.capacity());
    auto group_counter = ReadStrong(std::string(kNextGroupIdKey));
    if (!group_counter.ok()) return group_counter.status();
    auto table_counter = ReadStrong(std::string(kNextTableIdKey));
    if (!table_counter.ok()) return table_counter.status();
    auto next_group = CounterOr(*group_counter, kFirstPartitionGroupId);
    if (!next_group.ok()) return next_group.status();
    auto next_table = CounterOr(*table_counter, kFirstTableId);
    if (!next_table.ok()) return next_table.status();

    auto built = BuildTable(name, *points, *next_table, *next_group);
    if (!built.ok()) return built.status();
    if (request.capacity().mode() != pb::TableCapacity::CAPACITY_UNSET) {
      *built->mutable_table()->mutable_capacity() = request.capacity();
    }
    pb::KvBatch batch;
    pb::KvCondition* absent = batch.add_conditions();  // condition 0: see below
    absent->set_key(TableKey(name));
    absent->set_absent(true);
    AddCounterCondition(batch, kNextGroupIdKey, *group_counter);
    AddCounterCondition(batch, kNextTableIdKey, *table_counter);
    AddWrite(batch, TableKey(name), built->table().SerializeAsString());
    for (const pb::PartitionDescriptor& p : built->partitions()) {
      AddWrite(batch, PartitionKey(name, p.start_key()), p.SerializeAsString());
    }
    AddWrite(batch, std::string(kNextGroupIdKey),
             EncodeCounter(*next_group + static_cast<uint64_t>(built->partitions_size())));
    AddWrite(batch, std::string(kNextTableIdKey), EncodeCounter(*next_table + 1));

    auto applied = WriteSync(std::move(batch));
    if (!applied.ok() && applied.status().code() != StatusCode::kAborted) return applied.status();
    if (!applied.ok() || !applied->applied()) continue;  // lost a race: read again
    spdlog::info("meta.table_created table={} table_id={} partitions={} first_group_id={}", name,
                 *next_table, built->partitions_size(), *next_group);
    TESSERA_RETURN_IF_ERROR(EnsureGroups(
        {built->partitions().begin(), built->partitions().end()}));
    return built;
  }
  return Status::Unavailable("create_table of '" + name + "' kept losing races; retry");
}

Result<pb::CreateTableResponse> MetaService::AnswerExisting(
    const std::string& name, const std::vector<std::string>& split_points,
    const pb::TableCapacity& capacity) {
  auto table = memds_.Table(name);
  if (!table) return Status::Unavailable("table '" + name + "' not yet in the MemDS; retry");
  const auto& stored = table->first.split_points();
  if (!std::equal(stored.begin(), stored.end(), split_points.begin(), split_points.end())) {
    return Status::Conflict("table '" + name + "' exists with other split points");
  }
  if (capacity.mode() != pb::TableCapacity::CAPACITY_UNSET &&
      !SameCapacity(capacity, table->first.capacity())) {
    return Status::Conflict("table '" + name + "' exists with capacity " +
                            CapacityText(table->first.capacity()) +
                            " (change it with `tessera kv table update`)");
  }
  TESSERA_RETURN_IF_ERROR(EnsureGroups(table->second));
  pb::CreateTableResponse response;
  *response.mutable_table() = table->first;
  for (pb::PartitionDescriptor& p : table->second) *response.add_partitions() = std::move(p);
  return response;
}

Result<pb::CreateTableResponse> MetaService::BuildTable(
    const std::string& name, const std::vector<std::string>& split_points, uint64_t table_id,
    uint64_t first_group_id) {
  pb::CreateTableResponse response;
  pb::TableDescriptor* table = response.mutable_table();
  table->set_name(name);
  table->set_table_id(table_id);
  for (const std::string& p : split_points) table->add_split_points(p);
  std::map<uint32_t, size_t> load = memds_.ReplicasByNode();
  // The layout's nodes and those added since (the storage node map), whose
  // addresses EnsureGroups needs.
  std::vector<NodeInfo> nodes = nodes_;
  const pb::BlobSlotAssignments node_map = memds_.BlobSlots();
  for (const pb::AddedNode& added : node_map.added_nodes()) {
    const pb::NodeSpec& spec = added.spec();
    TESSERA_RETURN_IF_ERROR(
        pool_->SetPeerAddress(added.id(), spec.host(), static_cast<uint16_t>(spec.peer_port())));
    nodes.push_back(NodeInfo{added.id(), spec.az()});
  }
  for (size_t i = 0; i <= split_points.size(); ++i) {
    auto replicas = PlaceReplicas(nodes, options_.azs, load);
    if (!replicas.ok()) return replicas.status();
    pb::PartitionDescriptor* p = response.add_partitions();
    p->set_table(name);
    p->set_start_key(i == 0 ? std::string() : split_points[i - 1]);
    p->set_end_key(i < split_points.size() ? split_points[i] : std::string());
    p->set_group_id(first_group_id + i);
    p->set_epoch(1);
    for (pb::ReplicaPlacement& r : *replicas) *p->add_replicas() = std::move(r);
  }
  return response;
}

Status MetaService::EnsureGroups(const std::vector<pb::PartitionDescriptor>& partitions) {
  struct Pending {
    uint32_t node_id;
    const pb::PartitionDescriptor* partition;
    Status last;
  };
  std::vector<Pending> pending;
  for (const pb::PartitionDescriptor& p : partitions) {
    for (const pb::ReplicaPlacement& r : p.replicas()) pending.push_back({r.node_id(), &p, {}});
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(limits::kMetaCreateGroupDeadlineMs);
  uint32_t backoff_ms = limits::kMetaCreateGroupBackoffInitialMs;
  for (;;) {
    std::vector<std::future<Status>> results;
    for (Pending& item : pending) {
      auto promise = std::make_shared<std::promise<Status>>();
      results.push_back(promise->get_future());
      pb::CreateGroupRequest request;
      *request.mutable_partition() = *item.partition;
      auto channel = pool_->Get(item.node_id);
      Status accepted = channel.ok() ? (*channel)->Call("admin.create_group",
                                                        request.SerializeAsString(),
                                                        kCreateGroupCallTimeout,
                                                        [promise](Result<std::string> r) {
                                                          promise->set_value(r.status());
                                                        })
                                     : channel.status();
      if (!accepted.ok()) promise->set_value(accepted);
    }
    std::vector<Pending> failed;
    for (size_t i = 0; i < pending.size(); ++i) {
      Status s = results[i].get();
      if (!s.ok()) failed.push_back({pending[i].node_id, pending[i].partition, std::move(s)});
    }
    pending = std::move(failed);
    if (pending.empty()) return Status::Ok();
    const Pending& first = pending.front();
    spdlog::warn("meta.create_group_retry pending={} node={} group_id={} status=\"{}\" backoff_ms={}",
                 pending.size(), first.node_id, first.partition->group_id(),
                 first.last.ToString(), backoff_ms);
    if (std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms) > deadline) {
      return Status::Unavailable("admin.create_group not acknowledged by node " +
                                 std::to_string(first.node_id) + " for group " +
                                 std::to_string(first.partition->group_id()) + " (" +
                                 first.last.ToString() +
                                 "); the table is recorded: repeat create_table to finish");
    }
    if (!SleepUnlessStopping(backoff_ms)) return Status::Aborted("meta replica stopping");
    backoff_ms = std::min(backoff_ms * 2, limits::kMetaCreateGroupBackoffMaxMs);
  }
}

Result<std::optional<pb::KvRecord>> MetaService::ReadStrong(const std::string& key) {
  return ReadStrongSync(*host_, key);
}

Result<pb::KvApplyResult> MetaService::WriteSync(pb::KvBatch batch) {
  return meta::WriteSync(*host_, std::move(batch));
}

}  // namespace tessera::meta
