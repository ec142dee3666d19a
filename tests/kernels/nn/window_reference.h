// Float64 references for the 2-D windowed kernels (convolutions, pooling),
// written as the naive loops of their definitions, and the comparison the
// tests hold the kernels to: NaN where the reference is NaN, the same
// infinity where it is infinite, else within a tolerance scaled by the sum
// of the magnitudes of the terms (so a cancelling sum is not held to a
// relative error it cannot have) and wide enough for float32's rounding.
//
// The geometry is computed here from TensorFlow's documented rules, not
// with the kernels' window_geometry.h, so that the two can disagree.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/kernels/nn/nn_test_util.h"

namespace tfd::testing::nn {

// One spatial dimension: TensorFlow's GetWindowedOutputSize.
struct RefDim {
  int64_t in, k, stride, dilation, out, pad;
  RefDim(int64_t in_, int64_t k_, int64_t stride_, int64_t dilation_, bool same)
      : in(in_), k(k_), stride(stride_), dilation(dilation_) {
    const int64_t span = (k - 1) * dilation + 1;
    if (same) {
      out = (in + stride - 1) / stride;
      pad = std::max<int64_t>(0, (out - 1) * stride + span - in) / 2;
    } else {
      out = (in - span) / stride + 1;
      pad = 0;
    }
  }
  // The input index of tap `t` of output `o`; may lie on the padding.
  int64_t At(int64_t o, int64_t t) const { return o * stride - pad + t * dilation; }
  bool Inside(int64_t i) const { return i >= 0 && i < in; }
};

// An NHWC windowed op's shapes: input [n, rows.in, cols.in, depth].
struct RefGeometry {
  int64_t n, depth;
  RefDim rows, cols;
  int64_t InIndex(int64_t b, int64_t r, int64_t c, int64_t d) const {
    return ((b * rows.in + r) * cols.in + c) * depth + d;
  }
  TensorShape InShape() const { return TensorShape({n, rows.in, cols.in, depth}); }
  TensorShape OutShape(int64_t out_depth) const {
    return TensorShape({n, rows.out, cols.out, out_depth});
  }
};

// A reference value and the sum of its terms' magnitudes.
struct RefValues {
  std::vector<double> value, magnitude;
  std::vector<int64_t> terms;
  explicit RefValues(int64_t n) : value(n, 0.0), magnitude(n, 0.0), terms(n, 0) {}
  void Add(int64_t i, double term) {
    value[i] += term;
    magnitude[i] += std::abs(term);
    ++terms[i];
  }
};

// Conv2D: the padding holds zeros, which enter the sum as 0 * w (as in
// TensorFlow's Eigen kernel: an infinite weight beside the padding gives NaN).
inline RefValues RefConv(const RefGeometry& g, const std::vector<double>& x,
                         const std::vector<double>& f, int64_t out_depth) {
  RefValues y(g.n * g.rows.out * g.cols.out * out_depth);
  int64_t o = 0;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t r = 0; r < g.rows.out; ++r)
      for (int64_t c = 0; c < g.cols.out; ++c)
        for (int64_t od = 0; od < out_depth; ++od, ++o)
          for (int64_t kr = 0; kr < g.rows.k; ++kr)
            for (int64_t kc = 0; kc < g.cols.k; ++kc)
              for (int64_t d = 0; d < g.depth; ++d) {
                const int64_t ir = g.rows.At(r, kr), ic = g.cols.At(c, kc);
                const double xv =
                    g.rows.Inside(ir) && g.cols.Inside(ic) ? x[g.InIndex(b, ir, ic, d)] : 0.0;
                y.Add(o, xv * f[((kr * g.cols.k + kc) * g.depth + d) * out_depth + od]);
              }
  return y;
}

// d sum(Conv2D(x, f) * dy) / dx: the taps on the padding have no input.
inline RefValues RefConvInputGrad(const RefGeometry& g, const std::vector<double>& f,
                                  const std::vector<double>& dy, int64_t out_depth) {
  RefValues dx(g.n * g.rows.in * g.cols.in * g.depth);
  int64_t o = 0;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t r = 0; r < g.rows.out; ++r)
      for (int64_t c = 0; c < g.cols.out; ++c)
        for (int64_t od = 0; od < out_depth; ++od, ++o)
          for (int64_t kr = 0; kr < g.rows.k; ++kr)
            for (int64_t kc = 0; kc < g.cols.k; ++kc) {
              const int64_t ir = g.rows.At(r, kr), ic = g.cols.At(c, kc);
              if (!g.rows.Inside(ir) || !g.cols.Inside(ic)) continue;
              for (int64_t d = 0; d < g.depth; ++d) {
                dx.Add(g.InIndex(b, ir, ic, d),
                       dy[o] * f[((kr * g.cols.k + kc) * g.depth + d) * out_depth + od]);
              }
            }
  return dx;
}

