#include "kernels/math/threaded_matmul.h"

#include "kernels/framework/intra_op_pool.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

namespace tfd::kernels {

template <typename T>
void ThreadedMatMul(const IntraOpPool& pool, const Tensor& a, const Tensor& b, bool ta, bool tb,
                    Tensor& out) {
  // Unaligned: an input may be a slice of a larger buffer.
  using Matrix = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, Eigen::DenseIndex>>;
  using ConstMatrix =
      Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor, Eigen::DenseIndex>>;
  const ConstMatrix A(a.data<T>(), a.dim(0), a.dim(1));
  const ConstMatrix B(b.data<T>(), b.dim(0), b.dim(1));
  Matrix C(out.data<T>(), out.dim(0), out.dim(1));
  // Contract a's inner dimension (1, or 0 when transposed) with b's (0, or
  // 1 when transposed); the free ones, a's then b's, give [m, n].
  const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims = {
      Eigen::IndexPair<Eigen::DenseIndex>(ta ? 0 : 1, tb ? 1 : 0)};
  C.device(pool.device()) = A.contract(B, dims);
}

template void ThreadedMatMul<float>(const IntraOpPool&, const Tensor&, const Tensor&, bool, bool,
                                    Tensor&);
template void ThreadedMatMul<double>(const IntraOpPool&, const Tensor&, const Tensor&, bool, bool,
                                     Tensor&);

}  // namespace tfd::kernels
