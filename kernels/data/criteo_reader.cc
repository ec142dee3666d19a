// CriteoReader: line assembly over a fixed buffer, shard selection, epochs.
#include "kernels/data/criteo_reader.h"

#include <cerrno>
#include <cstring>
#include <utility>

namespace tfd::kernels::data {
namespace {

constexpr size_t kBufferBytes = 256 << 10;

}  // namespace

CriteoReader::CriteoReader(CriteoReaderOptions options)
    : options_(std::move(options)), buf_(kBufferBytes) {
  epoch_ = options_.start_epoch;
}

CriteoReader::~CriteoReader() = default;

std::string CriteoReader::Where() const {
  return "line " + std::to_string(line_number_) + " of Criteo file '" +
         options_.names[file_index_] + "'";
}

Status CriteoReader::OpenFile(size_t index) {
  const std::string& name = options_.names[index];
  std::error_code ec;
  if (!std::filesystem::is_regular_file(options_.files[index], ec)) {
    return errors::NotFound("Criteo file '", name, "' does not exist or is not a regular file");
  }
  file_.reset(std::fopen(options_.files[index].c_str(), "rb"));
  if (!file_) {
    return errors::FailedPrecondition("cannot open Criteo file '", name,
                                      "': ", std::strerror(errno));
  }
  file_index_ = index;
  file_done_ = false;
  line_number_ = 0;
  buf_begin_ = buf_end_ = 0;
  return OkStatus();
}

StatusOr<bool> CriteoReader::Refill() {
  if (file_done_) return false;
  buf_begin_ = 0;
  buf_end_ = std::fread(buf_.data(), 1, buf_.size(), file_.get());
  if (buf_end_ > 0) return true;
  if (std::ferror(file_.get())) {
    return errors::FailedPrecondition("reading Criteo file '", options_.names[file_index_],
                                      "' failed after line ", line_number_, ": ",
                                      std::strerror(errno));
  }
  file_done_ = true;
  return false;
}

StatusOr<bool> CriteoReader::NextLine() {
  line_.clear();
  for (;;) {
    if (!file_) {
      if (file_index_ >= options_.files.size()) return false;
      TFD_RETURN_IF_ERROR(OpenFile(file_index_));
    }
    const char* begin = buf_.data() + buf_begin_;
    const auto* nl = static_cast<const char*>(std::memchr(begin, '\n', buf_end_ - buf_begin_));
    const size_t take = nl ? static_cast<size_t>(nl - begin) : buf_end_ - buf_begin_;
    if (line_.size() + take > kMaxCriteoLineBytes) {
      ++line_number_;
      return errors::InvalidArgument(Where(), " is longer than ", kMaxCriteoLineBytes,
                                     " bytes: not Criteo TSV (its lines are a few hundred)");
    }
    line_.append(begin, take);
    buf_begin_ += take;
    if (nl) {
      ++buf_begin_;
      ++line_number_;
      return true;
    }
    TFD_ASSIGN_OR_RETURN(bool more, Refill());
    if (more) continue;
    if (!line_.empty()) {  // the last line, without its '\n'
      ++line_number_;
      return true;
    }
    file_.reset();
    ++file_index_;
  }
}

StatusOr<bool> CriteoReader::NextEpoch() {
  if (position_ == 0) {
    return errors::OutOfRange("the Criteo files hold no example for shard ",
                              options_.shard_index, " of ", options_.num_shards, " (",
                              line_in_epoch_, " lines in all)");
  }
  ++epoch_;
  position_ = 0;
  line_in_epoch_ = 0;
  file_.reset();
  file_index_ = 0;
  return options_.epochs < 0 || epoch_ < options_.epochs;
}

Status CriteoReader::SkipToStart() {
  if (options_.epochs >= 0 && epoch_ >= options_.epochs) return OkStatus();  // exhausted
  while (position_ < options_.start_position) {
    TFD_ASSIGN_OR_RETURN(bool got, NextLine());
    if (!got) {
      return errors::FailedPrecondition(
          "the saved input position (epoch ", options_.start_epoch, ", ",
          options_.start_position, " examples in) lies past the Criteo files, whose shard ",
          options_.shard_index, " of ", options_.num_shards, " holds ", position_,
          " examples per epoch");
    }
    if (line_in_epoch_++ % options_.num_shards == options_.shard_index) ++position_;
  }
  return OkStatus();
}

StatusOr<bool> CriteoReader::Next(CriteoExample& out) {
  if (!failed_.ok()) return failed_;
  auto got = NextExample(out);
  if (!got.ok()) failed_ = got.status();
  return got;
}

StatusOr<bool> CriteoReader::NextExample(CriteoExample& out) {
  if (!started_) {
    TFD_RETURN_IF_ERROR(SkipToStart());
    started_ = true;
    TFD_RETURN_IF_ERROR(ReadOn());
  }
  if (!have_line_) return false;  // the last epoch is done
  have_line_ = false;
  TFD_RETURN_IF_ERROR(ParseCriteoLine(line_, options_.num_buckets, out).WithContext(Where()));
  ++position_;
  // The next line now, so that the place after an epoch's last example is
  // the next epoch's start. What fails there is this call's successor's
  // error: this example was read.
  if (Status next = ReadOn(); !next.ok()) failed_ = next;
  return true;
}

Status CriteoReader::ReadOn() {
  for (;;) {
    if (options_.epochs >= 0 && epoch_ >= options_.epochs) return OkStatus();
    TFD_ASSIGN_OR_RETURN(bool got, NextLine());
    if (!got) {
      TFD_ASSIGN_OR_RETURN(bool more, NextEpoch());
      if (!more) return OkStatus();
      continue;
    }
    if (line_in_epoch_++ % options_.num_shards != options_.shard_index) continue;
    have_line_ = true;
    return OkStatus();
  }
}

}  // namespace tfd::kernels::data
