// EventFileWriter: a TensorBoard event file, written as TensorFlow's
// summary writer writes it, so `tensorboard --logdir DIR` plots what
// `tfctl train --logdir DIR`, MonitoredTrainingSession or
// tfd.summary.FileWriter logged.
//
// The file is a TFRecord stream: each record is its length (uint64, little
// endian), the masked CRC-32C of those 8 bytes, the data, and the masked
// CRC-32C of the data (mask: rotate right by 15, add 0xa282ead8). Each
// record holds a tensorflow.Event protocol buffer, of which tfd writes
// Event.wall_time (1, double), Event.step (2, int64), Event.file_version
// (3, string, the first record: "brain.Event:2"), Event.graph_def (4, a
// serialized tensorflow.GraphDef) and Event.summary (5, a
// tensorflow.Summary: common/summary_proto.h).
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
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/summary_proto.h"

namespace tfd::training {

class EventFileWriter {
 public:
  // Creates `dir` (and its parents) and in it
  // events.out.tfevents.<unix seconds>.<host>.<pid>[.N]<suffix>, starting
  // with the file_version record. INVALID_ARGUMENT naming the path when
  // either cannot be made.
  static StatusOr<std::unique_ptr<EventFileWriter>> Create(const std::string& dir,
                                                           const std::string& suffix = "");
  // Takes `file`, open for writing at `path` (what Create does).
  EventFileWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  // One event at `step` with a value per scalar and histogram, flushed so
  // that TensorBoard sees it while training goes on. INTERNAL naming the
  // file when it cannot be written (a full disk).
  Status Write(int64_t step, const summary::Summary& summaries);
  // The same with a serialized tensorflow.Summary (a summary op's output),
  // written as it is.
  Status WriteSerialized(int64_t step, std::string_view summary);
  // An event holding a serialized tensorflow.GraphDef, TensorBoard's graph.
  Status WriteGraph(std::string_view graph_def);

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
