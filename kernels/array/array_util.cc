// Shared helpers of the array family (see array_util.h).
#include "kernels/array/array_util.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace tfd::kernels::array {

StatusOr<std::vector<int64_t>> IntsFromTensor(const Tensor& t, const char* what) {
  if (t.rank() > 1 || (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) {
    return errors::InvalidArgument(what, " must be a vector of int32 or int64, got ",
                                   t.Describe());
  }
  std::vector<int64_t> out(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out[i] = t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  return out;
}

StatusOr<int64_t> IntFromScalar(const Tensor& t, const char* what) {
  if (t.num_elements() != 1 || t.rank() > 1 ||
      (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)) {
    return errors::InvalidArgument(what, " must be an int32 or int64 scalar, got ", t.Describe());
  }
  return t.dtype() == DType::kInt32 ? int64_t{t.data<int32_t>()[0]} : t.data<int64_t>()[0];
}

StatusOr<int> CanonicalAxis(int64_t axis, int rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    return errors::InvalidArgument(what, " ", axis, " is out of range for a tensor of rank ",
                                   rank, ": expected a value in [", -rank, ", ", rank, ")");
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

int64_t DimProduct(const std::vector<int64_t>& dims, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= dims[i];
  return n;
}

void CopyElements(const Tensor& src, int64_t src_pos, const Tensor& dst, int64_t dst_pos,
                  int64_t n) {
  if (n <= 0) return;  // the buffers of empty tensors may hold no bytes at all
  if (src.dtype() == DType::kString) {
    const std::string* from = src.data<std::string>() + src_pos;
    std::copy(from, from + n, dst.data<std::string>() + dst_pos);
    return;
  }
  const size_t size = DTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw_data()) + dst_pos * size,
              static_cast<const char*>(src.raw_data()) + src_pos * size, n * size);
}

StatusOr<Tensor> FlatView(const Tensor& t, int64_t begin, const TensorShape& shape) {
  TFD_ASSIGN_OR_RETURN(Tensor flat, t.Reshaped(TensorShape({t.num_elements()})));
  return flat.Slice(begin, begin + shape.num_elements()).Reshaped(shape);
}

PartialShape ShapeFromShapeInput(const InferenceContext& c, int i) {
  if (auto dims = c.InputAsInts(i); dims && c.input_value(i)->rank() == 1) {
    for (int64_t& d : *dims) d = d < 0 ? -1 : d;
    return PartialShape(std::move(*dims));
  }
  const PartialShape& s = c.input(i);
  if (s.rank() == 1 && s.dim(0) >= 0) {
    return PartialShape::UnknownOfRank(static_cast<int>(s.dim(0)));
  }
  return PartialShape::Unknown();
}

StatusOr<std::vector<std::pair<int64_t, int64_t>>> ReadPaddings(const Tensor& p, int rank) {
  if (p.rank() != 2 || p.dim(0) != rank || p.dim(1) != 2) {
    return errors::InvalidArgument("paddings must have shape [", rank,
                                   ", 2] (the rank of input, 2), got ", p.Describe());
  }
  std::vector<std::pair<int64_t, int64_t>> out(rank);
  for (int d = 0; d < rank; ++d) {
    for (int k = 0; k < 2; ++k) {
      const int64_t v =
          p.dtype() == DType::kInt32 ? p.data<int32_t>()[2 * d + k] : p.data<int64_t>()[2 * d + k];
      if (v < 0) {
        return errors::InvalidArgument("paddings[", d, ", ", k, "] = ", v, " must be >= 0");
      }
      (k == 0 ? out[d].first : out[d].second) = v;
    }
  }
  return out;
}

Status PaddedShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 2));
  const PartialShape& in = c.input(0);
  const PartialShape& p = c.input(1);
  int rank = in.rank();
  if (p.rank_known() && p.dim(0) >= 0) {
    if ((rank >= 0 && p.dim(0) != rank) || (p.dim(1) >= 0 && p.dim(1) != 2)) {
      return errors::InvalidArgument("input 1 (paddings) must have shape [", rank,
                                     ", 2] but has shape ", p.ToString());
    }
    rank = static_cast<int>(p.dim(0));
  }
  if (rank < 0) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  const Tensor* value = c.input_value(1);
  if (!value) {
    c.set_output(0, PartialShape::UnknownOfRank(rank));
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(auto pads, ReadPaddings(*value, rank));
  std::vector<int64_t> dims(rank, -1);
  for (int d = 0; d < rank; ++d) {
    if (in.rank_known() && in.dim(d) >= 0) dims[d] = in.dim(d) + pads[d].first + pads[d].second;
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

}  // namespace tfd::kernels::array
