// WindowedOp: the base of a windowed op's kernel (the convolutions and the
// pooling, CPU and GPU alike), whose window attrs (strides, padding,
// dilations, ksize) are read and checked once, when the kernel is built. A
// bad attr fails the construction with the reader's error, naming it.
//
//   class PoolOp : public WindowedOp {
//    public:
//     explicit PoolOp(OpKernelConstruction& c) : WindowedOp(c, PoolAttrsFrom(c.attrs())) {}
//     ... attrs_ ...
//   };
//
// Thread-safety: attrs_ is set before the kernel is shared, read-only after.
#pragma once

#include <utility>

#include "common/op_kernel.h"
#include "common/status.h"
#include "kernels/nn/window_geometry.h"

namespace tfd::kernels::nn {

class WindowedOp : public OpKernel {
 public:
  WindowedOp(OpKernelConstruction& c, StatusOr<WindowAttrs> attrs) : OpKernel(c) {
    if (attrs.ok()) {
      attrs_ = std::move(attrs).value();
    } else {
      c.SetStatus(attrs.status());
    }
  }

 protected:
  WindowAttrs attrs_;
};

}  // namespace tfd::kernels::nn
