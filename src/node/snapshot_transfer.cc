#include "node/snapshot_transfer.h"

namespace tessera::node {
namespace {

constexpr std::string_view kTransfers = "tessera_snapshot_transfers_total";
constexpr std::string_view kTransfersHelp =
    "Outbound streamed snapshot transfers, by outcome (completed: every chunk staged on the "
    "receiver)";
constexpr std::string_view kInstalls = "tessera_snapshot_installs_total";
constexpr std::string_view kInstallsHelp =
    "Streamed snapshot installs on this node, by outcome (resumed: finished at store open after "
    "a crash)";

}  // namespace

SnapshotCounters::SnapshotCounters(metrics::Registry& registry)
    : chunks_sent(registry.GetCounter("tessera_snapshot_chunks_sent_total",
                                      "Snapshot chunks sent, retransmissions included")),
      bytes_sent(registry.GetCounter("tessera_snapshot_bytes_sent_total",
                                     "Key and value bytes of the snapshot chunks sent")),
      chunks_received(registry.GetCounter("tessera_snapshot_chunks_received_total",
                                          "Snapshot chunks durably staged")),
      bytes_received(registry.GetCounter("tessera_snapshot_bytes_received_total",
                                         "Key and value bytes of the snapshot chunks staged")),
      transfers_completed(registry.GetCounter(kTransfers, kTransfersHelp, {{"outcome", "completed"}})),
      transfers_abandoned(registry.GetCounter(kTransfers, kTransfersHelp, {{"outcome", "abandoned"}})),
      installs_done(registry.GetCounter(kInstalls, kInstallsHelp, {{"outcome", "installed"}})),
      installs_refused(registry.GetCounter(kInstalls, kInstallsHelp, {{"outcome", "refused"}})),
      installs_resumed(registry.GetCounter(kInstalls, kInstallsHelp, {{"outcome", "resumed"}})) {}

}  // namespace tessera::node
