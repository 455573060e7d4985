#include "cluster/rpc_access.h"

namespace tessera::cluster {
namespace {

constexpr std::string_view kNode = "node";
constexpr std::string_view kMeta = "meta";
constexpr std::string_view kRouter = "router";
constexpr std::string_view kAutoadmin = "autoadmin";
constexpr std::string_view kGac = "gac";
constexpr std::string_view kCli = kCliRole;

}  // namespace

std::shared_ptr<const rpc::AccessPolicy> NodeAccessPolicy() {
  static const auto policy = [] {
    auto p = std::make_shared<rpc::AccessPolicy>();
    p->Allow("consensus.batch", {kNode});
    p->Allow("node.ping", {kNode});  // PeerProber: peers' timeouts (node/peer_prober.h)
    for (std::string_view m : {"kv.get", "kv.scan", "kv.write"}) p->Allow(m, {kRouter, kCli});
    // Routers store and read blobs; nodes repair and collect them; the
    // operator checks them (`tessera s3 check`).
    for (std::string_view m : {"blob.put", "blob.read", "blob.delete", "blob.stat", "blob.list"}) {
      p->Allow(m, {kRouter, kNode, kCli});
    }
    for (std::string_view m : {"s3.get", "s3.list", "s3.usage"}) p->Allow(m, {kRouter, kCli});
    for (std::string_view m : {"s3.blob_refs", "s3.blob_scan"}) p->Allow(m, {kNode, kCli});
    p->Allow("admin.create_group", {kMeta, kAutoadmin, kCli});
    p->Allow("admin.status", {kNode, kMeta, kRouter, kAutoadmin, kCli});
    // Membership steps and stale-replica removal: the autoadmin, and the
    // operator by hand.
    p->Allow("admin.change_membership", {kAutoadmin, kCli});
    p->Allow("admin.drop_group", {kAutoadmin, kCli});
    p->Allow("admin.transfer_leadership", {kAutoadmin, kCli});
    p->Allow("admin.split_group", {kAutoadmin, kCli});
    p->Allow("admin.split_key", {kAutoadmin, kCli});
    p->Allow("admin.faults", {kCli});
    p->Allow("admin.state_digest", {kCli});
    return std::shared_ptr<const rpc::AccessPolicy>(std::move(p));
  }();
  return policy;
}

std::shared_ptr<const rpc::AccessPolicy> MetaAccessPolicy() {
  static const auto policy = [] {
    auto p = std::make_shared<rpc::AccessPolicy>();
    p->Allow("consensus.batch", {kMeta});
    for (std::string_view m : {"meta.lookup", "meta.lookup_batch", "meta.blob_slots"}) {
      p->Allow(m, {kNode, kMeta, kRouter, kAutoadmin, kCli});
    }
    // The GAC reads the tables' capacities.
    p->Allow("meta.tables", {kNode, kMeta, kRouter, kAutoadmin, kGac, kCli});
    // The autoadmin's lease and partition updates (followers forward them to
    // the leader as role meta).
    for (std::string_view m : {"meta.autoadmin_lease", "meta.update_partition", "meta.split_partition",
                               "meta.update_blob_slots", "meta.set_placement_weights"}) {
      p->Allow(m, {kAutoadmin, kMeta});
    }
    // Drains: the operator sets them, the autoadmin reads them.
    p->Allow("meta.set_drain", {kMeta, kCli});
    // Requested splits: the operator asks, the autoadmin carries them out.
    p->Allow("meta.request_split", {kMeta, kCli});
    p->Allow("meta.splits", {kAutoadmin, kMeta, kCli});
    p->Allow("meta.add_node", {kMeta, kCli});
    p->Allow("meta.drains", {kAutoadmin, kMeta, kCli});
    for (std::string_view m : {"meta.get_bucket", "meta.get_user_by_key", "meta.find_user"}) {
      p->Allow(m, {kRouter, kCli});
    }
    // GAC reads the buckets' capacities as it reads the tables'.
    p->Allow("meta.list_buckets", {kRouter, kGac, kCli});
    p->Allow("meta.set_bucket_capacity", {kMeta, kCli});
    p->Allow("meta.list_users", {kCli});
    // Mutations reach the meta leader from the replica that got them
    // (forwarding, as role meta).
    for (std::string_view m : {"meta.create_bucket", "meta.delete_bucket", "meta.set_bucket_versioning"}) {
      p->Allow(m, {kRouter, kMeta, kCli});
    }
    p->Allow("meta.create_user", {kMeta, kCli});
    p->Allow("meta.create_table", {kMeta, kCli});
    p->Allow("meta.update_table_capacity", {kMeta, kCli});
    p->Allow("admin.status", {kNode, kMeta, kRouter, kAutoadmin, kCli});
    p->Allow("admin.faults", {kCli});
    return std::shared_ptr<const rpc::AccessPolicy>(std::move(p));
  }();
  return policy;
}

std::shared_ptr<const rpc::AccessPolicy> GacAccessPolicy() {
  static const auto policy = [] {
    auto p = std::make_shared<rpc::AccessPolicy>();
    p->Allow("gac.report", {kRouter, kNode, kCli});
    return std::shared_ptr<const rpc::AccessPolicy>(std::move(p));
  }();
  return policy;
}

}  // namespace tessera::cluster
