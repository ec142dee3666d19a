// GPU reductions (Sum, Mean): one thread per output element walks the reduced
// dimensions (enough for the gradients of a training step, which reduce a
// batch per bias or class), and ArgMax along one axis.
#include "kernels/math/reduction_ops_gpu.h"

#include "kernels/gpu/gpu_launch.cuh"

namespace tfd::gpu {
namespace {

struct Geometry {
  int kept_rank = 0, reduced_rank = 0;
  int64_t kept_dims[TFD_GPU_MAX_DIMS], kept_strides[TFD_GPU_MAX_DIMS];
  int64_t reduced_dims[TFD_GPU_MAX_DIMS], reduced_strides[TFD_GPU_MAX_DIMS];
};

template <typename T>
__global__ void ReduceKernel(int op, const T* x, T* y, Geometry g, int64_t out_count,
                             int64_t reduce_count) {
  TFD_GPU_LOOP(o, out_count) {
    int64_t base = 0, rest = o;
    for (int d = g.kept_rank - 1; d >= 0; --d) {
      base += (rest % g.kept_dims[d]) * g.kept_strides[d];
      rest /= g.kept_dims[d];
    }
    T acc = T(0);
    for (int64_t r = 0; r < reduce_count; ++r) {
      int64_t off = base, left = r;
      for (int d = g.reduced_rank - 1; d >= 0; --d) {
        off += (left % g.reduced_dims[d]) * g.reduced_strides[d];
        left /= g.reduced_dims[d];
      }
      acc += x[off];
    }
    if (op == TFD_GPU_MEAN) acc = acc / T(reduce_count);
    y[o] = acc;
  }
}

template <typename T, typename Out>
__global__ void ArgMaxKernel(const T* x, Out* out, int64_t outer, int64_t axis, int64_t inner) {
  TFD_GPU_LOOP(o, outer * inner) {
    const int64_t i = o % inner, b = o / inner;
    const T* p = x + b * axis * inner + i;
    int64_t best = 0;
    for (int64_t a = 1; a < axis; ++a) {
      if (p[a * inner] > p[best * inner]) best = a;
    }
    out[o] = static_cast<Out>(best);
  }
}

}  // namespace
}  // namespace tfd::gpu

using namespace tfd::gpu;

extern "C" int tfd_gpu_reduce(int op, int type, const void* x, void* y, int rank,
                              const int64_t* dims, const int* reduced, int64_t out_count,
                              int64_t reduce_count, void* stream) {
  if (out_count <= 0) return 0;
  if (rank > TFD_GPU_MAX_DIMS) return 1;
  Geometry g;
  int64_t stride = 1;
  // Strides of the collapsed input, innermost first, then split by kind.
  int64_t strides[TFD_GPU_MAX_DIMS];
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= dims[d];
  }
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      g.reduced_dims[g.reduced_rank] = dims[d];
      g.reduced_strides[g.reduced_rank++] = strides[d];
    } else {
      g.kept_dims[g.kept_rank] = dims[d];
      g.kept_strides[g.kept_rank++] = strides[d];
    }
  }
  auto st = static_cast<cudaStream_t>(stream);
  if (op == TFD_GPU_MEAN && (type == TFD_GPU_I32 || type == TFD_GPU_I64)) return 1;
  TFD_GPU_NUMBER_CASES(type, {
    return Launch(ReduceKernel<T>, out_count, st, op, static_cast<const T*>(x), static_cast<T*>(y),
                  g, out_count, reduce_count);
  })
}

extern "C" int tfd_gpu_argmax(int type, int out_type, const void* x, void* out, int64_t outer,
                              int64_t axis, int64_t inner, void* stream) {
  const int64_t n = outer * inner;
  if (n <= 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  TFD_GPU_FLOAT_CASES(type, {
    if (out_type == TFD_GPU_I32) {
      return Launch(ArgMaxKernel<T, int32_t>, n, st, static_cast<const T*>(x),
                    static_cast<int32_t*>(out), outer, axis, inner);
    } else {
      return Launch(ArgMaxKernel<T, int64_t>, n, st, static_cast<const T*>(x),
                    static_cast<int64_t*>(out), outer, axis, inner);
    }
  })
}
