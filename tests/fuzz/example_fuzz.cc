// libFuzzer target: any bytes as a serialized tf.train.Example and as a
// SequenceExample's feature lists, as ParseExample and ParseFeatureLists
// read them from a TFRecord (kernels/io/example_proto.h). Parsing must give
// features or an error status, and a feature's values are all of the one
// kind it says.
//
//   ./build-fuzz/tests/fuzz/example_fuzz -max_total_time=60 tests/fuzz/corpus/example_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kernels/io/example_proto.h"

namespace {

using tfd::kernels::io::ExampleFeature;

void CheckOneKind(const ExampleFeature& f) {
  const size_t others = (f.kind == ExampleFeature::Kind::kBytes ? 0 : f.bytes.size()) +
                        (f.kind == ExampleFeature::Kind::kFloat ? 0 : f.floats.size()) +
                        (f.kind == ExampleFeature::Kind::kInt64 ? 0 : f.ints.size());
  if (others != 0) std::abort();  // values of a kind the feature is not
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto parsed = tfd::kernels::io::ParseExampleProto(bytes); parsed.ok()) {
    for (const auto& [name, f] : *parsed) CheckOneKind(f);
  }
  if (auto lists = tfd::kernels::io::ParseFeatureListsProto(bytes); lists.ok()) {
    for (const auto& [name, list] : *lists) {
      for (const ExampleFeature& f : list) CheckOneKind(f);
    }
  }
  return 0;
}
