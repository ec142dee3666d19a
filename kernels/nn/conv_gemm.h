// Conv2D and its two backprops on the CPU, as im2col + GEMM: the patches of
// a block of output pixels are copied into the rows of a small matrix
// (zeros where a patch hangs over the padding), which one Eigen GEMM
// multiplies with the filter seen as a [patch, out_depth] matrix. A 1x1
// convolution of stride 1 needs no copy: the input is that matrix.
//
// Why a GEMM of copied patches rather than Eigen's Tensor-module
// formulation (input.extract_image_patches(...).reshape(...).contract(
// filter), TensorFlow's SpatialConvolution without its hand-written
// contraction mapper): Eigen's contraction over a lazy patch expression
// gathers every coefficient through index arithmetic as it packs its
// blocks, while a copied block is packed at memory speed and is still in
// cache for the GEMM that follows. Measured once at the Deep MNIST shapes
// (batch 50, SAME 5x5, one thread, float32, best of 7, -march=native on an
// AVX-512 x86-64):
// 28x28x1 -> 32: 2.3 ms here, 14.2 ms for Eigen's expression; 14x14x32 ->
// 64: 9.9 ms here, 23.4 ms for Eigen's.
// TODO(perf): keep that comparison in bench/ (kernel_bench), with torch's.
//
// Blocks of output pixels are independent, so large convolutions are split
// over the task's intra-op threads (parallel_shards.h): the forward by
// pixel ranges, the filter gradient by pixel ranges with one partial sum
// per thread (added in a fixed order), the input gradient by images (their
// patches overlap only within an image).
//
// Thread-safety: pure functions; they block until every shard is done.
#pragma once

#include "kernels/nn/window_geometry.h"

namespace tfd::kernels {
class IntraOpPool;
}  // namespace tfd::kernels

namespace tfd::kernels::nn {

// output [batch, out_rows, out_cols, out_depth] = input (*) filter; input
// [batch, in_rows, in_cols, in_depth], filter [window_rows, window_cols,
// in_depth, out_depth]. `pool` may be null (one thread).
template <typename T>
void ConvForward(const ConvGeometry& g, const T* input, const T* filter, T* output,
                 const IntraOpPool* pool);

// in_backprop (input's shape, every element written) = d(sum(output *
// out_backprop)) / d input.
template <typename T>
void ConvBackpropInput(const ConvGeometry& g, const T* filter, const T* out_backprop,
                       T* in_backprop, const IntraOpPool* pool);

// filter_backprop (filter's shape, every element written) = d(sum(output *
// out_backprop)) / d filter.
template <typename T>
void ConvBackpropFilter(const ConvGeometry& g, const T* input, const T* out_backprop,
                        T* filter_backprop, const IntraOpPool* pool);

}  // namespace tfd::kernels::nn
