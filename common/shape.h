// Tensor shapes: TensorShape (every dimension known) for run-time tensors and
// PartialShape (unknown rank or dimensions, written -1) for inference.
//
//   TFD_ASSIGN_OR_RETURN(TensorShape s, TensorShape::Make({2, 3}));
//   s.num_elements();                       // 6
//   PartialShape p = PartialShape::Unknown();
//   p.IsCompatibleWith(s);                  // true
//
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tfd {

// The largest number of elements a single tensor may declare. A shape beyond
// it is refused with INVALID_ARGUMENT before any memory is touched.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 36;

class TensorShape {
 public:
  TensorShape() = default;  // a scalar
  // Checked construction: dims must be >= 0 and their product at most
  // kMaxTensorElements.
  static StatusOr<TensorShape> Make(std::vector<int64_t> dims);
  // For shapes known to be valid (literals, derived from valid shapes). An
  // element count that would overflow saturates at INT64_MAX.
  TensorShape(std::initializer_list<int64_t> dims);
  explicit TensorShape(std::vector<int64_t> dims);

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t num_elements() const { return num_elements_; }

  void AddDim(int64_t d);
  void InsertDim(int i, int64_t d);
  void RemoveDim(int i);
  void set_dim(int i, int64_t d);

  // "[2, 3]"; "[]" for a scalar.
  std::string ToString() const;
  bool operator==(const TensorShape& o) const { return dims_ == o.dims_; }

 private:
  void Recount();
  std::vector<int64_t> dims_;
  int64_t num_elements_ = 1;
};

class PartialShape {
 public:
  PartialShape() = default;  // unknown rank
  static PartialShape Unknown() { return PartialShape(); }
  static PartialShape UnknownOfRank(int rank);
  // dims of -1 are unknown.
  PartialShape(std::initializer_list<int64_t> dims);
  explicit PartialShape(std::vector<int64_t> dims);
  PartialShape(const TensorShape& s);  // NOLINT: implicit, a known shape is partial

  bool rank_known() const { return rank_known_; }
  int rank() const { return rank_known_ ? static_cast<int>(dims_.size()) : -1; }
  int64_t dim(int i) const { return dims_[i]; }  // -1 when unknown
  const std::vector<int64_t>& dims() const { return dims_; }
  bool IsFullyDefined() const;
  std::optional<TensorShape> AsTensorShape() const;
  // Number of elements, or -1 when not fully defined.
  int64_t num_elements() const;

  bool IsCompatibleWith(const PartialShape& other) const;
  // The most specific shape compatible with both, or INVALID_ARGUMENT.
  StatusOr<PartialShape> Merge(const PartialShape& other) const;

  // "[?, 784]", "<unknown>".
  std::string ToString() const;
  bool operator==(const PartialShape& o) const = default;

 private:
  bool rank_known_ = false;
  std::vector<int64_t> dims_;
};

}  // namespace tfd
