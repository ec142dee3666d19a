// ArgMax / ArgMin: the index of the largest (smallest) element along one
// axis; ties go to the first such index, as in TensorFlow.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <type_traits>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/math/math_ops_internal.h"
#include "kernels/math/reduction_util.h"

namespace tfd::kernels {
namespace {

// Whether v replaces best. A NaN beats every number and no NaN beats a NaN,
// so the first NaN wins, as in numpy. (A comparison with a NaN is false, so
// the NaN test runs only where v does not already win.)
template <typename Better, typename T>
bool Beats(const Better& better, T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    return better(v, best) || (std::isnan(v) && !std::isnan(best));
  } else {
    return better(v, best);
  }
}

// Better is std::greater for ArgMax, std::less for ArgMin.
template <typename Better>
class ArgOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto plan = MakeArgReductionPlan(x, ctx.input(1));
    TFD_OP_REQUIRES_OK(ctx, plan.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, plan->output_shape, &out));
    const int64_t outer = plan->outer, n = plan->n, inner = plan->inner;
    TFD_SWITCH_NUMERIC(x.dtype(), T, {
      if (out->dtype() == DType::kInt32) {
        Scan(x.data<T>(), outer, n, inner, out->data<int32_t>());
      } else {
        Scan(x.data<T>(), outer, n, inner, out->data<int64_t>());
      }
    }, {
      ctx.SetStatus(errors::InvalidArgument(node().op, " does not support dtype ",
                                            DTypeName(x.dtype())));
    });
  }

 private:
  // x viewed as [outer, n, inner]; walks each slab row by row so memory is
  // read in order, keeping the best value per inner position.
  template <typename T, typename Index>
  static void Scan(const T* x, int64_t outer, int64_t n, int64_t inner, Index* out) {
    if (inner == 0) return;
    std::vector<T> best(inner);
    const Better better;
    for (int64_t o = 0; o < outer; ++o) {
      const T* slab = x + o * n * inner;
      Index* idx = out + o * inner;
      std::copy(slab, slab + inner, best.begin());
      std::fill(idx, idx + inner, Index{0});
      for (int64_t k = 1; k < n; ++k) {
        const T* row = slab + k * inner;
        for (int64_t j = 0; j < inner; ++j) {
          if (Beats(better, row[j], best[j])) {
            best[j] = row[j];
            idx[j] = static_cast<Index>(k);
          }
        }
      }
    }
  }
};

Status ArgShape(InferenceContext& c) {
  const PartialShape& in = c.input(0);
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  if (!in.rank_known()) return shape_fns::Unknown(c);
  std::optional<std::vector<int64_t>> dim = c.InputAsInts(1);
  if (!dim || dim->size() != 1) {
    c.set_output(0, PartialShape::UnknownOfRank(std::max(in.rank() - 1, 0)));
    return OkStatus();
  }
  const int64_t a = (*dim)[0];
  if (a < -in.rank() || a >= in.rank()) {
    return errors::InvalidArgument("dimension (input 1) must be in [", -in.rank(), ", ",
                                   in.rank(), ") for input of shape ", in.ToString(),
                                   ", got ", a);
  }
  std::vector<int64_t> out = in.dims();
  out.erase(out.begin() + (a < 0 ? a + in.rank() : a));
  c.set_output(0, PartialShape(std::move(out)));
  return OkStatus();
}

template <typename Better>
Status AddArg(OpRegistry& r, const char* name, const char* what) {
  return r.Add<ArgOp<Better>>(
      OpDefBuilder(name)
          .Input("input: T")
          .Input("dimension: Tidx")
          .Output("output: output_type")
          .Attr("T: {float32, float64, int32, int64, uint8}")
          .Attr("Tidx: {int32, int64} = int32")
          .Attr("output_type: {int32, int64} = int64")
          .Doc(std::string("The index of the ") + what +
               " element along axis `dimension` (a scalar in [-rank, rank)); the first on "
               "ties, and the first NaN where there is one (as numpy). The axis must not be "
               "empty. Shape: input's shape without that axis."),
      ArgShape);
}

}  // namespace

Status RegisterArgMinMaxOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddArg<std::greater<>>(r, "ArgMax", "largest"));
  TFD_RETURN_IF_ERROR(AddArg<std::less<>>(r, "ArgMin", "smallest"));
  return OkStatus();
}

}  // namespace tfd::kernels
