// ScalarSummary, HistogramSummary and MergeSummary; see summary_ops.h. Each
// output is one serialized tensorflow.Summary, so MergeSummary joins its
// inputs' bytes (a repeated field's values join as their bytes do) after
// reading their tags, which must not repeat.
#include "kernels/summary/summary_ops.h"

#include <set>

#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "common/summary_proto.h"

namespace tfd::kernels {
namespace {

constexpr char kNumbers[] = "T: {float32, float64, int32, int64, uint8}";

void SetSummary(OpKernelContext& ctx, std::string bytes) {
  ctx.set_output(0, Tensor::Scalar(std::move(bytes)));
}

class ScalarSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& tags = ctx.input(0);
    const Tensor& values = ctx.input(1);
    TFD_OP_REQUIRES(
        ctx, tags.shape() == values.shape(),
        errors::InvalidArgument("ScalarSummary '", node().name,
                                "': tags and values must have one shape, not ",
                                tags.shape().ToString(), " and ", values.shape().ToString()));
    summary::Summary s;
    TFD_SWITCH_NUMERIC(
        values.dtype(), T,
        for (int64_t i = 0; i < values.num_elements(); ++i) {
          s.scalars.emplace_back(tags.data<std::string>()[i],
                                 static_cast<double>(values.data<T>()[i]));
        },
        return ctx.SetStatus(
            errors::InvalidArgument("ScalarSummary cannot take ", values.Describe())));
    SetSummary(ctx, summary::Serialize(s));
  }
};

class HistogramSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& tag = ctx.input(0);
    TFD_OP_REQUIRES(
        ctx, tag.rank() == 0,
        errors::InvalidArgument("HistogramSummary '", node().name,
                                "': the tag must be a scalar, not ", tag.shape().ToString()));
    const std::string& name = tag.scalar<std::string>();
    auto histogram = summary::HistogramOf(ctx.input(1));
    TFD_OP_REQUIRES_OK(ctx, histogram.status().WithContext("the histogram summary '" + name + "'"));
    SetSummary(ctx, summary::Serialize({.histograms = {{name, *std::move(histogram)}}}));
  }
};

class MergeSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    std::string merged;
    std::set<std::string> seen;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& in = ctx.input(i);
      for (int64_t j = 0; j < in.num_elements(); ++j) {
        const std::string& bytes = in.data<std::string>()[j];
        auto tags = summary::Tags(bytes);
        TFD_OP_REQUIRES_OK(ctx, tags.status().WithContext("MergeSummary '" + node().name +
                                                          "', input " + std::to_string(i)));
        for (const std::string& tag : *tags) {
          TFD_OP_REQUIRES(ctx, seen.insert(tag).second,
                          errors::InvalidArgument("MergeSummary '", node().name, "': the tag '",
                                                  tag, "' is in more than one input"));
        }
        merged += bytes;
      }
    }
    SetSummary(ctx, std::move(merged));
  }
};

Status ScalarSummaryShape(InferenceContext& c) {
  const PartialShape &tags = c.input(0), &values = c.input(1);
  if (!tags.IsCompatibleWith(values)) {
    return errors::InvalidArgument("ScalarSummary's tags and values must have one shape, not ",
                                   tags.ToString(), " and ", values.ToString());
  }
  return shape_fns::Scalar(c);
}

Status HistogramSummaryShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 0));
  return shape_fns::Scalar(c);
}

}  // namespace

Status RegisterSummaryOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ScalarSummaryOp>(
      OpDefBuilder("ScalarSummary")
          .Input("tags: string")
          .Input("values: T")
          .Output("summary: string")
          .Attr(kNumbers)
          .Doc("A serialized tensorflow.Summary with one simple_value (a float) per element of "
               "values, tagged by the element of tags at its index; tags and values must have "
               "one shape (INVALID_ARGUMENT). NaN and infinities are written as they are. "
               "Shape: []."),
      ScalarSummaryShape));
  TFD_RETURN_IF_ERROR(r.Add<HistogramSummaryOp>(
      OpDefBuilder("HistogramSummary")
          .Input("tag: string")
          .Input("values: T")
          .Output("summary: string")
          .Attr(kNumbers)
          .Doc("A serialized tensorflow.Summary with the histogram of values (any shape) over "
               "TensorFlow's default buckets, tagged tag (a scalar). A NaN or an infinity "
               "among the values is INVALID_ARGUMENT, as TF1's. Shape: []."),
      HistogramSummaryShape));
  TFD_RETURN_IF_ERROR(RegisterImageSummaryOp(r));
  return r.Add<MergeSummaryOp>(
      OpDefBuilder("MergeSummary")
          .Input("inputs: N * string")
          .Output("summary: string")
          .Attr("N: int >= 1")
          .Doc("The serialized tensorflow.Summary holding the values of every Summary in "
               "inputs (each element of each input), in order. Bytes that are no Summary, and "
               "a tag found twice, are INVALID_ARGUMENT. Shape: []."),
      shape_fns::Scalar);
}

}  // namespace tfd::kernels
