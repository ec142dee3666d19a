// Pruning: the subgraph a run needs.
//
//   TFD_ASSIGN_OR_RETURN(GraphDef needed, PruneGraph(def, {"loss", "train_op"}));
//
// Keeps every node the roots depend on through data or control edges, in
// their original order. NOT_FOUND names a root that is not in the graph.
#pragma once

#include <string>
#include <vector>

#include "common/graph_def.h"

namespace tfd {

StatusOr<GraphDef> PruneGraph(const GraphDef& graph, const std::vector<std::string>& roots);

}  // namespace tfd
