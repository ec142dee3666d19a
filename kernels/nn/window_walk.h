// Walking the windows of a 2-D windowed op (window_geometry.h): output
// pixels one after another, and the taps of each pixel's window that fall
// inside the image (those on the padding are skipped).
//
//   PixelCursor at(g, first_pixel);
//   for (int64_t p = first_pixel; p < last_pixel; ++p, at.Next()) {
//     ForEachTap(g, at, [&](int64_t tap, int64_t in_pixel) { ... });
//   }
//
// Thread-safety: values; a cursor belongs to one thread.
#pragma once

#include <cstdint>

#include "kernels/nn/window_geometry.h"

namespace tfd::kernels::nn {

// The output pixel (image, row, col) of a flat output pixel index, moved
// forward one pixel at a time.
struct PixelCursor {
  const ConvGeometry& g;
  int64_t n, oh, ow;

  PixelCursor(const ConvGeometry& geometry, int64_t pixel) : g(geometry) {
    ow = pixel % g.out_cols();
    oh = pixel / g.out_cols() % g.out_rows();
    n = pixel / (g.out_cols() * g.out_rows());
  }
  void Next() {
    if (++ow < g.out_cols()) return;
    ow = 0;
    if (++oh < g.out_rows()) return;
    oh = 0;
    ++n;
  }
  // Where the window starts in the input (negative on the padding).
  int64_t first_in_row() const { return oh * g.rows.stride - g.rows.pad_before; }
  int64_t first_in_col() const { return ow * g.cols.stride - g.cols.pad_before; }
  // The first input pixel of the cursor's image, as a flat pixel index.
  int64_t image_pixel_base() const { return n * g.in_rows * g.in_cols; }
};

// fn(tap, in_pixel) for each tap of `at`'s window inside the image, in
// row-major window order: tap = kh * window_cols + kw, in_pixel = the tap's
// input pixel as a flat index over the whole batch (n, ih, iw).
template <typename F>
void ForEachTap(const ConvGeometry& g, const PixelCursor& at, F&& fn) {
  const int64_t base = at.image_pixel_base();
  for (int64_t kh = 0; kh < g.rows.window; ++kh) {
    const int64_t ih = at.first_in_row() + kh * g.rows.dilation;
    if (ih < 0 || ih >= g.in_rows) continue;
    for (int64_t kw = 0; kw < g.cols.window; ++kw) {
      const int64_t iw = at.first_in_col() + kw * g.cols.dilation;
      if (iw < 0 || iw >= g.in_cols) continue;
      fn(kh * g.cols.window + kw, base + ih * g.in_cols + iw);
    }
  }
}

// fn(tap, in_pixel) for every tap of `at`'s window, in row-major window
// order, with in_pixel -1 for a tap on the padding: for kernels that must
// multiply the padding's zeros (0 * inf is NaN) as Conv2D's GEMM does.
template <typename F>
void ForEachTapOrPad(const ConvGeometry& g, const PixelCursor& at, F&& fn) {
  const int64_t base = at.image_pixel_base();
  for (int64_t kh = 0; kh < g.rows.window; ++kh) {
    const int64_t ih = at.first_in_row() + kh * g.rows.dilation;
    const bool row_inside = ih >= 0 && ih < g.in_rows;
    for (int64_t kw = 0; kw < g.cols.window; ++kw) {
      const int64_t iw = at.first_in_col() + kw * g.cols.dilation;
      const bool inside = row_inside && iw >= 0 && iw < g.in_cols;
      fn(kh * g.cols.window + kw, inside ? base + ih * g.in_cols + iw : int64_t{-1});
    }
  }
}

}  // namespace tfd::kernels::nn
