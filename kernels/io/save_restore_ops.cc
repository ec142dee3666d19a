// Save, Restore, SaveV2, RestoreV2: tensors to and from checkpoint files
// (common/tensor_bundle/checkpoint_file.h), at paths confined to the task's allowed
// directories.
#include <filesystem>
#include <string>

#include "common/op_kernel.h"
#include "common/tensor_bundle/checkpoint_file.h"
#include "kernels/io/io_ops_internal.h"

namespace tfd::kernels::io {
namespace {

StatusOr<std::string> ScalarString(const OpKernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0)
    return errors::InvalidArgument(what, " must be a scalar but is ", t.Describe());
  return t.scalar<std::string>();
}

StatusOr<std::vector<std::string>> StringVector(const OpKernelContext& ctx, int i, const char* what,
                                                size_t n) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 1 || static_cast<size_t>(t.num_elements()) != n) {
    return errors::InvalidArgument(what, " must be a vector of ", n, " strings but is ",
                                   t.Describe());
  }
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + n);
}

// We store whole tensors only: TensorFlow's slice specs must be empty.
Status CheckNoSlices(const std::vector<std::string>& slices,
                     const std::vector<std::string>& names) {
  for (size_t i = 0; i < slices.size(); ++i) {
    if (!slices[i].empty()) {
      return errors::InvalidArgument("tensor '", names[i], "' has slice spec '", slices[i],
                                     "'; only whole tensors (empty specs) are supported");
    }
  }
  return OkStatus();
}

class SaveOp : public OpKernel {
 public:
  explicit SaveOp(OpKernelConstruction& c) : OpKernel(c), v2_(c.def().name == "SaveV2") {}

  void Compute(OpKernelContext& ctx) override {
    const int first = v2_ ? 3 : 2;
    const size_t n = static_cast<size_t>(ctx.num_inputs() - first);
    auto file = ScalarString(ctx, 0, v2_ ? "prefix" : "filename");
    TFD_OP_REQUIRES_OK(ctx, file.status());
    auto names = StringVector(ctx, 1, "tensor_names", n);
    TFD_OP_REQUIRES_OK(ctx, names.status());
    if (v2_) {
      auto slices = StringVector(ctx, 2, "shape_and_slices", n);
      TFD_OP_REQUIRES_OK(ctx, slices.status());
      TFD_OP_REQUIRES_OK(ctx, CheckNoSlices(*slices, *names));
    }
    auto path = ctx.env().ResolveIoPath(*file);
    TFD_OP_REQUIRES_OK(ctx, path.status());
    // Inside an allowed directory (just checked), so creating it is safe;
    // TensorFlow's savers create the checkpoint directory too.
    std::error_code ec;
    std::filesystem::create_directories(path->parent_path(), ec);
    TFD_OP_REQUIRES(ctx, !ec,
                    errors::FailedPrecondition("cannot create directory '",
                                               path->parent_path().string(), "': ", ec.message()));
    std::vector<Tensor> tensors;
    for (int i = first; i < ctx.num_inputs(); ++i) tensors.push_back(ctx.input(i));
    TFD_OP_REQUIRES_OK(ctx, WriteCheckpoint(*path, *names, tensors));
  }

 private:
  const bool v2_;
};

Status CheckDType(const std::filesystem::path& path, const std::string& name, const Tensor& t,
                  DType want) {
  if (t.dtype() == want) return OkStatus();
  return errors::InvalidArgument("tensor '", name, "' in checkpoint '", path.string(), "' is ",
                                 t.Describe(), " but the op expects ", DTypeName(want));
}

class RestoreOp : public OpKernel {
 public:
  explicit RestoreOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("dt", &dtype_));
  }

  void Compute(OpKernelContext& ctx) override {
    auto file = ScalarString(ctx, 0, "file_pattern");
    TFD_OP_REQUIRES_OK(ctx, file.status());
    auto name = ScalarString(ctx, 1, "tensor_name");
    TFD_OP_REQUIRES_OK(ctx, name.status());
    auto path = ctx.env().ResolveIoPath(*file);
    TFD_OP_REQUIRES_OK(ctx, path.status());
    // Charged like any output: assigned to a variable, it is the variable's
    // value from then on.
    auto t = ReadTensor(*path, *name, ctx.env().memory);
    TFD_OP_REQUIRES_OK(ctx, t.status());
    TFD_OP_REQUIRES_OK(ctx, CheckDType(*path, *name, *t, dtype_));
    ctx.set_output(0, std::move(t).value());
  }

 private:
  DType dtype_ = DType::kInvalid;
};

