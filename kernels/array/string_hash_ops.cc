// StringToHashBucketFast: string features hashed into num_buckets buckets,
// Fingerprint64(s) % num_buckets, the bucket TensorFlow gives the same string.
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/fingerprint.h"

namespace tfd::kernels::array {
namespace {

class StringToHashBucketFastOp : public OpKernel {
 public:
  explicit StringToHashBucketFastOp(OpKernelConstruction& c) : OpKernel(c) {
    int64_t buckets = 0;
    c.SetStatus(c.GetAttr("num_buckets", &buckets));
    num_buckets_ = static_cast<uint64_t>(buckets);  // >= 1: the op def's minimum
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, input.shape(), &out));
    const std::string* in = input.data<std::string>();
    int64_t* buckets = out->data<int64_t>();
    for (int64_t i = 0; i < input.num_elements(); ++i) {
      buckets[i] = static_cast<int64_t>(Fingerprint64(in[i]) % num_buckets_);
    }
  }

 private:
  uint64_t num_buckets_ = 1;
};

}  // namespace

Status RegisterStringHashOps(OpRegistry& r) {
  return r.Add<StringToHashBucketFastOp>(
      OpDefBuilder("StringToHashBucketFast")
          .Input("input: string")
          .Output("output: int64")
          .Attr("num_buckets: int >= 1")
          .Doc("Each string's bucket: FarmHash Fingerprint64 of its bytes modulo num_buckets, "
               "as TensorFlow computes it (the same string gets the same bucket on every host "
               "and in TF). Not a defence against strings chosen to collide. Shape: input's."),
      shape_fns::UnchangedShape);
}

}  // namespace tfd::kernels::array
