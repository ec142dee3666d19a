#include "kernels/nn/conv_gemm.h"

#include <Eigen/Core>
#include <algorithm>
#include <memory>
#include <vector>

#include "kernels/nn/parallel_shards.h"
#include "kernels/nn/window_walk.h"

namespace tfd::kernels::nn {
namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;
template <typename T>
using MatrixMap = Eigen::Map<RowMatrix<T>>;

// Bytes of patches copied per GEMM: enough rows to amortise packing the
// filter, few enough that the block is still in L2 when the GEMM reads it.
constexpr int64_t kBlockBytes = 256 << 10;

template <typename T>
int64_t BlockRows(int64_t patch) {
  return std::clamp<int64_t>(kBlockBytes / (patch * static_cast<int64_t>(sizeof(T))), 8, 4096);
}

// The patch matrix is the input itself: a 1x1 window moved one pixel at a
// time never pads (SAME or VALID) nor skips a pixel.
bool IsPointwise(const ConvGeometry& g) {
  return g.rows.window == 1 && g.cols.window == 1 && g.rows.stride == 1 && g.cols.stride == 1;
}

// Uninitialised scratch: every element is written before it is read.
template <typename T>
std::unique_ptr<T[]> Scratch(int64_t n) {
  return std::make_unique_for_overwrite<T[]>(static_cast<size_t>(std::max<int64_t>(n, 1)));
}

// The window taps [lo, hi) of one row of a patch that fall inside the
// image (undilated columns), for a window starting at column `iw0`.
std::pair<int64_t, int64_t> InsideCols(const ConvGeometry& g, int64_t iw0) {
  const int64_t kw = g.cols.window;
  const int64_t lo = std::clamp<int64_t>(-iw0, 0, kw);
  const int64_t hi = std::clamp<int64_t>(g.in_cols - iw0, lo, kw);
  return {lo, hi};
}

// Copies the patch of pixel `at` into dst (patch_size elements).
template <typename T>
void FillPatch(const ConvGeometry& g, const T* input, const PixelCursor& at, T* dst) {
  const int64_t depth = g.in_depth, kw = g.cols.window, row_len = kw * depth;
  const int64_t iw0 = at.first_in_col();
  const T* image = input + at.n * g.in_rows * g.in_cols * depth;
  for (int64_t kh = 0; kh < g.rows.window; ++kh, dst += row_len) {
    const int64_t ih = at.first_in_row() + kh * g.rows.dilation;
    if (ih < 0 || ih >= g.in_rows) {
      std::fill(dst, dst + row_len, T(0));
      continue;
    }
    const T* row = image + ih * g.in_cols * depth;
    if (g.cols.dilation == 1) {  // the taps inside the image are one run
      const auto [lo, hi] = InsideCols(g, iw0);
      std::fill(dst, dst + lo * depth, T(0));
      std::copy(row + (iw0 + lo) * depth, row + (iw0 + hi) * depth, dst + lo * depth);
      std::fill(dst + hi * depth, dst + row_len, T(0));
      continue;
    }
    for (int64_t k = 0; k < kw; ++k) {
      const int64_t iw = iw0 + k * g.cols.dilation;
      T* d = dst + k * depth;
      if (iw < 0 || iw >= g.in_cols) {
        std::fill(d, d + depth, T(0));
      } else {
        std::copy(row + iw * depth, row + (iw + 1) * depth, d);
      }
    }
  }
}

// Adds a patch's gradient (patch_size elements) into the input gradient at
// the pixels the patch of `at` covers; what fell on the padding is dropped.
template <typename T>
void AddPatch(const ConvGeometry& g, const T* src, const PixelCursor& at, T* in_backprop) {
  const int64_t depth = g.in_depth;
  ForEachTap(g, at, [&](int64_t tap, int64_t pixel) {
    T* d = in_backprop + pixel * depth;
    const T* s = src + tap * depth;
    for (int64_t c = 0; c < depth; ++c) d[c] += s[c];
  });
}

// The patches of pixels [first, first + rows) as the rows of `cols`.
template <typename T>
void Im2Col(const ConvGeometry& g, const T* input, int64_t first, int64_t rows, T* cols) {
  PixelCursor at(g, first);
  const int64_t patch = g.patch_size();
  for (int64_t r = 0; r < rows; ++r, at.Next()) FillPatch(g, input, at, cols + r * patch);
}

// Pixels [first, last) of the forward, in blocks.
template <typename T>
void ForwardPixels(const ConvGeometry& g, const T* input, const T* filter, T* output,
                   int64_t first, int64_t last) {
  const int64_t patch = g.patch_size(), depth = g.out_depth;
  const ConstMatrixMap<T> w(filter, patch, depth);
  const int64_t block = BlockRows<T>(patch);
  auto cols = Scratch<T>(std::min(block, last - first) * patch);
  for (int64_t p = first; p < last; p += block) {
    const int64_t rows = std::min(block, last - p);
    Im2Col(g, input, p, rows, cols.get());
    MatrixMap<T>(output + p * depth, rows, depth).noalias() =
        ConstMatrixMap<T>(cols.get(), rows, patch) * w;
  }
}

// acc = the filter gradient from pixels [first, last).
template <typename T>
void FilterGradPixels(const ConvGeometry& g, const T* input, const T* out_backprop, T* acc,
                      int64_t first, int64_t last) {
  const int64_t patch = g.patch_size(), depth = g.out_depth;
  MatrixMap<T> dw(acc, patch, depth);
  dw.setZero();
  if (IsPointwise(g)) {
    dw.noalias() += ConstMatrixMap<T>(input + first * patch, last - first, patch).transpose() *
                    ConstMatrixMap<T>(out_backprop + first * depth, last - first, depth);
    return;
  }
  const int64_t block = BlockRows<T>(patch);
  auto cols = Scratch<T>(std::min(block, last - first) * patch);
  for (int64_t p = first; p < last; p += block) {
    const int64_t rows = std::min(block, last - p);
    Im2Col(g, input, p, rows, cols.get());
    dw.noalias() += ConstMatrixMap<T>(cols.get(), rows, patch).transpose() *
                    ConstMatrixMap<T>(out_backprop + p * depth, rows, depth);
  }
}

// The input gradient of images [first, last): zeroed, then each block's
// patch gradients (out_backprop x filter^T) added where the patches lie.
template <typename T>
void InputGradImages(const ConvGeometry& g, const T* filter, const T* out_backprop,
                     T* in_backprop, int64_t first, int64_t last) {
  const int64_t patch = g.patch_size(), depth = g.out_depth;
  const int64_t image_size = g.in_rows * g.in_cols * g.in_depth;
  const int64_t image_pixels = g.out_rows() * g.out_cols();
  std::fill(in_backprop + first * image_size, in_backprop + last * image_size, T(0));
  const ConstMatrixMap<T> w(filter, patch, depth);
  const int64_t block = BlockRows<T>(patch);
  const int64_t end = last * image_pixels;  // a block may span several images
  auto cols = Scratch<T>(std::min(block, end - first * image_pixels) * patch);
  for (int64_t p = first * image_pixels; p < end; p += block) {
    const int64_t rows = std::min(block, end - p);
    MatrixMap<T>(cols.get(), rows, patch).noalias() =
        ConstMatrixMap<T>(out_backprop + p * depth, rows, depth) * w.transpose();
    PixelCursor at(g, p);
    for (int64_t r = 0; r < rows; ++r, at.Next()) {
      AddPatch(g, cols.get() + r * patch, at, in_backprop);
    }
  }
}

double Macs(const ConvGeometry& g) {
  return static_cast<double>(g.out_pixels()) * static_cast<double>(g.patch_size()) *
         static_cast<double>(g.out_depth);
}

}  // namespace

