// Eigen views of tensors for CPU kernels. Kept apart from tensor.h so that
// code which never does arithmetic does not compile Eigen.
//
//   EigenFlat<float>(t) = EigenFlat<float>(a) + EigenFlat<float>(b);
//   EigenMatrix<double>(out).noalias() = EigenMatrix<double>(x) * EigenMatrix<double>(w);
#pragma once

#include <Eigen/Core>

#include "common/tensor.h"

namespace tfd {

template <typename T>
using FlatMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using MatrixMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

// All elements as a 1-D array.
template <typename T>
FlatMap<T> EigenFlat(const Tensor& t) {
  return FlatMap<T>(t.data<T>(), t.num_elements());
}

// A row-major matrix of the given shape (rows * cols must equal the size).
template <typename T>
MatrixMap<T> EigenMatrix(const Tensor& t, int64_t rows, int64_t cols) {
  return MatrixMap<T>(t.data<T>(), rows, cols);
}

// A rank-2 tensor as a row-major matrix.
template <typename T>
MatrixMap<T> EigenMatrix(const Tensor& t) {
  return EigenMatrix<T>(t, t.dim(0), t.dim(1));
}

}  // namespace tfd
