// CriteoReader: streams one shard of a list of Criteo TSV files
// (criteo_line.h), epoch after epoch, holding one buffer and one line at a
// time, so that a 45 M-line day file costs the same memory as a small one.
//
// The files are read in the order given, as one sequence of lines; line k
// of an epoch (counted over all files) belongs to shard k mod num_shards, so
// workers that share the file list read disjoint shards that together cover
// it. Lines of other shards are only counted, not parsed.
//
// The reader's place is (epoch, examples of this shard read in that epoch):
// what a checkpoint keeps (InputPosition). A reader made at a place skips
// to it on its first read. The reader keeps this shard's next line in hand,
// so it knows an epoch is over when it hands out the epoch's last example:
// the place is then the start of the next epoch, and epoch() the number of
// epochs read whole.
//
//   CriteoReader r({.files = {"/data/day_0"}, .names = {"day_0"}, .num_buckets = 1 << 20});
//   CriteoExample ex;
//   TFD_ASSIGN_OR_RETURN(bool got, r.Next(ex));  // false: the last epoch is done
//
// Thread-safety: none; one thread at a time (CriteoDataset's lock).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernels/data/criteo_line.h"

namespace tfd::kernels::data {

struct CriteoReaderOptions {
  std::vector<std::filesystem::path> files;  // resolved paths
  std::vector<std::string> names;            // files[i] as the graph wrote it, for messages
  int64_t num_buckets = 1 << 20;
  int64_t epochs = 1;  // -1: forever
  int64_t shard_index = 0;
  int64_t num_shards = 1;
  // Where to start: epoch, and examples of this shard already read in it.
  int64_t start_epoch = 0;
  int64_t start_position = 0;
};

// A line longer than this is refused (Criteo's lines are a few hundred bytes).
inline constexpr size_t kMaxCriteoLineBytes = 64 << 10;

class CriteoReader {
 public:
  explicit CriteoReader(CriteoReaderOptions options);
  ~CriteoReader();
  CriteoReader(const CriteoReader&) = delete;
  CriteoReader& operator=(const CriteoReader&) = delete;

  // The next example of the shard into `out`: true, or false once the last
  // epoch is done. INVALID_ARGUMENT naming the file and line for a
  // malformed line; NOT_FOUND naming a file that is missing (or not a
  // regular file), FAILED_PRECONDITION one that cannot be opened or read;
  // OUT_OF_RANGE when the files hold no line for this shard;
  // FAILED_PRECONDITION when the start place lies past the data.
  // After an error every later call returns the same error: a reader does
  // not guess where the next good line starts.
  StatusOr<bool> Next(CriteoExample& out);

  int64_t epoch() const { return epoch_; }
  int64_t position() const { return position_; }

 private:
  // The next line of the current epoch into `line_`: true, or false at the
  // epoch's end. Opens the files in turn.
  StatusOr<bool> NextLine();
  // Fills buf_ from the open file; false at its end.
  StatusOr<bool> Refill();
  Status OpenFile(size_t index);
  // Starts the next epoch; false when none is left.
  StatusOr<bool> NextEpoch();
  // Skips to the start place once, before the first example.
  Status SkipToStart();
  // Next's work, before the error is kept.
  StatusOr<bool> NextExample(CriteoExample& out);
  // Reads this shard's next line into `line_` (have_line_), into the next
  // epoch when this one has no more; have_line_ stays false once the last
  // epoch is done.
  Status ReadOn();
  std::string Where() const;  // "line 7 of 'day_0'"

  const CriteoReaderOptions options_;
  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, FileCloser> file_;
  size_t file_index_ = 0;
  int64_t line_number_ = 0;     // in the current file, 1-based once read
  int64_t line_in_epoch_ = 0;   // lines of all files read this epoch
  bool started_ = false;        // SkipToStart done
  bool have_line_ = false;      // line_ is this shard's next line, not yet handed out
  bool file_done_ = false;      // the open file is at its end
  std::vector<char> buf_;
  size_t buf_begin_ = 0, buf_end_ = 0;
  std::string line_;
  Status failed_;               // the first error, returned from then on
  int64_t epoch_ = 0;
  int64_t position_ = 0;        // examples of this shard read this epoch
};

}  // namespace tfd::kernels::data
