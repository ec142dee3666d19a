// Partitioning: one step's placed graph cut into one graph per task, with a
// _Send/_Recv pair on every edge between tasks.
//
// A data edge from A:port to a node on another task becomes
// A:port -> _Send  ...  _Recv -> consumer; one pair per (tensor, receiving
// task), however many consumers there. A control edge between tasks becomes
// ^A -> _Signal -> _Send ... _Recv -> ^consumer. Refs never cross: placement
// colocates reference consumers, and a value consumer on another task gets
// the variable's value (the _Send reads it).
//
// A while loop may span tasks. A transfer inside a loop's frame runs once
// per iteration, its key naming the frame and iteration
// (common/rendezvous.h); every task that runs part of a loop without its
// LoopCond gets a control loop driven by the LoopCond's value, which makes
// the loop's iterations there and triggers the frame's _Recvs once each
// (partition_loops.h). Still refused, INVALID_ARGUMENT naming the node: a
// loop on several tasks without a LoopCond, and a loop's non-constant Enter
// or NextIteration feeding several tasks.
//
//   TFD_ASSIGN_OR_RETURN(auto parts, PartitionGraph(graph, devices));
//   for (auto& [task, def] : parts) register def with task ...
//
// Thread-safety: a pure function.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/graph.h"

namespace tfd {

// Task name ("/job:J/replica:0/task:T") -> that task's partition, whose
// nodes carry their full device in NodeDef::device, and which carries the
// versions of `graph`.
StatusOr<std::map<std::string, GraphDef>> PartitionGraph(const Graph& graph,
                                                         const std::vector<std::string>& devices);

// The name of the _Send node that feeds the _Recv named `recv_node` on
// `recv_device` (to pair the two in traces); empty when `recv_node` is not
// a name PartitionGraph gives a _Recv.
std::string SendNodeFor(const std::string& recv_node, const std::string& recv_device);

}  // namespace tfd
