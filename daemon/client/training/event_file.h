// EventFileWriter: a TensorBoard event file of scalar and histogram
// summaries (summaries.h), written as TensorFlow's summary writer writes
// it, so `tensorboard --logdir DIR` plots what `tfctl train --logdir DIR`
// logged.
//
// The file is a TFRecord stream: each record is its length (uint64, little
// endian), the masked CRC-32C of those 8 bytes, the data, and the masked
// CRC-32C of the data (mask: rotate right by 15, add 0xa282ead8). Each
// record holds a tensorflow.Event protocol buffer, encoded here by hand
// since only a few fields are needed: Event.wall_time (1, double),
// Event.step (2, int64), Event.file_version (3, string, the first record:
// "brain.Event:2"), Event.summary (5, Summary); Summary.value (1,
// repeated Value); Value.tag (1, string), Value.simple_value (2, float),
// Value.histo (5, HistogramProto: min, max, num, sum, sum_squares as
// doubles 1-5, bucket_limit and bucket as packed doubles 6 and 7).
//
//   TFD_ASSIGN_OR_RETURN(auto events, EventFileWriter::Create("runs/1"));
//   TFD_RETURN_IF_ERROR(events->Write(step, {.scalars = {{"loss", 0.3}}}));
//
// Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "daemon/client/training/summaries.h"

namespace tfd::training {

class EventFileWriter {
 public:
  // Creates `dir` (and its parents) and in it
  // events.out.tfevents.<unix seconds>.<host>.<pid>[.N], starting with the
  // file_version record. INVALID_ARGUMENT naming the path when either
  // cannot be made.
  static StatusOr<std::unique_ptr<EventFileWriter>> Create(const std::string& dir);
  // Takes `file`, open for writing at `path` (what Create does).
  EventFileWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // One event at `step` with a value per scalar and histogram, flushed so
  // that TensorBoard sees it while training goes on. INTERNAL naming the
  // file when it cannot be written (a full disk).
  Status Write(int64_t step, const Summaries& summaries);

  const std::string& path() const { return path_; }

 private:
  Status WriteRecord(const std::string& data);

  std::string path_;
  std::FILE* file_;
};

// The TFRecord framing of `data`, and the mask it applies to CRC-32C:
// exposed for tests.
std::string TfRecord(const std::string& data);
uint32_t MaskedCrc32c(const void* data, size_t n);

}  // namespace tfd::training
