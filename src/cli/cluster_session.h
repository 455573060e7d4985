// ClusterSession: what every `tessera cluster` action needs — the layout
// (the one recorded in the cluster directory, cli/cluster_record.h), its
// process table with the storage nodes added since (cluster/added_nodes.h), the supervisor of the cluster directory, and (lazily) a
// ClusterClient with the operator's identity (or, for probes of the access
// rules, a process's: set_caller).
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "cli/cluster_record.h"
#include "cluster/cluster_client.h"
#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "cluster/supervisor.h"

namespace tessera::cli {

class ClusterSession {
 public:
  // `layout_flag`: --layout as given, empty when not given (ChooseLayout).
  static Result<std::unique_ptr<ClusterSession>> Open(const std::string& layout_flag,
                                                      const std::string& dir);

  const pb::ClusterLayout& layout() const { return layout_.layout; }
  const cluster::ProcessTable& table() const { return table_; }
  cluster::Supervisor& supervisor() { return supervisor_; }
  const std::string& dir() const { return dir_; }
  // The layout file processes are started with (DIR/layout.textproto once
  // recorded) and the file it came from.
  const std::string& layout_path() const { return layout_.path; }
  const std::string& layout_source() const { return layout_.source; }
  bool recorded() const { return layout_.recorded; }
  // `up`: records the layout and `settings` in the cluster directory
  // unless it holds a record already (RecordCluster).
  Status Record(const UpSettings& settings) { return RecordCluster(dir_, settings, layout_); }
  // Reads the added nodes again (after `cluster add-node` recorded one);
  // the next client() call creates a client that knows them.
  Status ReloadTable();
  // The client, created on first use (needs DIR/secret and DIR/pki).
  Result<cluster::ClusterClient*> client();
  // Calls as process `name` of the layout (its certificate) instead of as
  // the operator; before the first client(). Empty: the operator.
  void set_caller(std::string name) { caller_ = std::move(name); }

  // Where each AZ's processes run: AZ -> a network namespace's path
  // (/run/netns/NAME), for `experiment run --netns`; an AZ not in the map
  // (the default: none) runs in the caller's namespace.
  void set_network_namespaces(std::map<std::string, std::string> by_az) {
    netns_by_az_ = std::move(by_az);
  }
  std::string NetnsPathOf(const std::string& az) const {
    auto it = netns_by_az_.find(az);
    return it == netns_by_az_.end() ? std::string() : it->second;
  }

  // Names of the processes an argument denotes: a process name, or an AZ
  // (every process in it). Empty when it denotes nothing.
  std::vector<cluster::ProcessEntry> Resolve(const std::string& name_or_az) const;

 private:
  ClusterSession(LayoutChoice layout, cluster::ProcessTable table, std::string dir,
                 cluster::Supervisor supervisor)
      : layout_(std::move(layout)),
        table_(std::move(table)),
        dir_(std::move(dir)),
        supervisor_(std::move(supervisor)) {}

  LayoutChoice layout_;
  cluster::ProcessTable table_;
  std::string dir_;
  cluster::Supervisor supervisor_;
  std::string caller_;
  std::unique_ptr<cluster::ClusterClient> client_;
  std::map<std::string, std::string> netns_by_az_;
};

}  // namespace tessera::cli
