// TF1's reader ops (their V1 forms, whose handles are references, as tfd's
// queues' are): TextLineReader, FixedLengthRecordReader, TFRecordReader,
// WholeFileReader and IdentityReader make or find the reader
// (record_reader.h); ReaderRead takes its next record and ReaderReadUpTo
// its next records, waiting without a thread for a file name; ReaderNumRecordsProduced,
// ReaderNumWorkUnitsCompleted and ReaderReset.
#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/io/io_ops_internal.h"
#include "kernels/io/record_reader.h"

namespace tfd::kernels::io {
namespace {

// The reader ops: the node's reader, made by its first run.
class ReaderOp : public OpKernel {
 public:
  explicit ReaderOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("container", &container_));
    c.SetStatus(c.GetAttr("shared_name", &shared_name_));
    if (c.def().name == "TextLineReader") {
      c.SetStatus(c.GetAttr("skip_header_lines", &format_.skip_header_lines));
      if (c.status().ok() && format_.skip_header_lines < 0) {
        c.SetStatus(errors::InvalidArgument("skip_header_lines must be >= 0, not ",
                                            format_.skip_header_lines));
      }
      return;
    }
    if (c.def().name == "WholeFileReader") {
      format_.kind = RecordFormat::Kind::kWholeFile;
      return;
    }
    if (c.def().name == "IdentityReader") {
      format_.kind = RecordFormat::Kind::kIdentity;
      return;
    }
    if (c.def().name == "TFRecordReader") {
      format_.kind = RecordFormat::Kind::kTFRecord;
      std::string compression;
      c.SetStatus(c.GetAttr("compression_type", &compression));
      if (!c.status().ok()) return;
      auto parsed = CompressionFromName(compression);
      c.SetStatus(parsed.status());
      if (parsed.ok()) format_.compression = *parsed;
      return;
    }
    format_.kind = RecordFormat::Kind::kFixedLength;
    std::string encoding;
    c.SetStatus(c.GetAttr("header_bytes", &format_.header_bytes));
    c.SetStatus(c.GetAttr("record_bytes", &format_.record_bytes));
    c.SetStatus(c.GetAttr("footer_bytes", &format_.footer_bytes));
    c.SetStatus(c.GetAttr("hop_bytes", &format_.hop_bytes));
    c.SetStatus(c.GetAttr("encoding", &encoding));
    if (!c.status().ok()) return;
    if (format_.record_bytes <= 0 || format_.header_bytes < 0 || format_.footer_bytes < 0 ||
        format_.hop_bytes < 0) {
      c.SetStatus(errors::InvalidArgument(
          "record_bytes must be > 0, header_bytes, footer_bytes and hop_bytes >= 0; got ",
          format_.record_bytes, ", ", format_.header_bytes, ", ", format_.footer_bytes, ", ",
          format_.hop_bytes));
    } else if (!encoding.empty()) {
      c.SetStatus(errors::Unimplemented("encoding (compressed files) is not supported; got '",
                                        encoding, "'"));
    }
  }
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    const std::string& name = shared_name_.empty() ? ctx.node().name : shared_name_;
    auto r = ctx.resources().LookupOrCreate<RecordReader>(
        container_, name, [&]() -> StatusOr<std::shared_ptr<RecordReader>> {
          return std::make_shared<RecordReader>(name, format_);
        });
    TFD_OP_REQUIRES_OK(ctx, r.status());
    ctx.set_output_ref(0, *r);
  }

 private:
  RecordFormat format_;
  std::string container_, shared_name_;
};

// ReaderRead (one record, scalars) and ReaderReadUpTo (vectors).
class ReaderReadOp : public AsyncOpKernel {
 public:
  explicit ReaderReadOp(OpKernelConstruction& c)
      : AsyncOpKernel(c), up_to_(c.def().name == "ReaderReadUpTo") {}
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto reader = ctx.input_ref<RecordReader>(0);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, reader.status(), done);
    auto queue = ctx.input_ref<Queue>(1);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    auto max_records = up_to_ ? NumRecords(ctx.input(2)) : StatusOr<int64_t>(1);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, max_records.status(), done);
    (*reader)->Read(
        *queue, *max_records, ctx.env(), &ctx.cancellation(),
        [this, &ctx, done = std::move(done)](const Status& s, std::vector<std::string> keys,
                                             std::vector<std::string> values) {
          if (!s.ok()) {
            ctx.SetStatus(s);
          } else if (up_to_) {
            SetVector(ctx, 0, std::move(keys));
            SetVector(ctx, 1, std::move(values));
          } else {
            ctx.set_output(0, Tensor::Scalar(std::move(keys[0])));
            ctx.set_output(1, Tensor::Scalar(std::move(values[0])));
          }
          done();
        });
  }

 private:
  static StatusOr<int64_t> NumRecords(const Tensor& t) {
    if (t.rank() != 0 || t.scalar<int64_t>() <= 0) {
      return errors::InvalidArgument(
          "num_records must be a positive scalar, got ",
          t.rank() != 0 ? t.shape().ToString() : std::to_string(t.scalar<int64_t>()));
    }
    return t.scalar<int64_t>();
  }

  // Output i: the strings, moved.
  static void SetVector(OpKernelContext& ctx, int i, std::vector<std::string> strings) {
    auto t = Tensor::Allocate(DType::kString, TensorShape({static_cast<int64_t>(strings.size())}));
    if (!t.ok()) return ctx.SetStatus(t.status());
    std::move(strings.begin(), strings.end(), t->data<std::string>());
    ctx.set_output(i, *std::move(t));
  }

  const bool up_to_;
};

