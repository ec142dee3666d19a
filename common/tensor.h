// Tensor: a dtype, a shape and a shared, refcounted buffer.
//
// Copying a Tensor shares its buffer; Slice and Reshape share it too. Kernels
// write only into tensors they allocated themselves (outputs), so a buffer
// that other tensors see is never changed underneath them — except a
// variable's, which follows TensorFlow's reference semantics (see
// kernels/state/variable.h).
//
//   TFD_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(DType::kFloat32, {2, 2}));
//   float* p = t.data<float>();
//   Tensor row = t.Slice(1, 2);              // shares t's buffer
//   auto m = EigenMatrix<float>(t);          // common/tensor_eigen.h
//
// Thread-safety: as a value; the elements are not synchronised.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/buffer.h"
#include "common/dtype.h"
#include "common/shape.h"
#include "common/status.h"

namespace tfd {

class Tensor {
 public:
  Tensor() = default;  // uninitialised: dtype kInvalid, no buffer

  // Zero-filled (strings: empty). With a `budget`, charged to it for as long
  // as the buffer lives (RESOURCE_EXHAUSTED when it does not fit).
  // Fill::kNone leaves host elements as the memory held them (buffer.h).
  static StatusOr<Tensor> Allocate(DType dtype, const TensorShape& shape,
                                   std::shared_ptr<MemoryBudget> budget = nullptr,
                                   Fill fill = Fill::kZeros);
  // A tensor viewing `buffer` (which must hold the elements) with no copy.
  static StatusOr<Tensor> FromBuffer(DType dtype, const TensorShape& shape,
                                     std::shared_ptr<Buffer> buffer);

  // Small helpers for literals and tests; they abort only on out-of-memory.
  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t = MustAllocate(DTypeOf<T>::value, TensorShape());
    t.data<T>()[0] = std::move(value);
    return t;
  }
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, const TensorShape& shape) {
    Tensor t = MustAllocate(DTypeOf<T>::value, shape);
    for (int64_t i = 0; i < shape.num_elements() && i < static_cast<int64_t>(values.size()); ++i) {
      t.data<T>()[i] = values[i];
    }
    return t;
  }
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values) {
    return FromVector(values, TensorShape({static_cast<int64_t>(values.size())}));
  }
  static Tensor Scalar(const char* s) { return Scalar(std::string(s)); }

  bool initialized() const { return dtype_ != DType::kInvalid; }
  DType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int64_t num_elements() const { return shape_.num_elements(); }
  size_t total_bytes() const { return num_elements() * DTypeSize(dtype_); }

  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(raw_data());
  }
  void* raw_data() const;
  template <typename T>
  T& scalar() const {
    return data<T>()[0];
  }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  // The device holding the elements; null when they are in host memory
  // (then data() may be read). See common/device_memory.h.
  DeviceMemory* device() const { return buffer_ ? buffer_->device() : nullptr; }
  bool on_device() const { return device() != nullptr; }
  // This tensor when its elements are in host memory, else a host copy.
  StatusOr<Tensor> ToHost() const;
  // A zero-filled tensor in `device`'s memory (host memory when null),
  // charged to `budget` only when on the host; `fill` applies to host memory.
  static StatusOr<Tensor> AllocateOn(DeviceMemory* device, DType dtype, const TensorShape& shape,
                                     std::shared_ptr<MemoryBudget> budget = nullptr,
                                     Fill fill = Fill::kZeros);
  // True when no other tensor shares this one's buffer.
  bool buffer_unshared() const { return buffer_.use_count() == 1; }

  // Rows [begin, end) along dimension 0, sharing the buffer. Needs rank >= 1.
  Tensor Slice(int64_t begin, int64_t end) const;
  // The same elements under another shape of equal size, sharing the buffer.
  StatusOr<Tensor> Reshaped(const TensorShape& shape) const;
  // A copy into a fresh buffer on the same device, charged to the budget
  // this one's is charged to (a variable's copy-on-write counts like its
  // first value).
  StatusOr<Tensor> DeepCopy() const;

  // "float32[2, 2]" — for error messages (with " on GPU:0" for a device tensor).
  std::string Describe() const;
  // Values, the first `summarize` of them ("[[1 2] [3 4]]"), as Print shows.
  std::string DebugString(int64_t summarize = 16) const;

 private:
  static Tensor MustAllocate(DType dtype, const TensorShape& shape);

  DType dtype_ = DType::kInvalid;
  TensorShape shape_;
  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;  // bytes into buffer_
};

// Element-wise equality of dtype, shape and values (NaN != NaN).
bool TensorsEqual(const Tensor& a, const Tensor& b);

}  // namespace tfd
