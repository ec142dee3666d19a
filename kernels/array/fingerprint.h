// Fingerprint64: the 64-bit string hash TensorFlow's StringToHashBucketFast
// buckets by (FarmHash's Fingerprint64, i.e. its farmhashna::Hash64), so that
// a string feature hashed here lands in the bucket it lands in under TF and a
// TF model's hashed embeddings keep their rows. Its value for a given byte
// string is fixed forever (it is a fingerprint, not a seeded hash); it is not
// meant to resist an adversary choosing strings.
//
//   uint64_t h = Fingerprint64("hello");   // the same on every host
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string_view>

namespace tfd::kernels::array {

uint64_t Fingerprint64(std::string_view s);

}  // namespace tfd::kernels::array
