// TF1's DecodeRaw and DecodeCSV: what a reader's string records become
// (CIFAR-10's bytes, a CSV line's columns). Every malformed record is
// INVALID_ARGUMENT naming the record and the field.
#include <algorithm>
#include <bit>
#include <cstring>

#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/io/csv_record.h"
#include "kernels/io/io_ops_internal.h"

namespace tfd::kernels::io {
namespace {

class DecodeRawOp : public OpKernel {
 public:
  explicit DecodeRawOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("out_type", &type_));
    c.SetStatus(c.GetAttr("little_endian", &little_endian_));
  }
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    const auto* bytes = in.data<std::string>();
    const size_t size = DTypeSize(type_);
    const size_t length = in.num_elements() > 0 ? bytes[0].size() : 0;
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      TFD_OP_REQUIRES(
          ctx, bytes[i].size() == length,
          errors::InvalidArgument("DecodeRaw needs strings of one length: element ", i, " has ",
                                  bytes[i].size(), " bytes, element 0 ", length));
    }
    TFD_OP_REQUIRES(
        ctx, length % size == 0,
        errors::InvalidArgument("DecodeRaw of ", DTypeName(type_), ": ", length,
                                " bytes is not a whole number of ", size, "-byte elements"));
    TensorShape shape = in.shape();
    shape.AddDim(static_cast<int64_t>(length / size));
    Tensor* out;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, shape, &out));
    auto* dst = static_cast<char*>(out->raw_data());
    const bool swap = little_endian_ != (std::endian::native == std::endian::little);
    for (int64_t i = 0; i < in.num_elements(); ++i) {
      std::memcpy(dst + i * length, bytes[i].data(), length);
      if (!swap) continue;
      for (size_t e = 0; e < length; e += size) {
        std::reverse(dst + i * length + e, dst + i * length + e + size);
      }
    }
  }

 private:
  DType type_ = DType::kInvalid;
  bool little_endian_ = true;
};

class DecodeCsvOp : public OpKernel {
 public:
  explicit DecodeCsvOp(OpKernelConstruction& c) : OpKernel(c) {
    std::string delim;
    c.SetStatus(c.GetAttr("OUT_TYPE", &types_));
    c.SetStatus(c.GetAttr("field_delim", &delim));
    c.SetStatus(c.GetAttr("use_quote_delim", &quotes_));
    c.SetStatus(c.GetAttr("na_value", &na_value_));
    c.SetStatus(c.GetAttr("select_cols", &select_cols_));
    if (!c.status().ok()) return;
    if (delim.size() != 1) {
      c.SetStatus(errors::InvalidArgument("field_delim must be one character, got '", delim, "'"));
    }
    delim_ = delim.empty() ? ',' : delim[0];
    for (DType t : types_) {
      if (t != DType::kFloat32 && t != DType::kFloat64 && t != DType::kInt32 &&
          t != DType::kInt64 && t != DType::kString) {
        c.SetStatus(
            errors::InvalidArgument("a CSV column is float32, float64, int32, int64 or "
                                    "string, not ",
                                    DTypeName(t)));
      }
    }
    if (!select_cols_.empty() && select_cols_.size() != types_.size()) {
      c.SetStatus(errors::InvalidArgument("select_cols has ", select_cols_.size(), " columns for ",
                                          types_.size(), " record_defaults"));
    }
    for (size_t k = 0; k < select_cols_.size(); ++k) {
      if (select_cols_[k] < 0 || (k > 0 && select_cols_[k] <= select_cols_[k - 1])) {
        c.SetStatus(errors::InvalidArgument("select_cols must be non-negative and increasing"));
      }
    }
  }

