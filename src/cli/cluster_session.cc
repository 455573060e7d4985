#include "cli/cluster_session.h"

#include "cluster/added_nodes.h"
#include "cluster/cluster_pki.h"
#include "cluster/rpc_access.h"

namespace tessera::cli {

Result<std::unique_ptr<ClusterSession>> ClusterSession::Open(const std::string& layout_flag,
                                                             const std::string& dir) {
  auto layout = ChooseLayout(dir, layout_flag);
  if (!layout.ok()) return layout.status();
  auto table = cluster::TableWithAddedNodes(layout->layout, dir);
  if (!table.ok()) return table.status();
  auto supervisor = cluster::Supervisor::Open(dir);
  if (!supervisor.ok()) return supervisor.status();
  return std::unique_ptr<ClusterSession>(new ClusterSession(
      std::move(layout).value(), std::move(table).value(), dir, std::move(supervisor).value()));
}

Status ClusterSession::ReloadTable() {
  auto table = cluster::TableWithAddedNodes(layout_.layout, dir_);
  if (!table.ok()) return table.status();
  table_ = std::move(table).value();
  client_.reset();
  return Status::Ok();
}

Result<cluster::ClusterClient*> ClusterSession::client() {
  if (!client_) {
    std::string name(cluster::kCliRole);
    uint32_t peer_id = cluster::kCliPeerId;
    std::string role(cluster::kCliRole);
    if (!caller_.empty()) {
      const std::optional<cluster::ProcessEntry> entry = table_.ByName(caller_);
      if (!entry) return Status::InvalidArgument("no process named '" + caller_ + "' in the layout");
      name = entry->name;
      peer_id = entry->id;
      role = cluster::ProcessRoleName(entry->role);
    }
    auto identity = cluster::LoadIdentity(dir_, name, peer_id, std::move(role));
    if (!identity.ok()) return identity.status();
    auto client = cluster::ClusterClient::Create(table_, std::move(identity).value());
    if (!client.ok()) return client.status();
    client_ = std::move(client).value();
  }
  return client_.get();
}

std::vector<cluster::ProcessEntry> ClusterSession::Resolve(const std::string& name_or_az) const {
  if (auto one = table_.ByName(name_or_az)) return {*one};
  return table_.InAz(name_or_az);
}

}  // namespace tessera::cli
