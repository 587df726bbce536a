#pragma once
// New YAML nodes for a reader that builds trees out of a document's nodes
// (internal to engine/io).
#include <yaml-cpp/yaml.h>

namespace mw::timeloop_yaml {

// yaml-cpp keeps a document's nodes in a memory they share, and assigning a
// node into a node of another memory copies every node of the source's into
// the target's (kept by both from then on). A node made on its own
// (YAML::Node(type)) has a memory of its own, so its first assignment of a
// document's node copies the whole document: building a tree of new nodes
// out of a document's costs the document once per new node (a third of an
// import of the exercises' top file). A node made here joins the arena's
// memory at once, for the price of its own one node; the arena's memory takes
// in each document once, at the first assignment of one of its nodes, and
// later assignments copy nothing.
class NodeArena {
  public:
    YAML::Node make(YAML::NodeType::value type) {
        YAML::Node n(type);
        all_.push_back(n); // (n's memory joins all_'s: n holds one node)
        return n;
    }

  private:
    YAML::Node all_{YAML::NodeType::Sequence};
};

} // namespace mw::timeloop_yaml
