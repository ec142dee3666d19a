// Sums of many floating-point values that stay accurate: pairwise summation.
//
// Adding n float32 values one after another loses about n * 2^-24 of the
// result in the worst case, and in practice too once the running sum dwarfs
// each value: 10^8 copies of 0.1f sum to 12% too much with Eigen's running
// sums. Here the values are cut into blocks of kPairwiseBlock, each summed in
// eight interleaved lanes (which the compiler vectorises), and the block sums
// are added in a balanced binary tree, so the error grows with log2(n) instead
// of n — what numpy does, and as fast as a plain loop, since summing is bound
// by memory. Column sums do the same along the rows.
//
//   float s = PairwiseSum(x, n);                      // all of x
//   float q = PairwiseSumOfSquares(x, n);             // L2Loss
//   PairwiseRowSums(x, rows, cols, out);              // out[r] = sum of row r
//   PairwiseColumnSums(x, rows, cols, out);           // out[c] = sum of column c
//
// x is row-major and contiguous; out must not overlap it. Integer sums are
// exact in any order, so callers use these for floating-point types only.
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tfd::kernels {

// Values summed in lanes before the tree takes over. 128 keeps 10^8 float32
// values within 2e-7 of the exact sum (1024 would allow 1e-6).
inline constexpr int64_t kPairwiseBlock = 128;
// Rows added into a column sum before the tree takes over: in fours, added
// pairwise first, so each column is a running sum of at most 32 terms. A
// batch of 100 is then one block, summed as fast as Eigen's colwise().sum().
inline constexpr int64_t kPairwiseRows = 128;

namespace pairwise_internal {

// The sum of f(x[i]) over at most kPairwiseBlock values.
// The lanes start at -0, the one value that adds nothing: a sum of -0s is
// -0, as numpy's (+0 would turn it into +0). Nothing at all sums to +0.
template <typename T, typename F>
T BlockSum(const T* x, int64_t n, const F& f) {
  if (n == 0) return T(0);
  constexpr int kLanes = 8;
  T lane[kLanes];
  std::fill(lane, lane + kLanes, -T(0));
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] += f(x[i + j]);
  }
  T tail = -T(0);
  for (; i < n; ++i) tail += f(x[i]);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) +
         tail;
}

template <typename T, typename F>
T Sum(const T* x, int64_t n, const F& f) {
  if (n <= kPairwiseBlock) return BlockSum(x, n, f);
  // Split on a block boundary so that every leaf but the last is whole.
  const int64_t half = (n / kPairwiseBlock + 1) / 2 * kPairwiseBlock;
  return Sum(x, half, f) + Sum(x + half, n - half, f);
}

// out = the column sums of rows [0, rows) of x (rows >= 1); `scratch` has
// room for one row per level of the tree below.
template <typename T>
void ColumnSums(const T* __restrict x, int64_t rows, int64_t cols, T* __restrict out,
                T* __restrict scratch) {
  if (rows > kPairwiseRows) {
    const int64_t half = (rows / kPairwiseRows + 1) / 2 * kPairwiseRows;
    ColumnSums(x, half, cols, out, scratch);
    ColumnSums(x + half * cols, rows - half, cols, scratch, scratch + cols);
    for (int64_t c = 0; c < cols; ++c) out[c] += scratch[c];
    return;
  }
  // Plain loops along the rows, which the compiler vectorises; four rows at
  // a time halve the loads and stores of `out` and add pairwise at the bottom.
  int64_t r = 0;
  if (rows >= 4) {
    const T *a = x, *b = a + cols, *c2 = b + cols, *d = c2 + cols;
    for (int64_t c = 0; c < cols; ++c) out[c] = (a[c] + b[c]) + (c2[c] + d[c]);
    r = 4;
  } else {
    for (int64_t c = 0; c < cols; ++c) out[c] = x[c];
    r = 1;
  }
  for (; r + 4 <= rows; r += 4) {
    const T *a = x + r * cols, *b = a + cols, *c2 = b + cols, *d = c2 + cols;
    for (int64_t c = 0; c < cols; ++c) out[c] += (a[c] + b[c]) + (c2[c] + d[c]);
  }
  for (; r < rows; ++r) {
    const T* a = x + r * cols;
    for (int64_t c = 0; c < cols; ++c) out[c] += a[c];
  }
}

}  // namespace pairwise_internal

template <typename T>
T PairwiseSum(const T* x, int64_t n) {
  return pairwise_internal::Sum(x, n, [](T v) { return v; });
}

template <typename T>
T PairwiseSumOfSquares(const T* x, int64_t n) {
  return pairwise_internal::Sum(x, n, [](T v) { return v * v; });
}

template <typename T>
void PairwiseRowSums(const T* x, int64_t rows, int64_t cols, T* out) {
  for (int64_t r = 0; r < rows; ++r) out[r] = PairwiseSum(x + r * cols, cols);
}

template <typename T>
void PairwiseColumnSums(const T* x, int64_t rows, int64_t cols, T* out) {
  if (rows == 0) {
    for (int64_t c = 0; c < cols; ++c) out[c] = T(0);
    return;
  }
  int64_t levels = 1;
  for (int64_t blocks = (rows + kPairwiseRows - 1) / kPairwiseRows; blocks > 1;
       blocks = (blocks + 1) / 2) {
    ++levels;
  }
  // A few rows of scratch for all but huge tables: no allocation for them.
  constexpr int64_t kOnStack = 1024;
  T on_stack[kOnStack];
  std::vector<T> on_heap;
  T* scratch = on_stack;
  if (cols * levels > kOnStack) {
    on_heap.resize(static_cast<std::size_t>(cols * levels));
    scratch = on_heap.data();
  }
  pairwise_internal::ColumnSums<T>(x, rows, cols, out, scratch);
}

}  // namespace tfd::kernels
