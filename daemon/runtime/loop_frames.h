// LoopFrames: where each node of a graph runs with respect to while loops,
// worked out once when an executor is created (TensorFlow's
// ControlFlowInfo).
//
// A while loop is a frame: an Enter's consumers run in the child frame its
// frame_name names, an Exit's in the frame around its own, every other
// node's consumers in the node's frame. Nodes with no inputs run in the root
// frame (frame 0). A node reached from two different frames, an Exit in the
// root frame, one frame_name entered from two different frames, or a fetch
// (_Retval) of a value inside a loop is INVALID_ARGUMENT naming the node; so is a node no input-free node reaches
// (it sits on a cycle that nothing enters, and could never run).
//
//   TFD_ASSIGN_OR_RETURN(LoopFrames lf, LoopFrames::Build(graph));
//   int f = lf.frame[id];  // lf.frames[f].name: "" for the root
//
// Thread-safety: immutable after Build.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/graph.h"

namespace tfd {

// How the executor treats a node: what it does with a dead input or where
// its outputs go. Decided once per node rather than from its op's name.
enum class NodeKind : uint8_t {
  kPlain,
  kMerge,          // runs once any data input is live; dead when all are
  kSend,           // runs on a dead input: it sends the deadness
  kRetval,         // a dead fetch is an error
  kEnter,          // outputs go into its child frame (Enter, and RefEnter for a reference)
  kExit,           // outputs go to the enclosing frame
  kNextIteration,  // outputs go to the next iteration
};

struct LoopFrames {
  struct Frame {
    std::string name;  // the Enters' frame_name; "" for the root
    int parent = -1;   // the enclosing frame; -1 for the root
    int num_nodes = 0;
    int num_enters = 0;  // Enter nodes into it: each delivers once per parent iteration
    int parallel_iterations = 1;
    // By local index: the pending count an iteration starts with (a Merge's
    // is 2 per control input plus 1 until a live input arrives), the node's
    // id, and where its data inputs start in an iteration's one array of
    // every node's inputs (num_nodes + 1 entries: the last is its size).
    std::vector<int> initial_pending;
    std::vector<int> ids;
    std::vector<int> input_start{0};
  };

  std::vector<NodeKind> kind;      // by node id
  std::vector<int> frame;          // by node id: the frame it runs in
  std::vector<int> local;          // by node id: its index within that frame
  std::vector<int> child;          // by node id: for an Enter, the frame it enters; else -1
  std::vector<bool> constant;      // by node id: an Enter with is_constant
  std::vector<Frame> frames;       // [0]: the root

  static StatusOr<LoopFrames> Build(const Graph& graph);
};

}  // namespace tfd
