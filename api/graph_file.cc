#include "api/graph_file.h"

#include "common/graph.h"

namespace tfd {

Status WriteGraphFile(const Scope& scope, const std::string& path, GraphFormat format) {
  TFD_RETURN_IF_ERROR(scope.status());
  GraphDef graph = scope.ToGraphDef();
  auto checked = Graph::Build(graph, scope.registry());
  if (!checked.ok()) return checked.status().WithContext("not writing '" + path + "'");
  StripDefaultAttrs(scope.registry(), graph);
  return SaveGraph(graph, path, format);
}

}  // namespace tfd