template <typename T>
void ConvForward(const ConvGeometry& g, const T* input, const T* filter, T* output,
                 const IntraOpPool* pool) {
  const int64_t pixels = g.out_pixels(), patch = g.patch_size(), depth = g.out_depth;
  if (pixels == 0 || depth == 0) return;
  if (patch == 0) {  // no input channels: every output is an empty sum
    std::fill(output, output + pixels * depth, T(0));
    return;
  }
  ParallelFor(pool, pixels, Macs(g), [&](int64_t first, int64_t last) {
    if (IsPointwise(g)) {
      MatrixMap<T>(output + first * depth, last - first, depth).noalias() =
          ConstMatrixMap<T>(input + first * patch, last - first, patch) *
          ConstMatrixMap<T>(filter, patch, depth);
    } else {
      ForwardPixels(g, input, filter, output, first, last);
    }
  });
}

template <typename T>
void ConvBackpropInput(const ConvGeometry& g, const T* filter, const T* out_backprop,
                       T* in_backprop, const IntraOpPool* pool) {
  const int64_t image_size = g.in_rows * g.in_cols * g.in_depth;
  if (g.out_pixels() == 0 || g.out_depth == 0 || g.patch_size() == 0) {
    std::fill(in_backprop, in_backprop + g.batch * image_size, T(0));
    return;
  }
  if (IsPointwise(g)) {  // [pixels, depth] x filter^T; every element written
    const int64_t patch = g.patch_size(), depth = g.out_depth;
    ParallelFor(pool, g.out_pixels(), Macs(g), [&](int64_t first, int64_t last) {
      MatrixMap<T>(in_backprop + first * patch, last - first, patch).noalias() =
          ConstMatrixMap<T>(out_backprop + first * depth, last - first, depth) *
          ConstMatrixMap<T>(filter, patch, depth).transpose();
    });
    return;
  }
  // TODO(perf): a batch of one image runs on one thread; splitting an image
  // into bands of rows would need the bands' overlap added afterwards.
  ParallelFor(pool, g.batch, Macs(g), [&](int64_t first, int64_t last) {
    InputGradImages(g, filter, out_backprop, in_backprop, first, last);
  });
}