  void Compute(OpKernelContext& ctx) override {
    const int n = static_cast<int>(types_.size());
    for (int c = 0; c < n; ++c) {
      TFD_OP_REQUIRES(ctx, ctx.input(1 + c).num_elements() <= 1 && ctx.input(1 + c).rank() <= 1,
                      errors::InvalidArgument("record_defaults[", c,
                                              "] must hold at most one "
                                              "value, got ",
                                              ctx.input(1 + c).Describe()));
    }
    const Tensor& records = ctx.input(0);
    std::vector<Tensor*> out(n);
    for (int c = 0; c < n; ++c) {
      TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(c, records.shape(), &out[c]));
    }
    for (int64_t r = 0; r < records.num_elements(); ++r) {
      TFD_OP_REQUIRES_OK(ctx, DecodeRecord(ctx, records.data<std::string>()[r], r, out));
    }
  }

 private:
  Status DecodeRecord(const OpKernelContext& ctx, const std::string& line, int64_t r,
                      const std::vector<Tensor*>& out) const {
    TFD_ASSIGN_OR_RETURN(std::vector<std::string> fields, SplitCsvRecord(line, delim_, quotes_, r));
    const int64_t needed =
        select_cols_.empty() ? static_cast<int64_t>(types_.size()) : select_cols_.back() + 1;
    if (select_cols_.empty() ? static_cast<int64_t>(fields.size()) != needed
                             : static_cast<int64_t>(fields.size()) < needed) {
      return errors::InvalidArgument("record ", r, " has ", fields.size(), " fields, expected ",
                                     needed, select_cols_.empty() ? "" : " or more");
    }
    for (size_t c = 0; c < types_.size(); ++c) {
      const int64_t col = select_cols_.empty() ? static_cast<int64_t>(c) : select_cols_[c];
      TFD_RETURN_IF_ERROR(Convert(ctx.input(1 + static_cast<int>(c)), fields[col], r, c, out[c]));
    }
    return OkStatus();
  }

  // Field `text` of record r, column c, into element r of `out`: the column's
  // default when empty or na_value.
  Status Convert(const Tensor& fallback, const std::string& text, int64_t r, size_t c,
                 Tensor* out) const {
    const bool missing = text.empty() || (!na_value_.empty() && text == na_value_);
    if (missing && fallback.num_elements() == 0) {
      return errors::InvalidArgument("record ", r, ": field ", c, " is required but missing");
    }
    bool ok = true;
    TFD_SWITCH_ALL(
        types_[c], T,
        {
          T* slot = out->data<T>() + r;
          if (missing) {
            *slot = fallback.data<T>()[0];
          } else {
            ok = ParseCsvField(text, slot);
          }
        },
        ok = false);
    if (ok) return OkStatus();
    return errors::InvalidArgument("record ", r, ": field ", c, " ('", text, "') is not a valid ",
                                   DTypeName(types_[c]));
  }

  std::vector<DType> types_;
  char delim_ = ',';
  bool quotes_ = true;
  std::string na_value_;
  std::vector<int64_t> select_cols_;
};

Status DecodeRawShape(InferenceContext& c) {
  PartialShape in = c.input(0);
  if (!in.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  std::vector<int64_t> dims = in.dims();
  dims.push_back(-1);
  c.set_output(0, PartialShape(dims));
  return OkStatus();
}

Status DecodeCsvShape(InferenceContext& c) {
  for (int i = 1; i < c.num_inputs(); ++i) {
    if (c.input(i).rank() > 1)
      return errors::InvalidArgument("record_defaults[", i - 1, "] must have rank 0 or 1");
  }
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, c.input(0));
  return OkStatus();
}

}  // namespace

Status RegisterParsingOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<DecodeRawOp>(
      OpDefBuilder("DecodeRaw")
          .Input("bytes: string")
          .Output("output: out_type")
          .Attr("out_type: {float32, float64, int32, int64, uint8}")
          .Attr("little_endian: bool = true")
          .Doc("Each string's bytes as out_type elements (little-endian unless said "
               "otherwise); every string must have the same length, a whole number of "
               "elements. Shape: bytes' with the element count appended."),
      DecodeRawShape));
  return r.Add<DecodeCsvOp>(
      OpDefBuilder("DecodeCSV")
          .Input("records: string")
          .Input("record_defaults: OUT_TYPE")
          .Output("output: OUT_TYPE")
          .Attr("OUT_TYPE: list(type) >= 1")
          .Attr("field_delim: string = \",\"")
          .Attr("use_quote_delim: bool = true")
          .Attr("na_value: string = \"\"")
          .Attr("select_cols: list(int) = []")
          .Doc("Each CSV record's columns (those of select_cols, when given), one output per "
               "column (float32, float64, int32, int64 or string): a field that is empty or "
               "na_value takes the column's default (its "
               "record_defaults tensor of one value; one of none makes the field required). "
               "With use_quote_delim, a field in double quotes may hold the delimiter, a quote "
               "written twice. Shape: each output records'."),
      DecodeCsvShape);
}

}  // namespace tfd::kernels::io
