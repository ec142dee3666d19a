// The build's -Dcpu reaches the code: what CpuFeaturesBuiltFor reports is
// what meson asked the compiler for, and a native build leaves none of the
// kernels' vector sets of this CPU unused. (The refusal of a CPU that lacks
// them is tests/deploy/cpu_guard_test.sh, on an emulated older CPU.)
#include "common/cpu_features.h"

#include <catch2/catch.hpp>

#include <set>
#include <sstream>

#if defined(__x86_64__)
namespace tfd {
namespace {

std::set<std::string> Words(const std::string& list) {
  std::istringstream in(list);
  std::set<std::string> words;
  for (std::string w; in >> w;) words.insert(w);
  return words;
}

bool CpuHas(const std::string& name) {
  __builtin_cpu_init();
  if (name == "avx2") return __builtin_cpu_supports("avx2");
  if (name == "fma") return __builtin_cpu_supports("fma");
  if (name == "avx512f") return __builtin_cpu_supports("avx512f");
  FAIL("no such feature in this test: " << name);
  return false;
}

TEST_CASE("the features built for and left unused follow -Dcpu") {
  const std::string target(CpuTarget());
  const auto built = Words(CpuFeaturesBuiltFor());
  const auto unused = Words(CpuFeaturesUnused());
  INFO("-Dcpu=" << target << ", built for: " << CpuFeaturesBuiltFor()
                << "; unused: " << CpuFeaturesUnused());
  for (const char* name : {"avx2", "fma", "avx512f"}) {
    // A set the CPU has is either in the build or reported unused.
    CHECK(unused.count(name) == (built.count(name) == 0 && CpuHas(name) ? 1u : 0u));
  }
  if (target == "native") {
    CHECK(unused.empty());
    for (const char* name : {"avx2", "fma", "avx512f"}) CHECK(built.count(name) == (CpuHas(name) ? 1u : 0u));
  } else if (target == "x86-64-v3") {
    CHECK(built.count("avx2") == 1);
    CHECK(built.count("fma") == 1);
    CHECK(built.count("avx512f") == 0);
  } else if (target == "x86-64-v4") {
    CHECK(built.count("avx512f") == 1);
    CHECK(built.count("avx512bw") == 1);
  } else {
    CHECK(target == "portable");
    CHECK(built.empty());
  }
}

}  // namespace
}  // namespace tfd
#endif  // __x86_64__