// d sum(Conv2D(x, f) * dy) / df, the padding's zeros included as in RefConv.
inline RefValues RefConvFilterGrad(const RefGeometry& g, const std::vector<double>& x,
                                   const std::vector<double>& dy, int64_t out_depth) {
  RefValues df(g.rows.k * g.cols.k * g.depth * out_depth);
  int64_t o = 0;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t r = 0; r < g.rows.out; ++r)
      for (int64_t c = 0; c < g.cols.out; ++c)
        for (int64_t od = 0; od < out_depth; ++od, ++o)
          for (int64_t kr = 0; kr < g.rows.k; ++kr)
            for (int64_t kc = 0; kc < g.cols.k; ++kc)
              for (int64_t d = 0; d < g.depth; ++d) {
                const int64_t ir = g.rows.At(r, kr), ic = g.cols.At(c, kc);
                const double xv =
                    g.rows.Inside(ir) && g.cols.Inside(ic) ? x[g.InIndex(b, ir, ic, d)] : 0.0;
                df.Add(((kr * g.cols.k + kc) * g.depth + d) * out_depth + od, xv * dy[o]);
              }
  return df;
}

// Checks a kernel's result against a reference, as the header says.
inline void CheckAgainst(const Tensor& got, const TensorShape& shape, const RefValues& want) {
  REQUIRE(got.shape() == shape);
  const bool f32 = got.dtype() == DType::kFloat32;
  const double rtol = f32 ? 1e-5 : 1e-13;
  const double tiny = f32 ? std::numeric_limits<float>::denorm_min()
                          : std::numeric_limits<double>::denorm_min();
  const std::vector<double> v = Values(got);
  REQUIRE(v.size() == want.value.size());
  int failures = 0;
  for (size_t i = 0; i < v.size() && failures < 5; ++i) {
    const double w = want.value[i];
    bool ok;
    if (std::isnan(w)) {
      ok = std::isnan(v[i]);
    } else if (std::isinf(w)) {
      ok = v[i] == w;
    } else {
      ok = std::abs(v[i] - w) <= rtol * want.magnitude[i] + tiny * (want.terms[i] + 1);
    }
    if (!ok) {
      ++failures;
      FAIL_CHECK("element " << i << ": got " << v[i] << ", want " << w << " (terms' magnitude "
                            << want.magnitude[i] << ")");
    }
  }
}

// The IEEE edge values the kernels must carry as numpy would: infinities,
// NaN, signed zeros and denormals (of float32, so that they stay denormal in
// a float32 tensor; in float64 they are ordinary small numbers).
inline std::vector<double> EdgeValues() {
  const double inf = std::numeric_limits<double>::infinity();
  return {inf,  -inf, std::numeric_limits<double>::quiet_NaN(),
          0.0,  -0.0, static_cast<double>(std::numeric_limits<float>::denorm_min()) * 7,
          -static_cast<double>(std::numeric_limits<float>::min()) / 4};
}

// `n` values in [-1, 1), with the edge values written over every
// `stride`-th one starting at `first` (none when stride is 0).
inline std::vector<double> WithEdges(int64_t n, uint32_t salt, int64_t first, int64_t stride) {
  std::vector<double> v = Spread(n, -1, 1, salt);
  if (stride <= 0) return v;
  const std::vector<double> edges = EdgeValues();
  size_t e = 0;
  for (int64_t i = first; i < n; i += stride, ++e) v[i] = edges[e % edges.size()];
  return v;
}

// The channel counts that cross the kernels' vector blocks (4 and 8 floats,
// 2 and 4 doubles, and their doubles).
inline const std::vector<int64_t>& BlockCrossingDepths() {
  static const std::vector<int64_t> depths = {1, 7, 8, 9, 15, 16, 17};
  return depths;
}

}  // namespace tfd::testing::nn
