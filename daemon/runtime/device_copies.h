// The copies between host and device memory that a placed graph needs.
//
// A GPU node's inputs and outputs live in its device's memory, except the
// arguments its kernel keeps on the host (OpRegistration::host_memory:
// shapes, axes, hyper-parameters); a CPU node's live in host memory. On
// every data edge whose two ends disagree, InsertDeviceCopies puts a
// _CopyToDevice or _CopyToHost node (placed on the GPU side, one per tensor
// and device, however many consumers) and rewires the consumers to it. A
// reference edge is never copied: colocation keeps both ends on one device.
// The runtime's own nodes (_Arg, _Retval, _Send, _Recv) are moved to their
// task's CPU: they hand tensors to the host.
//
//   TFD_ASSIGN_OR_RETURN(GraphDef with_copies, InsertDeviceCopies(graph));
//   TFD_ASSIGN_OR_RETURN(Graph g, Graph::Build(std::move(with_copies), registry));
//
// A graph without GPU nodes comes back unchanged.
//
// Thread-safety: a pure function.
#pragma once

#include "common/graph.h"

namespace tfd {

StatusOr<GraphDef> InsertDeviceCopies(const Graph& graph);

}  // namespace tfd
