// TF1's MatchingFiles: the sorted names of the files matching one or more
// glob patterns (file_pattern.h), on the task that runs it, within its
// io_dirs; what tf.train.match_filenames_once keeps in a local variable.
#include <algorithm>

#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/io/file_pattern.h"
#include "kernels/io/io_ops_internal.h"

namespace tfd::kernels::io {
namespace {

class MatchingFilesOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& patterns = ctx.input(0);
    if (patterns.rank() > 1) {
      return ctx.SetStatus(errors::InvalidArgument(
          "pattern must be a string scalar or vector, got ", patterns.shape().ToString()));
    }
    std::vector<std::string> names;
    for (int64_t i = 0; i < patterns.num_elements(); ++i) {
      auto matched = MatchFiles(patterns.data<std::string>()[i], ctx.env());
      TFD_OP_REQUIRES_OK(ctx, matched.status());
      names.insert(names.end(), std::make_move_iterator(matched->begin()),
                   std::make_move_iterator(matched->end()));
    }
    std::sort(names.begin(), names.end());
    auto out = Tensor::Allocate(DType::kString, TensorShape({static_cast<int64_t>(names.size())}));
    TFD_OP_REQUIRES_OK(ctx, out.status());
    std::move(names.begin(), names.end(), out->data<std::string>());
    ctx.set_output(0, *std::move(out));
  }
};

Status FilenamesShape(InferenceContext& c) {
  if (c.input(0).rank() > 1) {
    return errors::InvalidArgument("pattern must be a scalar or a vector, got ",
                                   c.input(0).ToString());
  }
  c.set_output(0, PartialShape({-1}));
  return OkStatus();
}

}  // namespace

Status RegisterMatchingFilesOp(OpRegistry& r) {
  return r.Add<MatchingFilesOp>(
      OpDefBuilder("MatchingFiles")
          .Input("pattern: string")
          .Output("filenames: string")
          .Doc("The sorted names of the files and directories matching the glob pattern (a "
               "scalar, or a vector of patterns whose matches are put together): '*', '?' and "
               "'[...]' in any component, none crossing a '/'. Names come back as the pattern "
               "writes them; none is not an error. Matched on the task that runs it, within "
               "its io_dirs: a pattern whose fixed part leaves them is INVALID_ARGUMENT, and "
               "an entry leading out of them is no match. Shape: [?]."),
      FilenamesShape);
}

}  // namespace tfd::kernels::io
