#include "kernels/array/strided_slice_spec.h"

#include <algorithm>

namespace tfd::kernels::array {
namespace {

constexpr int kMaxSpecDims = 64;  // the masks are 64-bit

bool Bit(int64_t mask, int i) { return (mask >> i) & 1; }

// The sparse spec (as written, with ellipsis and new axes) expanded to one
// entry per input dimension; gather[k] names the input dimension that output
// dimension k comes from, or kNewAxis / kShrunk.
constexpr int64_t kNewAxis = -1, kShrunk = -2;
struct DenseSpec {
  std::vector<int64_t> begin, end, stride;
  int64_t begin_mask = 0, end_mask = 0, shrink_mask = 0;
  std::vector<int64_t> gather;
};

StatusOr<DenseSpec> Densify(int rank, const std::vector<int64_t>& begin,
                            const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                            StridedSliceMasks m) {
  int n = static_cast<int>(begin.size());
  // No ellipsis written: one is implied after the last entry.
  if (m.ellipsis == 0) m.ellipsis = int64_t{1} << n++;
  DenseSpec d;
  d.begin.assign(rank, 0);
  d.end.assign(rank, 0);
  d.stride.assign(rank, 1);
  int full = 0;
  for (int i = 0; i < n; ++i) {
    if (Bit(m.ellipsis, i)) {
      int new_after = 0;
      for (int j = i + 1; j < n; ++j) new_after += Bit(m.new_axis, j);
      const int next = std::min(rank - (n - i) + 1 + new_after, rank);
      for (; full < next; ++full) {
        d.begin_mask |= int64_t{1} << full;
        d.end_mask |= int64_t{1} << full;
        d.gather.push_back(full);
      }
    } else if (Bit(m.new_axis, i)) {
      d.gather.push_back(kNewAxis);
    } else {
      if (full == rank) {
        return errors::InvalidArgument("StridedSlice: index ", i, " of the slice is past the ",
                                       rank, " dimensions of the input");
      }
      d.begin[full] = begin[i];
      d.end[full] = end[i];
      d.stride[full] = strides[i];
      if (Bit(m.begin, i)) d.begin_mask |= int64_t{1} << full;
      if (Bit(m.end, i)) d.end_mask |= int64_t{1} << full;
      if (Bit(m.shrink_axis, i)) {
        d.shrink_mask |= int64_t{1} << full;
        d.gather.push_back(kShrunk);
      } else {
        d.gather.push_back(full);
      }
      ++full;
    }
  }
  return d;
}

// One input dimension of extent dim (>= 0): begin and size after masks,
// negative indices and clamping, as TensorFlow's ValidateStridedSliceOp.
Status ResolveDim(int i, int64_t dim, const DenseSpec& d, int64_t* begin, int64_t* size) {
  const int64_t stride = d.stride[i];
  const bool shrink = Bit(d.shrink_mask, i);
  if (shrink) {
    const int64_t b = d.begin[i] < 0 ? dim + d.begin[i] : d.begin[i];
    if (b < 0 || b >= dim) {
      return errors::InvalidArgument("StridedSlice: index ", d.begin[i], " of dimension ", i,
                                     " is out of bounds for its size ", dim);
    }
    *begin = b;
    *size = 1;
    return OkStatus();
  }
  // Valid positions run [0, dim] forward and [-1, dim - 1] backward.
  const int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
  auto canonical = [&](int64_t x, bool masked, bool is_end) {
    if (masked) return (stride > 0) == is_end ? hi : lo;
    const int64_t fwd = x < 0 ? dim + x : x;
    return std::clamp(fwd, lo, hi);
  };
  const int64_t b = canonical(d.begin[i], Bit(d.begin_mask, i), false);
  const int64_t e = canonical(d.end[i], Bit(d.end_mask, i), true);
  const int64_t len = e - b;
  *begin = b;
  *size = len == 0 || (len < 0) != (stride < 0) ? 0 : len / stride + (len % stride != 0);
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<int64_t>> StridedSliceDimsWithUnknownBounds(
    const std::vector<int64_t>& dims, int n, const std::optional<std::vector<int64_t>>& strides,
    const StridedSliceMasks& masks) {
  const std::vector<int64_t> zeros(n, 0);
  TFD_ASSIGN_OR_RETURN(DenseSpec d,
                       Densify(static_cast<int>(dims.size()), zeros, zeros,
                               strides ? *strides : std::vector<int64_t>(n, 1), masks));
  std::vector<int64_t> out;
  for (const int64_t g : d.gather) {
    if (g == kShrunk) continue;
    if (g == kNewAxis) {
      out.push_back(1);
      continue;
    }
    const int i = static_cast<int>(g);
    const int64_t stride = d.stride[i] < 0 ? -d.stride[i] : d.stride[i];
    const bool whole = Bit(d.begin_mask, i) && Bit(d.end_mask, i);
    out.push_back(whole && strides && stride > 0 && dims[i] >= 0 ? (dims[i] + stride - 1) / stride
                                                                 : -1);
  }
  return out;
}

StatusOr<StridedSliceMasks> MasksFromAttrs(const AttrMap& attrs) {
  StridedSliceMasks m;
  const std::pair<const char*, int64_t*> fields[] = {
      {"begin_mask", &m.begin}, {"end_mask", &m.end}, {"ellipsis_mask", &m.ellipsis},
      {"new_axis_mask", &m.new_axis}, {"shrink_axis_mask", &m.shrink_axis}};
  for (const auto& [name, out] : fields) {
    auto it = attrs.find(name);
    if (it == attrs.end()) continue;
    const int64_t* v = std::get_if<int64_t>(&it->second);
    if (v == nullptr) {
      return errors::InvalidArgument("attr '", name, "' must be an int, got ",
                                     AttrTypeName(it->second));
    }
    *out = *v;
  }
  return m;
}

StatusOr<StridedSliceSpec> ResolveStridedSlice(const std::vector<int64_t>& dims,
                                               const std::vector<int64_t>& begin,
                                               const std::vector<int64_t>& end,
                                               const std::vector<int64_t>& strides,
                                               const StridedSliceMasks& masks) {
  if (begin.size() != end.size() || begin.size() != strides.size()) {
    return errors::InvalidArgument("StridedSlice: begin, end and strides must have one length, "
                                   "got ", begin.size(), ", ", end.size(), " and ",
                                   strides.size());
  }
  if (begin.size() >= kMaxSpecDims) {
    return errors::InvalidArgument("StridedSlice: at most ", kMaxSpecDims - 1,
                                   " slice entries are supported, got ", begin.size());
  }
  if (masks.ellipsis & (masks.ellipsis - 1)) {
    return errors::InvalidArgument("StridedSlice: at most one ellipsis is allowed, got "
                                   "ellipsis_mask ", masks.ellipsis);
  }
  for (size_t i = 0; i < strides.size(); ++i) {
    if (strides[i] == 0) {
      return errors::InvalidArgument("StridedSlice: strides[", i, "] must be non-zero");
    }
    if (Bit(masks.shrink_axis, static_cast<int>(i)) && !Bit(masks.ellipsis, static_cast<int>(i)) &&
        !Bit(masks.new_axis, static_cast<int>(i)) && strides[i] < 0) {
      return errors::InvalidArgument("StridedSlice: strides[", i, "] is ", strides[i],
                                     " but a shrunk index (shrink_axis_mask) takes a positive "
                                     "stride");
    }
  }
  const int rank = static_cast<int>(dims.size());
  TFD_ASSIGN_OR_RETURN(DenseSpec d, Densify(rank, begin, end, strides, masks));
  StridedSliceSpec s;
  s.begin.assign(rank, 0);
  s.size.assign(rank, -1);
  s.stride = d.stride;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      if (Bit(d.shrink_mask, i)) s.size[i] = 1;
      continue;
    }
    TFD_RETURN_IF_ERROR(ResolveDim(i, dims[i], d, &s.begin[i], &s.size[i]));
  }
  for (int64_t g : d.gather) {
    if (g == kNewAxis) s.final_dims.push_back(1);
    if (g >= 0) s.final_dims.push_back(s.size[g]);
  }
  return s;
}

}  // namespace tfd::kernels::array
