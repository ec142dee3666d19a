// Random seeds as TensorFlow 1 derives them: every random op of the API
// (random tensors, Dropout, RandomShuffle, random variable initializers)
// takes its (seed, seed2) attrs from GetSeed, so that a graph-level seed
// (tf.set_random_seed) makes every random op of the graph reproducible
// without naming op seeds, and an op seed alone still does.
//
//   Scope root = Scope::NewRootScope(registry);
//   root.SetRandomSeed(1234);                    // tf.set_random_seed(1234)
//   OpSeeds s = GetSeed(root, std::nullopt);     // (1234, <the graph's node count>)
//   Output u = ops::RandomUniform(root, {2, 3}, DType::kFloat32);  // seeded the same way
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <cstdint>
#include <optional>

#include "common/scope.h"

namespace tfd::ops {

// The seed of an op seeded on its own, in a graph without a seed (TF1's
// DEFAULT_GRAPH_SEED).
inline constexpr int64_t kDefaultGraphSeed = 87654321;
// Seeds are taken modulo this, to fit the 32-bit seeds of TF1 (_MAXINT32).
inline constexpr int64_t kMaxSeed = (int64_t{1} << 31) - 1;

// A random op's "seed" and "seed2" attrs. (0, 0) draws a fresh stream in
// every session (nondeterministic); any other pair draws one fixed stream.
struct OpSeeds {
  int64_t seed = 0;
  int64_t seed2 = 0;
  bool deterministic() const { return seed != 0 || seed2 != 0; }
  bool operator==(const OpSeeds&) const = default;
};

// TF1's get_seed, in the graph of `scope`:
//  - graph seed g set, op seed unset: (g, n), where n is the number of nodes
//    in the graph so far (TF1 takes the graph's last op id), so each random
//    op of a seeded graph draws its own stream and a graph built the same
//    way draws the same ones;
//  - op seed s set, graph seed unset: (kDefaultGraphSeed, s);
//  - both set: (g, s);
//  - neither: (0, 0), a fresh stream each session.
// Seeds are reduced modulo kMaxSeed into [0, kMaxSeed); a derived (0, 0)
// becomes (0, kMaxSeed), since (0, 0) means nondeterministic.
OpSeeds GetSeed(const Scope& scope, std::optional<int64_t> op_seed);

}  // namespace tfd::ops