class RestoreV2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const size_t n = static_cast<size_t>(ctx.num_outputs());
    auto file = ScalarString(ctx, 0, "prefix");
    TFD_OP_REQUIRES_OK(ctx, file.status());
    auto names = StringVector(ctx, 1, "tensor_names", n);
    TFD_OP_REQUIRES_OK(ctx, names.status());
    auto slices = StringVector(ctx, 2, "shape_and_slices", n);
    TFD_OP_REQUIRES_OK(ctx, slices.status());
    TFD_OP_REQUIRES_OK(ctx, CheckNoSlices(*slices, *names));
    auto path = ctx.env().ResolveIoPath(*file);
    TFD_OP_REQUIRES_OK(ctx, path.status());
    auto reader = CheckpointReader::Open(*path);
    TFD_OP_REQUIRES_OK(ctx, reader.status());
    for (size_t i = 0; i < n; ++i) {
      auto t = (*reader)->ReadTensor((*names)[i], ctx.env().memory);
      TFD_OP_REQUIRES_OK(ctx, t.status());
      TFD_OP_REQUIRES_OK(ctx,
                         CheckDType(*path, (*names)[i], *t, ctx.output_type(static_cast<int>(i))));
      ctx.set_output(static_cast<int>(i), std::move(t).value());
    }
  }
};

Status SaveShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  return OkStatus();
}

Status SaveV2Shape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(SaveShape(c));
  return c.WithRank(2, 1);
}

Status RestoreShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  return shape_fns::Unknown(c);
}

Status RestoreV2Shape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 1));
  return shape_fns::Unknown(c);
}

}  // namespace

Status RegisterSaveRestoreOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<SaveOp>(
      OpDefBuilder("Save")
          .Input("filename: string")
          .Input("tensor_names: string")
          .Input("data: T")
          .Attr("T: list(type) >= 1")
          .SetIsStateful()
          .Doc("Writes data under tensor_names to the checkpoint file filename, atomically "
               "(the old file stays intact if the write fails); the path must lie in the "
               "task's allowed directories. Shape: filename [], tensor_names [N]; no outputs."),
      SaveShape));
  TFD_RETURN_IF_ERROR(r.Add<SaveOp>(
      OpDefBuilder("SaveV2")
          .Input("prefix: string")
          .Input("tensor_names: string")
          .Input("shape_and_slices: string")
          .Input("tensors: dtypes")
          .Attr("dtypes: list(type) >= 1")
          .SetIsStateful()
          .Doc("Save with TensorFlow's V2 signature: one file at prefix; every slice spec "
               "must be empty (whole tensors). Shape: prefix [], names and slices [N]; no "
               "outputs."),
      SaveV2Shape));
  TFD_RETURN_IF_ERROR(r.Add<RestoreOp>(
      OpDefBuilder("Restore")
          .Input("file_pattern: string")
          .Input("tensor_name: string")
          .Output("tensor: dt")
          .Attr("dt: type")
          .Attr("preferred_shard: int = -1")
          .SetIsStateful()
          .Doc("Reads tensor_name from the checkpoint file file_pattern (an exact path; "
               "preferred_shard is ignored), verifying its checksum. Shape: as stored, known "
               "at run time."),
      RestoreShape));
  TFD_RETURN_IF_ERROR(r.Add<RestoreV2Op>(
      OpDefBuilder("RestoreV2")
          .Input("prefix: string")
          .Input("tensor_names: string")
          .Input("shape_and_slices: string")
          .Output("tensors: dtypes")
          .Attr("dtypes: list(type) >= 1")
          .SetIsStateful()
          .Doc("Reads several tensors from the checkpoint file prefix; slice specs must be "
               "empty. Shape: as stored, known at run time."),
      RestoreV2Shape));
  return OkStatus();
}

}  // namespace tfd::kernels::io
