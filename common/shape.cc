#include "common/shape.h"

#include <algorithm>
#include <limits>

namespace tfd {

StatusOr<TensorShape> TensorShape::Make(std::vector<int64_t> dims) {
  int64_t n = 1;
  bool zero = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return errors::InvalidArgument("dimension ", i, " of shape ",
                                     PartialShape(dims).ToString(), " is negative");
    }
    if (dims[i] == 0) zero = true;
  }
  if (!zero) {
    for (int64_t d : dims) {
      if (d != 0 && n > kMaxTensorElements / d) {
        return errors::InvalidArgument("shape ", PartialShape(dims).ToString(),
                                       " has more than ", kMaxTensorElements,
                                       " elements");
      }
      n *= d;
    }
  }
  return TensorShape(std::move(dims));
}

TensorShape::TensorShape(std::initializer_list<int64_t> dims) : dims_(dims) { Recount(); }
TensorShape::TensorShape(std::vector<int64_t> dims) : dims_(std::move(dims)) { Recount(); }

void TensorShape::Recount() {
  // A zero dimension makes the product 0 without multiplying the others,
  // which could overflow ([2^40, 2^40, 0] is a valid, empty shape).
  num_elements_ = std::find(dims_.begin(), dims_.end(), 0) != dims_.end() ? 0 : 1;
  if (num_elements_ == 0) return;
  for (int64_t d : dims_) {
    // The unchecked constructors may be given dims whose product overflows;
    // saturating keeps that defined, and more than kMaxTensorElements is
    // refused wherever memory is allocated.
    if (__builtin_mul_overflow(num_elements_, d, &num_elements_)) {
      num_elements_ = std::numeric_limits<int64_t>::max();
      return;
    }
  }
}

void TensorShape::AddDim(int64_t d) {
  dims_.push_back(d);
  Recount();
}
void TensorShape::InsertDim(int i, int64_t d) {
  dims_.insert(dims_.begin() + i, d);
  Recount();
}
void TensorShape::RemoveDim(int i) {
  dims_.erase(dims_.begin() + i);
  Recount();
}
void TensorShape::set_dim(int i, int64_t d) {
  dims_[i] = d;
  Recount();
}

std::string TensorShape::ToString() const { return PartialShape(*this).ToString(); }

PartialShape PartialShape::UnknownOfRank(int rank) {
  return PartialShape(std::vector<int64_t>(rank, -1));
}
PartialShape::PartialShape(std::initializer_list<int64_t> dims)
    : rank_known_(true), dims_(dims) {}
PartialShape::PartialShape(std::vector<int64_t> dims)
    : rank_known_(true), dims_(std::move(dims)) {}
PartialShape::PartialShape(const TensorShape& s) : rank_known_(true), dims_(s.dims()) {}

bool PartialShape::IsFullyDefined() const {
  if (!rank_known_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

std::optional<TensorShape> PartialShape::AsTensorShape() const {
  if (!IsFullyDefined()) return std::nullopt;
  auto s = TensorShape::Make(dims_);
  if (!s.ok()) return std::nullopt;
  return *s;
}

int64_t PartialShape::num_elements() const {
  auto s = AsTensorShape();
  return s ? s->num_elements() : -1;
}

bool PartialShape::IsCompatibleWith(const PartialShape& other) const {
  return Merge(other).ok();
}

StatusOr<PartialShape> PartialShape::Merge(const PartialShape& other) const {
  if (!rank_known_) return other;
  if (!other.rank_known_) return *this;
  if (dims_.size() != other.dims_.size()) {
    return errors::InvalidArgument("shapes ", ToString(), " and ", other.ToString(),
                                   " have different ranks");
  }
  std::vector<int64_t> out(dims_.size());
  for (size_t i = 0; i < dims_.size(); ++i) {
    const int64_t a = dims_[i], b = other.dims_[i];
    if (a >= 0 && b >= 0 && a != b) {
      return errors::InvalidArgument("shapes ", ToString(), " and ", other.ToString(),
                                     " differ in dimension ", i);
    }
    out[i] = a >= 0 ? a : b;
  }
  return PartialShape(std::move(out));
}

std::string PartialShape::ToString() const {
  if (!rank_known_) return "<unknown>";
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ", ";
    s += dims_[i] < 0 ? "?" : std::to_string(dims_[i]);
  }
  return s + "]";
}

}  // namespace tfd
