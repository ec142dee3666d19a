// Index and row-shape checks shared by the kernels that update rows of a
// variable in place. They run before the first write, so a refused update
// leaves the variable as it was.
#include "kernels/state/sparse_rows.h"

#include <string>

namespace tfd::kernels::state {
namespace {

// "indices[1, 2]" for flat position `pos` of a tensor shaped `shape`.
std::string PositionName(const TensorShape& shape, int64_t pos) {
  if (shape.rank() <= 1) return "indices[" + std::to_string(pos) + "]";
  std::vector<int64_t> index(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    index[d] = pos % shape.dim(d);
    pos /= shape.dim(d);
  }
  std::string s = "indices[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

template <typename I>
Status ReadIndices(const Tensor& indices, int64_t rows, const Variable& var,
                   std::vector<int64_t>* out) {
  const I* data = indices.data<I>();
  const int64_t n = indices.num_elements();
  out->resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = data[i];
    if (row < 0 || row >= rows) {
      return errors::InvalidArgument(PositionName(indices.shape(), i), " = ", row,
                                     " is not in [0, ", rows, ") (the rows of variable '",
                                     var.FullName(), "')");
    }
    (*out)[i] = row;
  }
  return OkStatus();
}

}  // namespace

Status RowIndices(const Tensor& indices, int64_t rows, const Variable& var,
                  std::vector<int64_t>* out) {
  switch (indices.dtype()) {
    case DType::kInt32:
      return ReadIndices<int32_t>(indices, rows, var, out);
    case DType::kInt64:
      return ReadIndices<int64_t>(indices, rows, var, out);
    default:
      return errors::InvalidArgument("indices must be int32 or int64, got ", indices.Describe());
  }
}

Status CheckRowData(const Tensor& data, const char* what, const Tensor& indices,
                    const Tensor& value, const Variable& var) {
  std::vector<int64_t> want = indices.shape().dims();
  want.insert(want.end(), value.shape().dims().begin() + 1, value.shape().dims().end());
  if (data.shape().dims() == want) return OkStatus();
  std::string want_text = "[";
  for (size_t d = 0; d < want.size(); ++d) want_text += (d ? ", " : "") + std::to_string(want[d]);
  return errors::InvalidArgument(what, " is ", data.Describe(), " but indices ",
                                 indices.Describe(), " into variable '", var.FullName(), "' (",
                                 value.Describe(), ") need ", what, " shaped ", want_text,
                                 "]: indices' shape + the variable's shape[1:]");
}

Status CheckHasRows(const Tensor& value, const Variable& var, std::string_view op) {
  if (value.rank() >= 1) return OkStatus();
  return errors::InvalidArgument(op, " needs a variable of rank >= 1 but variable '",
                                 var.FullName(), "' is ", value.Describe());
}

}  // namespace tfd::kernels::state

namespace tfd::kernels::state {

Status CheckRowDataShape(const InferenceContext& c, int var_idx, int indices_idx, int data_idx,
                         const char* what, bool allow_scalar) {
  const PartialShape& var = c.input(var_idx);
  const PartialShape& indices = c.input(indices_idx);
  const PartialShape& data = c.input(data_idx);
  if (var.rank_known() && var.rank() == 0) {
    return errors::InvalidArgument("the variable (input ", var_idx,
                                   ") must have rank >= 1 but has shape []");
  }
  if (allow_scalar && data.rank_known() && data.rank() == 0) return OkStatus();
  if (!var.rank_known() || !indices.rank_known()) return OkStatus();
  std::vector<int64_t> want = indices.dims();
  want.insert(want.end(), var.dims().begin() + 1, var.dims().end());
  if (data.IsCompatibleWith(PartialShape(want))) return OkStatus();
  return errors::InvalidArgument(what, " (input ", data_idx, ") has shape ", data.ToString(),
                                 " but indices ", indices.ToString(), " into a variable shaped ",
                                 var.ToString(), " need ", PartialShape(want).ToString());
}

}  // namespace tfd::kernels::state
