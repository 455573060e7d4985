#include "cli/cluster_command.h"

#include <ostream>

#include "cluster/layout.h"

namespace tessera::cli {

int RunClusterCommand(const ClusterCommandArgs& args, std::ostream& out, std::ostream& err) {
  auto layout = cluster::LoadLayout(args.layout_path);
  if (!layout.ok()) {
    err << "tessera cluster: " << layout.status().ToString() << "\n";
    return 2;
  }
  out << cluster::DescribeLayout(*layout);
  out << "cluster directory: " << args.dir << "\n";
  if (args.action == "up") {
    // The node, meta and router roles arrive with the next milestone
    // (issue 3); until then `up` validates the layout and shows the plan.
    out << "\nThe processes above are the next milestone; this build provides the\n"
           "replication core. Try:\n"
           "  tessera sim --replicas 3 --seed-start 1 --seeds 100\n"
           "  make bench\n";
  }
  return 0;
}

}  // namespace tessera::cli