template <typename T>
void ConvBackpropFilter(const ConvGeometry& g, const T* input, const T* out_backprop,
                        T* filter_backprop, const IntraOpPool* pool) {
  const int64_t patch = g.patch_size(), depth = g.out_depth, pixels = g.out_pixels();
  if (patch == 0 || depth == 0) return;
  // Each shard sums its pixels' contributions into its own [patch, depth]
  // matrix (shard 0 into the output); the partial sums are added in order.
  const int64_t shards = NumShards(pool, pixels, Macs(g));
  std::vector<std::unique_ptr<T[]>> partial(shards);
  for (int64_t s = 1; s < shards; ++s) partial[s] = Scratch<T>(patch * depth);
  RunShards(pool, shards, [&](int64_t s) {
    const auto [first, last] = ShardRange(pixels, shards, s);
    FilterGradPixels(g, input, out_backprop, s == 0 ? filter_backprop : partial[s].get(), first,
                     last);
  });
  MatrixMap<T> dw(filter_backprop, patch, depth);
  for (int64_t s = 1; s < shards; ++s) dw += ConstMatrixMap<T>(partial[s].get(), patch, depth);
}

#define TFD_INSTANTIATE_CONV(T)                                                                 \
  template void ConvForward<T>(const ConvGeometry&, const T*, const T*, T*, const IntraOpPool*); \
  template void ConvBackpropInput<T>(const ConvGeometry&, const T*, const T*, T*,               \
                                     const IntraOpPool*);                                       \
  template void ConvBackpropFilter<T>(const ConvGeometry&, const T*, const T*, T*,              \
                                      const IntraOpPool*);
TFD_INSTANTIATE_CONV(float)
TFD_INSTANTIATE_CONV(double)
#undef TFD_INSTANTIATE_CONV

}  // namespace tfd::kernels::nn
