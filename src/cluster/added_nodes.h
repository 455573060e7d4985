// Storage nodes added to a running cluster beyond its layout (`tessera
// cluster add-node`; meta.add_node records them in the storage node map,
// meta key "a/blob_slots", which every node and router polls).
//
// Contracts:
//   1. Added nodes are numbered after the layout's: the k-th added node has
//      process id layout.nodes_size() + k, so every process that knows the
//      same added nodes numbers every node alike, and a layout with its
//      added nodes appended (WithAddedNodes) gives them their ids through
//      ProcessTable unchanged.
//   2. An added node fits the layout exactly as a node written into it
//      would (ValidateLayout): unique name, unique ports on its host,
//      loopback host, one of the layout's AZs; ids stay below kFirstMetaId.
//   3. DIR/added_nodes.textproto is the operator's copy (pb::AddedNodes),
//      written by `cluster add-node` after meta accepted the node; processes
//      started later read it with the layout (TableWithAddedNodes).
//
// Thread safety: pure functions and whole-file reads and writes.
#pragma once

#include <google/protobuf/repeated_ptr_field.h>

#include <string>

#include "cluster/process_table.h"
#include "common/result.h"
#include "tessera/cluster.pb.h"

namespace tessera::cluster {

inline constexpr char kAddedNodesFile[] = "added_nodes.textproto";

using AddedNodeList = google::protobuf::RepeatedPtrField<pb::AddedNode>;

// `layout` with `added` appended to its storage nodes. InvalidArgument,
// naming the node, when an id breaks contract 1 or the result breaks
// contract 2.
Result<pb::ClusterLayout> WithAddedNodes(const pb::ClusterLayout& layout, const AddedNodeList& added);

// What `spec` becomes when added after `added`: the node already added
// under its name when its spec is the same (adding is idempotent); a new
// node with the next id otherwise. InvalidArgument when the name is taken
// with another spec or the node does not fit (contract 2).
Result<pb::AddedNode> NextAddedNode(const pb::ClusterLayout& layout, const AddedNodeList& added,
                                    const pb::NodeSpec& spec);

// DIR/added_nodes.textproto; none when the file does not exist.
// InvalidArgument naming the file when it does not parse.
Result<pb::AddedNodes> LoadAddedNodes(const std::string& dir);
// Replaces DIR/added_nodes.textproto as a whole.
Status SaveAddedNodes(const std::string& dir, const pb::AddedNodes& nodes);

// The processes of the cluster in `dir`: `layout`'s and the nodes added
// since (contract 3). InvalidArgument naming the file when they do not fit.
Result<ProcessTable> TableWithAddedNodes(const pb::ClusterLayout& layout, const std::string& dir);

}  // namespace tessera::cluster
