// ClusterSession: what every `tessera cluster` action needs — the layout,
// its process table, the supervisor of the cluster directory, and (lazily)
// a ClusterClient with the operator's identity (or, for probes of the access
// rules, a process's: set_caller).
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "cluster/cluster_client.h"
#include "cluster/layout.h"
#include "cluster/process_table.h"
#include "cluster/supervisor.h"

namespace tessera::cli {

class ClusterSession {
 public:
  static Result<std::unique_ptr<ClusterSession>> Open(const std::string& layout_path,
                                                      const std::string& dir);

  const pb::ClusterLayout& layout() const { return layout_; }
  const cluster::ProcessTable& table() const { return table_; }
  cluster::Supervisor& supervisor() { return supervisor_; }
  const std::string& dir() const { return dir_; }
  const std::string& layout_path() const { return layout_path_; }
  // The client, created on first use (needs DIR/secret and DIR/pki).
  Result<cluster::ClusterClient*> client();
  // Calls as process `name` of the layout (its certificate) instead of as
  // the operator; before the first client(). Empty: the operator.
  void set_caller(std::string name) { caller_ = std::move(name); }

  // Names of the processes an argument denotes: a process name, or an AZ
  // (every process in it). Empty when it denotes nothing.
  std::vector<cluster::ProcessEntry> Resolve(const std::string& name_or_az) const;

 private:
  ClusterSession(pb::ClusterLayout layout, std::string layout_path, std::string dir,
                 cluster::Supervisor supervisor)
      : layout_(std::move(layout)),
        table_(layout_),
        layout_path_(std::move(layout_path)),
        dir_(std::move(dir)),
        supervisor_(std::move(supervisor)) {}

  pb::ClusterLayout layout_;
  cluster::ProcessTable table_;
  std::string layout_path_;
  std::string dir_;
  cluster::Supervisor supervisor_;
  std::string caller_;
  std::unique_ptr<cluster::ClusterClient> client_;
};

}  // namespace tessera::cli
