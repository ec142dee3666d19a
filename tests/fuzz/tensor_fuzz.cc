// libFuzzer target: any bytes as a Cap'n Proto message holding a Tensor —
// what every feed, pushed value and variable assignment in an RPC carries.
// Decoding must end in a tensor or an error status: a shape that claims
// gigabytes, content shorter than its shape, a value list of another dtype
// or a pointer past the message are refused before anything is allocated
// (the limit here is 1 MiB, as a task's --max-tensor-bytes would be).
//
//   ./build-fuzz/tests/fuzz/tensor_fuzz -max_total_time=60 tests/fuzz/corpus/tensor_fuzz
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr uint64_t kMaxBytes = 1 << 20;
  // Cap'n Proto reads words: copy into aligned memory, as a socket read does.
  kj::Array<capnp::word> words = kj::heapArray<capnp::word>(size / sizeof(capnp::word));
  memcpy(words.begin(), data, words.size() * sizeof(capnp::word));
  auto error = kj::runCatchingExceptions([&] {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = 1 << 20;
    capnp::FlatArrayMessageReader message(words, options);
    auto tensor = message.getRoot<tfd::proto::Tensor>();
    auto info = tfd::InspectTensorProto(tensor);
    auto decoded = tfd::TensorFromProto(tensor, kMaxBytes);
    // What was accepted fits the limit and agrees with the inspection.
    if (decoded.ok()) {
      if (!info.ok() || decoded->total_bytes() > kMaxBytes) abort();
    }
  });
  (void)error;  // a malformed message: the connection would be dropped
  return 0;
}
