// The sampling ops: RandomStandardNormal, TruncatedNormal, RandomUniform and
// RandomUniformInt. Each fills a tensor of the shape its "shape" input holds
// from the kernel's own seeded stream.
#include <cmath>

#include "kernels/random/random_ops_internal.h"

namespace tfd::kernels::random {
namespace {

// Each distribution says how many stream words n samples of dtype `d` take
// (an upper bound where sampling rejects) and fills the output from them.

struct StandardNormal {
  static uint64_t Words(int64_t n, DType) { return 4 * static_cast<uint64_t>((n + 1) / 2); }
  template <typename T>
  static void Fill(RandomBits& bits, T* out, int64_t n) {
    for (int64_t i = 0; i < n; i += 2) {
      const auto [z0, z1] = BoxMuller(bits.Next64(), bits.Next64());
      out[i] = static_cast<T>(z0);
      if (i + 1 < n) out[i + 1] = static_cast<T>(z1);
    }
  }
};

// Normal samples with |x| >= 2 are dropped and drawn again, as TensorFlow's
// TruncatedNormal does, leaving a standard deviation of about 0.88.
struct TruncatedNormal {
  // About 4.6% of draws are rejected, so n samples need ~0.52 n pairs; a
  // pair per sample plus slack makes running past the reservation (into
  // the next run's words, harmlessly) astronomically unlikely.
  static uint64_t Words(int64_t n, DType) {
    return n == 0 ? 0 : 4 * (static_cast<uint64_t>(n) + 16);
  }
  template <typename T>
  static void Fill(RandomBits& bits, T* out, int64_t n) {
    int64_t i = 0;
    while (i < n) {
      const auto [z0, z1] = BoxMuller(bits.Next64(), bits.Next64());
      // Test after rounding to T: a double just under 2 may round to 2.0f.
      for (const double z : {z0, z1}) {
        const T v = static_cast<T>(z);
        if (i < n && std::abs(v) < T(2)) out[i++] = v;
      }
    }
  }
};

struct Uniform {
  static uint64_t Words(int64_t n, DType d) {
    return static_cast<uint64_t>(n) * (d == DType::kFloat64 ? 2 : 1);
  }
  template <typename T>
  static void Fill(RandomBits& bits, T* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        out[i] = UniformFloat(bits.Next32());
      } else {
        out[i] = UniformDouble(bits.Next64());
      }
    }
  }
};

template <typename Dist>
class RandomSampleOp : public RandomOpBase {
 public:
  using RandomOpBase::RandomOpBase;

  void Compute(OpKernelContext& ctx) override {
    auto shape = ShapeFromTensor(ctx.input(0));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    const int64_t n = out->num_elements();
    RandomBits bits = stream().Reserve(Dist::Words(n, out->dtype()));
    TFD_SWITCH_FLOAT(
        out->dtype(), T, (Dist::template Fill<T>(bits, out->data<T>(), n)),
        ctx.SetStatus(errors::InvalidArgument("unsupported dtype ", DTypeName(out->dtype())));
        return;)
  }
};

// minval + (64 random bits mod (maxval - minval)), as TensorFlow computes
// it; the modulo bias is below 2^-32 for int32 ranges.
template <typename T>
void FillUniformInt(RandomBits& bits, T lo, T hi, T* out, int64_t n) {
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(static_cast<uint64_t>(lo) + bits.Next64() % range);
  }
}

class RandomUniformIntOp : public RandomOpBase {
 public:
  using RandomOpBase::RandomOpBase;

  void Compute(OpKernelContext& ctx) override {
    auto shape = ShapeFromTensor(ctx.input(0));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    const Tensor& minval = ctx.input(1);
    const Tensor& maxval = ctx.input(2);
    TFD_OP_REQUIRES(
        ctx, minval.rank() == 0 && maxval.rank() == 0,
        errors::InvalidArgument("minval and maxval must be scalars, got shapes ",
                                minval.shape().ToString(), " and ", maxval.shape().ToString()));
    const bool is32 = minval.dtype() == DType::kInt32;
    const int64_t lo = is32 ? minval.scalar<int32_t>() : minval.scalar<int64_t>();
    const int64_t hi = is32 ? maxval.scalar<int32_t>() : maxval.scalar<int64_t>();
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    const int64_t n = out->num_elements();
    // An empty output needs no valid range, as in TensorFlow.
    if (n == 0) return;
    TFD_OP_REQUIRES(
        ctx, lo < hi,
        errors::InvalidArgument("need minval < maxval, got minval ", lo, " and maxval ", hi));
    RandomBits bits = stream().Reserve(2 * static_cast<uint64_t>(n));
    if (is32) {
      FillUniformInt<int32_t>(bits, static_cast<int32_t>(lo), static_cast<int32_t>(hi),
                              out->data<int32_t>(), n);
    } else {
      FillUniformInt<int64_t>(bits, lo, hi, out->data<int64_t>(), n);
    }
  }
};

OpDefBuilder SampleOpDef(const char* name, const char* doc) {
  OpDefBuilder b(name);
  b.Input("shape: T")
      .Output("output: dtype")
      .Attr("seed: int = 0")
      .Attr("seed2: int = 0")
      .Attr("dtype: {float32, float64}")
      .Attr("T: {int32, int64}")
      .SetIsStateful()
      .Doc(std::string(doc) +
           " Successive runs continue one stream fixed by (seed, seed2); both 0 means a "
           "different stream each time. Shape: the value of the shape input.");
  return b;
}

Status SampleShape(InferenceContext& c) { return ShapeFromShapeInput(c, 0, 0); }

Status UniformIntShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 0));
  return ShapeFromShapeInput(c, 0, 0);
}

}  // namespace

Status RegisterSampleOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<RandomSampleOp<StandardNormal>>(
      SampleOpDef("RandomStandardNormal", "Samples from the normal distribution N(0, 1)."),
      SampleShape));
  TFD_RETURN_IF_ERROR(r.Add<RandomSampleOp<TruncatedNormal>>(
      SampleOpDef("TruncatedNormal",
                  "Samples from N(0, 1), drawing again any value 2 or more standard deviations "
                  "from the mean."),
      SampleShape));
  TFD_RETURN_IF_ERROR(r.Add<RandomSampleOp<Uniform>>(
      SampleOpDef("RandomUniform", "Samples uniformly from [0, 1)."), SampleShape));
  TFD_RETURN_IF_ERROR(r.Add<RandomUniformIntOp>(
      OpDefBuilder("RandomUniformInt")
          .Input("shape: T")
          .Input("minval: Tout")
          .Input("maxval: Tout")
          .Output("output: Tout")
          .Attr("seed: int = 0")
          .Attr("seed2: int = 0")
          .Attr("Tout: {int32, int64}")
          .Attr("T: {int32, int64}")
          .SetIsStateful()
          .Doc("Samples integers uniformly from [minval, maxval); minval < maxval unless the "
               "output is empty. Seeds as RandomUniform. Shape: the value of the shape input; "
               "minval and maxval are scalars."),
      UniformIntShape));
  return OkStatus();
}

}  // namespace tfd::kernels::random
