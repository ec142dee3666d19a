// Writing a built graph to the file tfctl submits: the scope's first error
// if it has one, else the graph checked as tfd will check it (Graph::Build)
// and saved as a binary Cap'n Proto message (or its text form), without the
// attrs that equal their op's default (StripDefaultAttrs: an older tfd,
// whose ops may lack newer attrs, loads it as long as none is set).
//
//   Scope root = Scope::NewRootScope(registry);
//   ... build the model, the train op, the initializer ...
//   TFD_RETURN_IF_ERROR(WriteGraphFile(root, "graph.capnp"));
//   // tfctl submit graph.capnp --target worker0:2222 --run train --steps 20000
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <string>

#include "common/scope.h"
#include "common/graph_io.h"

namespace tfd {

// Nothing is written when the scope holds an error or the graph does not
// validate; an existing file at `path` is then left as it was.
Status WriteGraphFile(const Scope& scope, const std::string& path,
                      GraphFormat format = GraphFormat::kBinary);

}  // namespace tfd
