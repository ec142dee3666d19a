// Rewriting a graph for one run's signature (feeds, fetches, targets): every
// fed tensor becomes an _Arg node and every fetch feeds a _Retval node, so
// executors know nothing of feeds and fetches; then the graph is pruned to
// what the fetches and targets need. Used by the in-process session and by
// the master before placement and partitioning.
//
//   std::vector<FeedSpec> specs;
//   TFD_ASSIGN_OR_RETURN(GraphDef g, RewriteForRun(def, registry, feeds, fetches, targets, &specs));
//   ... each later run: TFD_RETURN_IF_ERROR(CheckFeed(specs[i], value));
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/graph_def.h"
#include "common/op_registry.h"
#include "common/tensor.h"

namespace tfd {

// What a fed tensor must be: the dtype and (partial) shape its node declares.
struct FeedSpec {
  TensorId id;
  DType dtype = DType::kInvalid;
  PartialShape shape;
};

// NOT_FOUND names a feed, fetch or target that is not in the graph;
// INVALID_ARGUMENT a feed whose value does not fit what its node declares.
// `feeds` carry sample values (the first run's). `specs` (may be null)
// receives one FeedSpec per feed. _Arg i and _Retval i follow the order of
// `feeds` and `fetches`; they are named "_feed/NODE/PORT" and
// "_fetch/I/NODE/PORT".
StatusOr<GraphDef> RewriteForRun(const GraphDef& graph, const OpRegistry& registry,
                                 const std::vector<std::pair<TensorId, Tensor>>& feeds,
                                 const std::vector<TensorId>& fetches,
                                 const std::vector<std::string>& targets,
                                 std::vector<FeedSpec>* specs);

// INVALID_ARGUMENT naming the feed when `value` does not fit `spec`.
Status CheckFeed(const FeedSpec& spec, const Tensor& value);

}  // namespace tfd
