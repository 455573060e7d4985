#include "cluster/process_table.h"

#include "cluster/added_nodes.h"
#include "common/check.h"

namespace tessera::cluster {

const char* ProcessRoleName(ProcessRole role) {
  switch (role) {
    case ProcessRole::kNode: return "node";
    case ProcessRole::kMeta: return "meta";
    case ProcessRole::kRouter: return "router";
    case ProcessRole::kAutoadmin: return "autoadmin";
    case ProcessRole::kGac: return "gac";
  }
  return "?";
}

ProcessTable::ProcessTable(const pb::ClusterLayout& layout) {
  uint32_t id = kFirstNodeId;
  for (const auto& n : layout.nodes()) {
    entries_.push_back({id++, ProcessRole::kNode, n.name(), n.az(), n.host(), n.peer_port(),
                        n.http_port(), 0, 0, 0, 0});
  }
  id = kFirstMetaId;
  for (const auto& m : layout.meta()) {
    entries_.push_back({id++, ProcessRole::kMeta, m.name(), m.az(), m.host(), m.peer_port(),
                        m.http_port(), 0, 0, 0, 0});
  }
  id = kFirstRouterId;
  for (const auto& r : layout.routers()) {
    entries_.push_back({id++, ProcessRole::kRouter, r.name(), r.az(), r.host(), r.kv_port(),
                        r.http_port(), r.s3_port(), r.s3_tls_port(), r.kv_tls_port(),
                        r.http_tls_port()});
  }
  id = kFirstAutoadminId;
  for (const auto& a : layout.autoadmin()) {
    entries_.push_back({id++, ProcessRole::kAutoadmin, a.name(), a.az(), a.host(), 0, a.http_port(),
                        0, 0, 0, 0});
  }
  id = kFirstGacId;
  for (const auto& g : layout.gac()) {
    entries_.push_back({id++, ProcessRole::kGac, g.name(), g.az(), g.host(), g.peer_port(),
                        g.http_port(), 0, 0, 0, 0});
  }
}

ProcessTable::ProcessTable(const pb::ClusterLayout& layout, const pb::AddedNodes& added)
    : ProcessTable(layout) {
  TESSERA_CHECK(WithAddedNodes(layout, added.nodes()).ok());
  for (const pb::AddedNode& a : added.nodes()) {
    const pb::NodeSpec& n = a.spec();
    ProcessEntry entry{a.id(), ProcessRole::kNode, n.name(), n.az(), n.host(), n.peer_port(),
                       n.http_port(), 0, 0, 0, 0};
    entry.added = true;
    entries_.push_back(std::move(entry));
  }
}

std::vector<ProcessEntry> ProcessTable::LayoutNodes() const {
  std::vector<ProcessEntry> out;
  for (const auto& e : entries_) {
    if (e.role == ProcessRole::kNode && !e.added) out.push_back(e);
  }
  return out;
}

std::vector<ProcessEntry> ProcessTable::OfRole(ProcessRole role) const {
  std::vector<ProcessEntry> out;
  for (const auto& e : entries_) {
    if (e.role == role) out.push_back(e);
  }
  return out;
}

std::optional<ProcessEntry> ProcessTable::ById(uint32_t id) const {
  for (const auto& e : entries_) {
    if (e.id == id) return e;
  }
  return std::nullopt;
}

std::optional<ProcessEntry> ProcessTable::ByName(const std::string& name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return e;
  }
  return std::nullopt;
}

std::vector<ProcessEntry> ProcessTable::InAz(const std::string& az) const {
  std::vector<ProcessEntry> out;
  for (const auto& e : entries_) {
    if (e.az == az) out.push_back(e);
  }
  return out;
}

}  // namespace tessera::cluster
