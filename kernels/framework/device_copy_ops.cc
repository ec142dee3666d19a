// _CopyToDevice and _CopyToHost: what the runtime inserts where a tensor
// crosses between host and device memory. Defined on every build so that a
// graph holding them always loads; only a build with CUDA has kernels.
#include "common/op_kernel.h"
#include "kernels/framework/framework_ops.h"

namespace tfd::kernels {

Status RegisterDeviceCopyOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Register(OpDefBuilder(kCopyToDeviceOp)
                                     .Input("input: T")
                                     .Output("output: T")
                                     .Attr("T: type")
                                     .Doc("input, in host memory, copied to the node's device."),
                                 shape_fns::UnchangedShape));
  return r.Register(OpDefBuilder(kCopyToHostOp)
                        .Input("input: T")
                        .Output("output: T")
                        .Attr("T: type")
                        .Doc("input, in the node's device memory, copied to host memory."),
                    shape_fns::UnchangedShape);
}

}  // namespace tfd::kernels
