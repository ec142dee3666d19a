// Placement: which task (and device) runs each node of a step's graph.
//
// The rules (see the design): explicit requests are honoured, and an unknown
// job or task is an error naming it; a request naming a job but no task gets
// the master's own task when it is the master's job (so one graph file serves
// every worker in between-graph replication) and task 0 otherwise; a request
// naming a task but no job means the master's job; an op that takes a
// variable or queue by reference runs where that resource lives; whatever is
// still unplaced runs on the master's own task, on its CPU, as TF1's
// MasterSession does (so a node the graph forgot to pin never puts one
// worker's step through another worker, and a session on a ps task keeps
// such nodes on that ps task). A GPU request is met on
// the master's own task, which knows its GPUs (daemon/runtime/gpu_placement.h
// says when and how); on another task it is refused, or runs on that task's
// CPU with soft placement: between-graph replication asks for the GPU of the
// worker whose session runs the graph, which is that worker's own.
//
//   PlacementOptions o{.cluster = spec, .master = *DeviceName::Parse("/job:worker/task:1")};
//   TFD_ASSIGN_OR_RETURN(std::vector<std::string> devices, Place(graph, o));
//
// Thread-safety: a pure function.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "common/cluster_spec.h"
#include "common/device_name.h"
#include "common/graph.h"

namespace tfd {

struct PlacementOptions {
  ClusterSpec cluster;
  DeviceName master;  // job and task of the master that runs the session
  std::shared_ptr<spdlog::logger> logger;  // soft-placement notes; may be null
  int master_gpus = 0;            // usable GPUs of the master's own task
  std::string gpus_unavailable;   // why the master has none, for errors
  bool allow_soft_placement = false;
  // The session's whole graph, when `graph` is one step's pruned part of it
  // (see GpuPlacementOptions::whole_graph_blockers); may be null.
  const Graph* whole_graph = nullptr;
};

// The full device ("/job:J/replica:0/task:T/device:CPU:0", or GPU:i) of
// every node, by node id. INVALID_ARGUMENT names the node and the request it cannot meet.
StatusOr<std::vector<std::string>> Place(const Graph& graph, const PlacementOptions& options);

}  // namespace tfd
