// What the build's code was compiled to use (meson's -Dcpu), beside what the
// CPU it runs on offers. A binary that needs instructions the CPU lacks never
// gets this far: common/cpu_guard.cc refuses it at start.
//
//   if (std::string unused = CpuFeaturesUnused(); !unused.empty())
//     logger->warn("... {} ...", unused);
#pragma once

#include <string>
#include <string_view>

namespace tfd {

// -Dcpu as configured: "native", "x86-64-v3", "x86-64-v4" or "portable".
std::string_view CpuTarget();

// The instruction sets beyond x86-64's baseline that the build may use,
// space-separated (common/cpu_feature_list.h); empty for the baseline.
std::string CpuFeaturesBuiltFor();

// The vector sets that decide the kernels' pace (avx2, fma, avx512f) that
// this CPU has and the build does not use, space-separated; empty if none.
// Eigen picks its packets at compile time, so these are lost to it.
std::string CpuFeaturesUnused();

}  // namespace tfd