// ReaderNumRecordsProduced, ReaderNumWorkUnitsCompleted, ReaderReset.
class ReaderStateOp : public OpKernel {
 public:
  explicit ReaderStateOp(OpKernelConstruction& c) : OpKernel(c), op_(c.def().name) {}
  void Compute(OpKernelContext& ctx) override {
    auto reader = ctx.input_ref<RecordReader>(0);
    TFD_OP_REQUIRES_OK(ctx, reader.status());
    if (op_ == "ReaderReset") {
      (*reader)->Reset();
    } else {
      ctx.set_output(0, Tensor::Scalar<int64_t>(op_ == "ReaderNumRecordsProduced"
                                                    ? (*reader)->records_produced()
                                                    : (*reader)->work_units_completed()));
    }
  }
  bool is_cheap() const override { return true; }

 private:
  const std::string op_;
};

Status KeyValueShape(InferenceContext& c) {
  c.set_output(0, PartialShape({}));
  c.set_output(1, PartialShape({}));
  return OkStatus();
}

Status KeysValuesShape(InferenceContext& c) {
  c.set_output(0, PartialShape({-1}));
  c.set_output(1, PartialShape({-1}));
  return OkStatus();
}

}  // namespace

Status RegisterReaderOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ReaderOp>(
      OpDefBuilder("TextLineReader")
          .Output("reader_handle: Ref(string)")
          .Attr("skip_header_lines: int = 0")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .SetIsStateful()
          .Doc("A reader of text files, a record per line (without its newline), the first "
               "skip_header_lines of each file skipped; key 'file:line'. Kept by the task, "
               "found by container and shared_name (the node name when empty). Shape: a "
               "reference."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<ReaderOp>(
      OpDefBuilder("FixedLengthRecordReader")
          .Output("reader_handle: Ref(string)")
          .Attr("header_bytes: int = 0")
          .Attr("record_bytes: int")
          .Attr("footer_bytes: int = 0")
          .Attr("hop_bytes: int = 0")
          .Attr("encoding: string = \"\"")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .SetIsStateful()
          .Doc("A reader of files of fixed-length records (CIFAR-10's binary files) between "
               "a header and a footer; key 'file:index'. A file its records do not fill "
               "exactly is INVALID_ARGUMENT. With hop_bytes > 0 a record starts every "
               "hop_bytes (overlapping or with gaps), and the bytes after the last whole "
               "record are left. encoding is UNIMPLEMENTED. Shape: a reference."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<ReaderOp>(
      OpDefBuilder("TFRecordReader")
          .Output("reader_handle: Ref(string)")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .Attr("compression_type: string = \"\"")
          .SetIsStateful()
          .Doc("A reader of TFRecord files (each record framed by its length and CRC-32C "
               "checksums), compressed as a whole when compression_type is ZLIB or GZIP; key "
               "'file:offset' (in the inflated data). A record failing a checksum or cut "
               "short, or a damaged compressed stream, is DATA_LOSS and the rest of its file "
               "skipped. Shape: a reference."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<ReaderOp>(
      OpDefBuilder("WholeFileReader")
          .Output("reader_handle: Ref(string)")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .SetIsStateful()
          .Doc("A reader of whole files: each file one record, its key the file's name as "
               "queued. A file larger than a tensor may be (--max-tensor-bytes) is "
               "RESOURCE_EXHAUSTED before it is read. Shape: a reference."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<ReaderOp>(
      OpDefBuilder("IdentityReader")
          .Output("reader_handle: Ref(string)")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .SetIsStateful()
          .Doc("A reader that opens nothing: each string taken from the queue is one record, "
               "its key and its value. Shape: a reference."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<ReaderReadOp>(
      OpDefBuilder("ReaderRead")
          .Input("reader_handle: Ref(string)")
          .Input("queue_handle: Ref(string)")
          .Output("key: string")
          .Output("value: string")
          .SetIsStateful()
          .Doc("The reader's next record, taking the next file name from the queue (waiting "
               "without a thread) when its file is done; OUT_OF_RANGE once the queue is "
               "closed and empty. Files are opened within the task's io_dirs. Shape: [] and []."),
      KeyValueShape));
  TFD_RETURN_IF_ERROR(r.Add<ReaderReadOp>(
      OpDefBuilder("ReaderReadUpTo")
          .Input("reader_handle: Ref(string)")
          .Input("queue_handle: Ref(string)")
          .Input("num_records: int64")
          .Output("keys: string")
          .Output("values: string")
          .SetIsStateful()
          .Doc("The reader's next 1 to num_records (> 0) records, as ReaderRead takes them; "
               "fewer at the end of a file (a batch never spans two files) or where more would "
               "take the values past --max-tensor-bytes. A bad record after others ends the "
               "read with those; the next read fails with its error. Shape: [?] and [?]."),
      KeysValuesShape));
  TFD_RETURN_IF_ERROR(
      r.Add<ReaderStateOp>(OpDefBuilder("ReaderNumRecordsProduced")
                               .Input("reader_handle: Ref(string)")
                               .Output("records_produced: int64")
                               .SetIsStateful()
                               .Doc("How many records the reader has handed out. Shape: []."),
                           shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(
      r.Add<ReaderStateOp>(OpDefBuilder("ReaderNumWorkUnitsCompleted")
                               .Input("reader_handle: Ref(string)")
                               .Output("units_completed: int64")
                               .SetIsStateful()
                               .Doc("How many files the reader has read to their end. Shape: []."),
                           shape_fns::Scalar));
  return r.Add<ReaderStateOp>(
      OpDefBuilder("ReaderReset")
          .Input("reader_handle: Ref(string)")
          .SetIsStateful()
          .Doc("Forgets the reader's current file and counts. Shape: no outputs."),
      shape_fns::NoOutputs);
}

}  // namespace tfd::kernels::io
