#include "cluster/added_nodes.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include <filesystem>

#include "cluster/layout.h"
#include "common/text_file.h"

namespace tessera::cluster {
namespace {

std::string AddedNodesPath(const std::string& dir) { return dir + "/" + kAddedNodesFile; }

}  // namespace

Result<pb::ClusterLayout> WithAddedNodes(const pb::ClusterLayout& layout, const AddedNodeList& added) {
  pb::ClusterLayout merged = layout;
  for (const pb::AddedNode& node : added) {
    const uint32_t expected = kFirstNodeId + static_cast<uint32_t>(merged.nodes_size());
    if (node.id() != expected) {
      return Status::InvalidArgument("added node " + node.spec().name() + " has id " +
                                     std::to_string(node.id()) + ", not the next id " +
                                     std::to_string(expected));
    }
    if (node.id() >= kFirstMetaId) {
      return Status::InvalidArgument("no room for node " + node.spec().name() + ": at most " +
                                     std::to_string(kFirstMetaId - kFirstNodeId) + " storage nodes");
    }
    *merged.add_nodes() = node.spec();
  }
  if (Status valid = ValidateLayout(merged); !valid.ok()) {
    return Status::InvalidArgument("the added nodes do not fit the layout: " + valid.message());
  }
  return merged;
}

Result<pb::AddedNode> NextAddedNode(const pb::ClusterLayout& layout, const AddedNodeList& added,
                                    const pb::NodeSpec& spec) {
  for (const pb::AddedNode& node : added) {
    if (node.spec().name() != spec.name()) continue;
    if (google::protobuf::util::MessageDifferencer::Equals(node.spec(), spec)) return node;
    return Status::InvalidArgument("a node named " + spec.name() +
                                   " was added already, with other ports or AZ");
  }
  pb::AddedNode next;
  next.set_id(kFirstNodeId + static_cast<uint32_t>(layout.nodes_size() + added.size()));
  *next.mutable_spec() = spec;
  AddedNodeList with_next = added;
  *with_next.Add() = next;
  auto merged = WithAddedNodes(layout, with_next);
  if (!merged.ok()) return merged.status();
  return next;
}

Result<pb::AddedNodes> LoadAddedNodes(const std::string& dir) {
  const std::string path = AddedNodesPath(dir);
  pb::AddedNodes nodes;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nodes;
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  if (!google::protobuf::TextFormat::ParseFromString(*text, &nodes)) {
    return Status::InvalidArgument(path + ": not a valid AddedNodes in protobuf text format");
  }
  return nodes;
}

Status SaveAddedNodes(const std::string& dir, const pb::AddedNodes& nodes) {
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(nodes, &text)) {
    return Status::IOError("cannot print the added nodes");
  }
  return WriteTextFileAtomically(
      AddedNodesPath(dir),
      "# Storage nodes added with `tessera cluster add-node` (meta holds the same list).\n" + text);
}

Result<ProcessTable> TableWithAddedNodes(const pb::ClusterLayout& layout, const std::string& dir) {
  auto added = LoadAddedNodes(dir);
  if (!added.ok()) return added.status();
  if (auto merged = WithAddedNodes(layout, added->nodes()); !merged.ok()) {
    return Status::InvalidArgument(AddedNodesPath(dir) + ": " + merged.status().message());
  }
  return ProcessTable(layout, *added);
}

}  // namespace tessera::cluster
