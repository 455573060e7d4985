#include "blob/slot_map_refresher.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/wait_for.h"

namespace tessera::blob {
namespace {

constexpr std::chrono::milliseconds kCallTimeout{2'000};
constexpr std::chrono::milliseconds kWaitMax{3'000};

}  // namespace

SlotMapRefresher::SlotMapRefresher(rpc::ChannelPool& pool, std::vector<uint32_t> meta_ids,
                                   BlobSlotMap base, BlobClient& client,
                                   metrics::Registry& metrics, uint32_t interval_ms)
    : pool_(pool),
      meta_ids_(std::move(meta_ids)),
      base_(std::move(base)),
      client_(client),
      version_gauge_(metrics.GetGauge("tessera_blob_slot_map_version",
                                      "Version of the blob slot assignments in use (0: the layout's map)")),
      errors_(metrics.GetCounter("tessera_blob_slot_map_refresh_errors_total",
                                 "meta.blob_slots polls that failed or were refused")),
      interval_ms_(interval_ms) {}

SlotMapRefresher::~SlotMapRefresher() { Stop(); }

void SlotMapRefresher::Start() {
  worker_.Start("blob-slots", interval_ms_, [this] { (void)RefreshOnce(); });
}

void SlotMapRefresher::Stop() { worker_.Stop(); }

// One metadata replica after another, starting at the next in rotation.
Result<pb::BlobSlotAssignments> SlotMapRefresher::Fetch() {
  Status last = Status::Unavailable("no metadata replica to ask for meta.blob_slots");
  for (size_t tried = 0; tried < meta_ids_.size(); ++tried) {
    const uint32_t meta = meta_ids_[next_meta_++ % meta_ids_.size()];
    auto channel = pool_.Get(meta);
    if (!channel.ok()) {
      last = channel.status();
      continue;
    }
    auto reply = WaitFor<Result<std::string>>(kWaitMax, [&](auto finish) {
      const Status accepted = (*channel)->Call(
          "meta.blob_slots", pb::BlobSlotsRequest().SerializeAsString(), kCallTimeout, finish);
      if (!accepted.ok()) finish(accepted);
    });
    if (!reply) {
      last = Status::Timeout("meta.blob_slots to " + std::to_string(meta) + " did not answer");
      continue;
    }
    if (!reply->ok()) {
      last = reply->status();
      continue;
    }
    pb::BlobSlotAssignments assignments;
    if (!assignments.ParseFromString(**reply)) {
      last = Status::Corruption("unparsable meta.blob_slots answer");
      continue;
    }
    return assignments;
  }
  return last;
}

Result<uint64_t> SlotMapRefresher::RefreshOnce() {
  auto fetched = Fetch();
  if (!fetched.ok()) {
    errors_.Increment();
    return fetched.status();
  }
  const uint64_t installed = client_.slot_map()->version();
  if (fetched->version() <= installed) return installed;
  auto next = base_.WithAssignments(*fetched);
  if (!next.ok()) {
    errors_.Increment();
    spdlog::error("blob.slot_map_refused version={} reason={}", fetched->version(),
                  next.status().ToString());
    return next.status();
  }
  // Addresses first: once installed, the map may send a blob to them.
  for (const pb::AddedNode& added : fetched->added_nodes()) {
    const pb::NodeSpec& spec = added.spec();
    if (Status set = pool_.SetPeerAddress(added.id(), spec.host(), static_cast<uint16_t>(spec.peer_port()));
        !set.ok()) {
      errors_.Increment();
      spdlog::error("blob.slot_map_refused version={} reason={}", fetched->version(), set.ToString());
      return set;
    }
  }
  client_.SetSlotMap(std::move(next).value());
  version_gauge_.Set(static_cast<double>(fetched->version()));
  spdlog::info("blob.slot_map version={} assigned_slots={} added_nodes={}", fetched->version(),
               fetched->slots_size(), fetched->added_nodes_size());
  return fetched->version();
}

}  // namespace tessera::blob
