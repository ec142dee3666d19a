// The geometry a convnet op's GPU launcher takes (cnn_ops_gpu.h's
// TfdGpuWindow), from the one the CPU kernels compute and check
// (window_geometry.h), so the two devices share every shape and padding rule.
// Host code only (the kernel classes and the CPU test of the GPU arithmetic).
//
//   TFD_ASSIGN_OR_RETURN(ConvGeometry g, MakeConvGeometry(attrs, input, filter));
//   const TfdGpuWindow w = ToGpuWindow(g);
//
// Thread-safety: a pure function.
#pragma once

#include "kernels/nn/cnn_ops_gpu.h"
#include "kernels/nn/window_geometry.h"

namespace tfd::kernels::nn {

inline TfdGpuWindowDim ToGpuWindowDim(const WindowDim& d) {
  return {d.in, d.out, d.window, d.stride, d.dilation, d.pad_before};
}

inline TfdGpuWindow ToGpuWindow(const ConvGeometry& g) {
  return {g.batch, g.in_depth, g.out_depth, ToGpuWindowDim(g.rows), ToGpuWindowDim(g.cols)};
}

}  // namespace tfd::kernels::nn
