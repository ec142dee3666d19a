// RecordReader: TF1's readers (TextLineReader, FixedLengthRecordReader,
// TFRecordReader, WholeFileReader; IdentityReader), which turn a queue of
// file names into records, one file at a time: the
// classic input pipeline of string_input_producer -> reader.read ->
// decode_csv / decode_raw -> shuffle_batch.
//
// A reader lives in the task's ResourceMgr (by container and shared_name,
// like a queue), so its place in its current file carries from step to
// step. Read hands out the next records of the current file, up to the
// number asked for (TF1's ReaderReadUpTo; ReaderRead asks for one): it
// stops early at the end of the file, as TF1's does, so a batch never spans
// two files, and before a record that would take its values past
// --max-tensor-bytes (that record starts the next read). A file done
// before any record was read, it takes the next name from the queue,
// waiting without a thread as a dequeue does, and fails OUT_OF_RANGE once
// the queue is closed and empty (which ends a QueueRunner-fed epoch loop,
// as in TF1). A bad record met after others of the same read ends the read
// with those, and the next read fails with its error: no record read is
// dropped. Reads are served one at a time in arrival order, so concurrent
// reads never share a record or skip one.
//
// Files are opened through the task's io_dirs (KernelEnv::ResolveIoPath).
// A text line's key is "file:line" (from 1, header lines counted); a fixed-
// length record's "file:index" (from 0); a TFRecord's "file:offset"; a
// whole file's, its name; as TF1's. A fixed-length file whose records do
// not fill it exactly is INVALID_ARGUMENT naming it (TF1 reads on into the
// footer, or ends the input with OUT_OF_RANGE); with hop_bytes, records
// start every hop_bytes and the bytes after the last whole one are left,
// as TF1's. A
// TFRecord whose length or data fails its CRC-32C or runs past the end of
// its file is DATA_LOSS, and so is a compressed file's damaged or cut short
// stream (the rest of that file is skipped); a record longer than one
// tensor may be (--max-tensor-bytes), RESOURCE_EXHAUSTED; a failed read of
// an open file, INTERNAL. TFRecord files may be compressed as TF1's
// (compression_type "ZLIB" or "GZIP": the whole file one stream); the
// offset in a key is then the offset in the inflated data.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cancellation.h"
#include "common/mutex.h"
#include "common/op_kernel.h"
#include "kernels/data_flow/queue.h"
#include "kernels/framework/resource.h"
#include "kernels/io/inflate_streambuf.h"

namespace tfd::kernels::io {

struct RecordFormat {
  // kWholeFile: each file one record; kIdentity: each queued string one
  // record (key and value), no file opened.
  enum class Kind { kTextLine, kFixedLength, kTFRecord, kWholeFile, kIdentity };
  Kind kind = Kind::kTextLine;
  int64_t skip_header_lines = 0;                                 // text lines
  int64_t header_bytes = 0, record_bytes = 0, footer_bytes = 0;  // fixed length
  int64_t hop_bytes = 0;  // fixed length: 0, records back to back
  Compression compression = Compression::kNone;                  // TFRecords
};

class RecordReader : public Resource, public std::enable_shared_from_this<RecordReader> {
 public:
  // The records read (keys and values, one each), or the error and none.
  using ReadDone = std::function<void(const Status&, std::vector<std::string> keys,
                                      std::vector<std::string> values)>;

  RecordReader(std::string name, RecordFormat format);

  std::string_view Kind() const override { return "reader"; }
  std::string DebugString() const override;
  // Described as "reader" with gauges records_produced and
  // work_units_completed; not checkpointed.
  ResourceDescription Describe() const override;

  // Reads the next 1 to `max_records` (> 0) records (see above). `env` and
  // `cm` must outlive the call's `done`, which runs on this thread or on
  // the one whose enqueue or close ended the wait.
  void Read(std::shared_ptr<Queue> queue, int64_t max_records, const KernelEnv& env,
            CancellationManager* cm, ReadDone done);

  int64_t records_produced() const;
  int64_t work_units_completed() const;
  // Forgets the current file and the counts (TF1's ReaderReset).
  void Reset();

 private:
  struct Request {
    std::shared_ptr<Queue> queue;
    int64_t max_records;
    const KernelEnv* env;
    CancellationManager* cm;
    ReadDone done;
  };

  struct Batch {
    std::vector<std::string> keys, values;
    uint64_t bytes = 0;  // of the values
  };

  // Serves the waiting requests, in order, until one waits on the queue.
  void Pump();
  // Up to max_records of the open file into `batch` (see above); closes the
  // file at its end or at an error.
  Status FillLocked(int64_t max_records, Batch* batch) REQUIRES(mu_);
  // The next record of the open file into key/value; false at its end.
  StatusOr<bool> NextRecordLocked(std::string* key, std::string* value) REQUIRES(mu_);
  StatusOr<bool> NextTFRecordLocked(std::string* key, std::string* value) REQUIRES(mu_);
  // Why a read of the open file came up short: `what` (DATA_LOSS at
  // `where`) unless the stream says more.
  Status ShortReadLocked(const std::string& where, const char* what) REQUIRES(mu_);
  Status OpenLocked(const std::string& name, const KernelEnv& env) REQUIRES(mu_);
  void CloseFileLocked() REQUIRES(mu_);
  void TakeFileFromQueue(const Request& r);

  const std::string name_;
  const RecordFormat format_;
  mutable Mutex mu_;
  std::deque<Request> requests_ GUARDED_BY(mu_);
  bool pumping_ GUARDED_BY(mu_) = false;  // a Pump runs, or waits on the queue
  std::string file_ GUARDED_BY(mu_);      // the current file (work item), as queued
  bool open_ GUARDED_BY(mu_) = false;     // file_ is being read
  // A record read but not handed out: it would have taken its read past
  // --max-tensor-bytes. Only while open_.
  std::optional<std::pair<std::string, std::string>> held_ GUARDED_BY(mu_);
  // The error of a file met after a read's first records: the next read's.
  Status deferred_ GUARDED_BY(mu_);
  // The open file (a std::filebuf, or an InflateStreambuf over one, which
  // inflate_ then points at) and the stream reading it.
  std::unique_ptr<std::streambuf> buf_ GUARDED_BY(mu_);
  InflateStreambuf* inflate_ GUARDED_BY(mu_) = nullptr;
  std::istream in_ GUARDED_BY(mu_){nullptr};
  int64_t record_in_file_ GUARDED_BY(mu_) = 0;  // lines read, or records handed out
  // Fixed length: where the footer starts; TFRecord and whole file: the
  // size, or the largest int64_t for a compressed file (its end is found
  // by reading).
  int64_t data_end_ GUARDED_BY(mu_) = 0;
  uint64_t max_record_bytes_ GUARDED_BY(mu_) = 0;  // the task's --max-tensor-bytes
  int64_t records_produced_ GUARDED_BY(mu_) = 0;
  int64_t work_units_completed_ GUARDED_BY(mu_) = 0;
};

}  // namespace tfd::kernels::io
