// Which nodes of a graph run on a GPU of their task.
//
// A node runs on GPU i when it (or, for an op taking a variable or queue by
// reference, the resource it takes) asks for a GPU (`/device:GPU:i`, `/gpu:i`),
// its task has that GPU, and every member of its colocation group has a GPU
// kernel. Otherwise, with soft placement (--allow-soft-placement) it runs on
// its task's CPU and the log says so once; without it the request is an
// INVALID_ARGUMENT naming the node, the device and why it cannot be met.
// Ops the runtime inserts (names starting with '_': feeds, fetches,
// transfers) always run on the CPU; copies connect them to the GPU
// (daemon/runtime/device_copies.h).
//
//   GpuPlacementOptions o{.gpus = [&](int node) { return 1; }, .allow_soft_placement = false};
//   TFD_ASSIGN_OR_RETURN(std::vector<int> gpu, PlaceOnGpus(graph, requested, o));
//   // gpu[id] == -1: CPU
//
// Thread-safety: a pure function.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "common/device_name.h"
#include "common/graph.h"

namespace tfd {

struct GpuPlacementOptions {
  // The usable GPUs of the task node `id` runs on.
  std::function<int(int id)> gpus;
  // Why a task has none (for the error), e.g. gpu::GpuUnavailableReason().
  std::string unavailable;
  bool allow_soft_placement = false;
  std::shared_ptr<spdlog::logger> logger;  // soft-placement notes; may be null
  // GpuBlockers of the session's whole graph, when `graph` is one step's
  // pruned part of it: a variable whose group holds an op without a GPU
  // kernel in some other step stays off the GPU in this one too, so that
  // every step finds it on the same device.
  const std::map<std::string, std::string>* whole_graph_blockers = nullptr;
};

// By node id: the root of the node's colocation group — the resource (a
// variable, a queue) that it, or what it takes by reference, belongs with.
// Nodes with the same root run on the same device.
std::vector<int> ColocationRoots(const Graph& graph);

// By node name: why the node's colocation group in `whole` cannot go to a
// GPU (absent: it can).
std::map<std::string, std::string> GpuBlockers(const Graph& whole);

// By node id: the GPU the node runs on, or -1 for its task's CPU.
// `requested` holds each node's requested device (parsed, merged with the
// session's default).
StatusOr<std::vector<int>> PlaceOnGpus(const Graph& graph,
                                       const std::vector<DeviceName>& requested,
                                       const GpuPlacementOptions& options);

}  // namespace tfd
