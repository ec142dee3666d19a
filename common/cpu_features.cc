#include "common/cpu_features.h"

#include "tfd_version.h"  // TFD_CPU_TARGET, meson's -Dcpu

namespace tfd {
namespace {

void Append(std::string& list, std::string_view name) {
  if (!list.empty()) list += ' ';
  list += name;
}

}  // namespace

std::string_view CpuTarget() { return TFD_CPU_TARGET; }

std::string CpuFeaturesBuiltFor() {
  std::string built;
#define TFD_CPU_FEATURE(name) Append(built, name);
#include "common/cpu_feature_list.h"
#undef TFD_CPU_FEATURE
  return built;
}

std::string CpuFeaturesUnused() {
  std::string unused;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
#ifndef __AVX2__
  if (__builtin_cpu_supports("avx2")) Append(unused, "avx2");
#endif
#ifndef __FMA__
  if (__builtin_cpu_supports("fma")) Append(unused, "fma");
#endif
#ifndef __AVX512F__
  if (__builtin_cpu_supports("avx512f")) Append(unused, "avx512f");
#endif
#endif
  return unused;
}

}  // namespace tfd
