// Reading and writing graph files: the binary Cap'n Proto message or its
// text form, told apart automatically, interoperable with the stock
// `capnp encode schemas/graph.capnp GraphDef` / `capnp decode` tools.
//
//   TFD_ASSIGN_OR_RETURN(GraphDef g, LoadGraph("model.capnp"));
//   TFD_RETURN_IF_ERROR(SaveGraph(g, "model.txt", GraphFormat::kText));
//
// Malformed input of any kind gives INVALID_ARGUMENT naming the file and, for
// text, the line; never a crash. So does a graph whose attr tensors are
// larger than `limits` allow (common/size_limits.h), checked before they are
// allocated.
#pragma once

#include <string>
#include <string_view>

#include "common/graph_def.h"
#include "common/memory_budget.h"
#include "common/size_limits.h"
#include "schemas/graph.capnp.h"

namespace tfd {

enum class GraphFormat { kBinary, kText };

// Files larger than this are refused before being read.
inline constexpr size_t kMaxGraphFileBytes = size_t{1} << 30;

// `source` names the input in messages (a path, "<stdin>").
StatusOr<GraphDef> ParseGraph(std::string_view bytes, const std::string& source,
                              const SizeLimits& limits = {});
StatusOr<GraphDef> LoadGraph(const std::string& path, const SizeLimits& limits = {});

// True when `bytes` is laid out as an unpacked binary Cap'n Proto message.
bool LooksLikeBinaryMessage(std::string_view bytes);

std::string SerializeGraph(const GraphDef& g, GraphFormat format);
// Replaces `path` whole or not at all (common/atomic_file.h).
Status SaveGraph(const GraphDef& g, const std::string& path, GraphFormat format);

// Between the in-memory form and the schema's; FromProto checks attr values
// (INVALID_ARGUMENT naming node and attr), including the sizes of attr
// tensors against limits.max_graph_tensor_bytes and, all together, against
// limits.max_graph_bytes, but not graph structure nor versions: a graph
// without versions reads as producer 0, min_consumer 0. An attr value it
// cannot read in a graph from a newer tfd gives FAILED_PRECONDITION naming
// both graph versions (common/graph_versions.h). ToProto writes the graph's
// versions as they are: writers leave out default attrs first
// (StripDefaultAttrs, common/op_registry.h).
//
// With `memory`, each attr tensor is charged to it as it is decoded and
// stays charged for as long as a tensor holds its buffer: the returned
// graph, copies of it, and kernels built from it (a session's graph, a
// partition's, a Const's value). What does not fit gives RESOURCE_EXHAUSTED
// naming the node, the attr, the tensor, its bytes and --memory-budget;
// what was decoded before it is given back. A task passes its budget
// (KernelEnv::memory) for every graph a client sends it.
StatusOr<GraphDef> GraphFromProto(proto::GraphDef::Reader g, const SizeLimits& limits = {},
                                  std::shared_ptr<MemoryBudget> memory = nullptr);
void GraphToProto(const GraphDef& g, proto::GraphDef::Builder out);

}  // namespace tfd
