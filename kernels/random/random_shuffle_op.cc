// RandomShuffle: a uniformly random permutation of a tensor's rows (its
// first dimension), of any dtype, drawn from the kernel's seeded stream.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernels/random/random_ops_internal.h"

namespace tfd::kernels::random {
namespace {

// out row i = in row perm[i]; rows hold row_size elements.
template <typename T>
void GatherRows(const Tensor& in, const std::vector<int64_t>& perm, int64_t row_size, Tensor& out) {
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  for (size_t i = 0; i < perm.size(); ++i) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      std::memcpy(dst + i * row_size, src + perm[i] * row_size, row_size * sizeof(T));
    } else {
      std::copy_n(src + perm[i] * row_size, row_size, dst + i * row_size);
    }
  }
}

class RandomShuffleOp : public RandomOpBase {
 public:
  using RandomOpBase::RandomOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(0);
    // Nothing to permute: pass the input through, drawing no randomness.
    if (value.rank() == 0 || value.dim(0) <= 1) {
      ctx.set_output(0, value);
      return;
    }
    const int64_t rows = value.dim(0);
    const int64_t row_size = value.num_elements() / rows;

    // Fisher-Yates, one 64-bit draw per swap.
    std::vector<int64_t> perm(rows);
    std::iota(perm.begin(), perm.end(), int64_t{0});
    RandomBits bits = stream().Reserve(2 * static_cast<uint64_t>(rows - 1));
    for (int64_t i = rows - 1; i > 0; --i) {
      const int64_t j = static_cast<int64_t>(bits.Next64() % static_cast<uint64_t>(i + 1));
      std::swap(perm[i], perm[j]);
    }

    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, value.shape(), &out));
    if (row_size == 0) return;
    TFD_SWITCH_ALL(value.dtype(), T, (GatherRows<T>(value, perm, row_size, *out)),
                   ctx.SetStatus(errors::InvalidArgument("cannot shuffle ", value.Describe()));
                   return;)
  }
};

}  // namespace

Status RegisterShuffleOps(OpRegistry& r) {
  return r.Add<RandomShuffleOp>(
      OpDefBuilder("RandomShuffle")
          .Input("value: T")
          .Output("output: T")
          .Attr("seed: int = 0")
          .Attr("seed2: int = 0")
          .Attr("T: type")
          .SetIsStateful()
          .Doc("A uniformly random permutation of value along its first dimension; a scalar "
               "or a single row passes through. Seeds as RandomUniform. Shape: unchanged."),
      shape_fns::UnchangedShape);
}

}  // namespace tfd::kernels::random
