// libFuzzer target: any bytes as a graph file. Loading and validating must
// end in a graph or an error status — never a crash, a hang or a leak.
//
//   CXX=clang++ meson setup build-fuzz -Dfuzz=true -Dtests=false
//   ninja -C build-fuzz tests/fuzz/graph_fuzz
//   ./build-fuzz/tests/fuzz/graph_fuzz -max_total_time=60 tests/fuzz/corpus/graph_fuzz
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/graph.h"
#include "common/graph_io.h"
#include "kernels/register_all.h"

namespace {

const tfd::OpRegistry& Registry() {
  static tfd::OpRegistry registry;
  static const bool filled = tfd::kernels::RegisterAll(registry).ok();
  (void)filled;
  return registry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto graph = tfd::ParseGraph(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (graph.ok()) (void)tfd::Graph::Build(std::move(graph).value(), Registry());
  return 0;
}
