// The TF1 reader resource; see record_reader.h.
#include "kernels/io/record_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>
#include <utility>

#include "common/tensor_bundle/crc32c.h"

namespace tfd::kernels::io {

RecordReader::RecordReader(std::string name, RecordFormat format)
    : name_(std::move(name)), format_(format) {}

std::string RecordReader::DebugString() const {
  MutexLock lock(mu_);
  return "reader '" + name_ + "': " + (!open_ ? "no file" : "in '" + file_ + "'") + ", " +
         std::to_string(records_produced_) + " records produced";
}

ResourceDescription RecordReader::Describe() const {
  MutexLock lock(mu_);
  return {.kind = "reader",
          .gauges = {{"records_produced", "Records each reader has handed out.",
                      static_cast<double>(records_produced_)},
                     {"work_units_completed", "Files each reader has read to their end.",
                      static_cast<double>(work_units_completed_)}}};
}

int64_t RecordReader::records_produced() const {
  MutexLock lock(mu_);
  return records_produced_;
}

int64_t RecordReader::work_units_completed() const {
  MutexLock lock(mu_);
  return work_units_completed_;
}

void RecordReader::Reset() {
  MutexLock lock(mu_);
  CloseFileLocked();
  deferred_ = OkStatus();
  records_produced_ = work_units_completed_ = 0;
}

void RecordReader::Read(std::shared_ptr<Queue> queue, int64_t max_records, const KernelEnv& env,
                        CancellationManager* cm, ReadDone done) {
  {
    MutexLock lock(mu_);
    requests_.push_back(Request{std::move(queue), max_records, &env, cm, std::move(done)});
    if (pumping_) return;
    pumping_ = true;
  }
  Pump();
}

void RecordReader::Pump() {
  for (;;) {
    Request served;
    Status status;
    Batch batch;
    {
      MutexLock lock(mu_);
      if (requests_.empty()) {
        pumping_ = false;
        return;
      }
      if (!deferred_.ok()) {
        status = std::exchange(deferred_, OkStatus());
      } else if (!open_) {
        const Request next = requests_.front();  // stays first until a file is open
        lock.Unlock();
        TakeFileFromQueue(next);  // its callback pumps on
        return;
      } else {
        status = FillLocked(requests_.front().max_records, &batch);
        if (status.ok() && batch.keys.empty()) continue;  // the file is done: the next one
      }
      served = std::move(requests_.front());
      requests_.pop_front();
    }
    served.done(status, std::move(batch.keys), std::move(batch.values));
  }
}

Status RecordReader::FillLocked(int64_t max_records, Batch* batch) {
  while (static_cast<int64_t>(batch->keys.size()) < max_records) {
    std::string key, value;
    if (held_) {
      key = std::move(held_->first);
      value = std::move(held_->second);
      held_.reset();
    } else {
      const StatusOr<bool> got = NextRecordLocked(&key, &value);
      if (!got.ok() || !*got) {
        CloseFileLocked();  // a broken file is left behind; a read takes the next one
        if (got.ok()) {
          ++work_units_completed_;
          return OkStatus();
        }
        if (batch->keys.empty()) return got.status();
        deferred_ = got.status();
        return OkStatus();
      }
    }
    if (!batch->keys.empty() && batch->bytes + value.size() > max_record_bytes_) {
      held_.emplace(std::move(key), std::move(value));
      return OkStatus();
    }
    batch->bytes += value.size();
    batch->keys.push_back(std::move(key));
    batch->values.push_back(std::move(value));
    ++records_produced_;
  }
  return OkStatus();
}

void RecordReader::TakeFileFromQueue(const Request& r) {
  auto self = shared_from_this();
  const KernelEnv* env = r.env;
  r.queue->TryDequeue(
      1, Queue::Take::kExactly, r.cm,
      [self, env, queue = r.queue](const Status& s, std::vector<Queue::Tuple> got) {
        Status error = s;
        Request failed;
        {
          MutexLock lock(self->mu_);
          if (error.ok()) {
            const Queue::Tuple& t = got[0];
            if (t.size() != 1 || t[0].dtype() != DType::kString || t[0].rank() != 0) {
              error = errors::InvalidArgument("reader '", self->name_,
                                              "' takes file names from "
                                              "queue '",
                                              queue->name(),
                                              "', whose elements are "
                                              "not one string scalar");
            } else {
              error = self->OpenLocked(t[0].scalar<std::string>(), *env);
            }
          }
          if (!error.ok()) {
            failed = std::move(self->requests_.front());
            self->requests_.pop_front();
          }
        }
        if (!error.ok()) failed.done(error, {}, {});
        self->Pump();
      });
}

Status RecordReader::OpenLocked(const std::string& name, const KernelEnv& env) {
  max_record_bytes_ = env.limits.max_tensor_bytes;
  if (format_.kind == RecordFormat::Kind::kIdentity) {  // the name is the record
    file_ = name;
    open_ = true;
    record_in_file_ = 0;
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(std::filesystem::path path, env.ResolveIoPath(name));
  auto file = std::make_unique<std::filebuf>();
  if (!file->open(path, std::ios::binary | std::ios::in)) {
    return errors::NotFound("reader '", name_, "' cannot open '", name, "'");
  }
  file_ = name;
  open_ = true;
  record_in_file_ = 0;
  if (format_.compression != Compression::kNone) {
    auto inflating = std::make_unique<InflateStreambuf>(std::move(file), format_.compression);
    inflate_ = inflating.get();
    buf_ = std::move(inflating);
  } else {
    buf_ = std::move(file);
  }
  in_.rdbuf(buf_.get());
  in_.clear();
  if (format_.kind == RecordFormat::Kind::kTextLine) {
    std::string skipped;
    while (record_in_file_ < format_.skip_header_lines && std::getline(in_, skipped)) {
      ++record_in_file_;
    }
    return OkStatus();
  }
  std::error_code ec;
  const auto size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (format_.kind == RecordFormat::Kind::kTFRecord) {
    data_end_ = inflate_ != nullptr ? std::numeric_limits<int64_t>::max() : ec ? 0 : size;
    return OkStatus();
  }
  if (format_.kind == RecordFormat::Kind::kWholeFile) {
    data_end_ = ec ? -1 : size;
    if (ec || static_cast<uint64_t>(size) > max_record_bytes_) {
      CloseFileLocked();
      return ec ? errors::Internal("reader '", name_, "' cannot size '", name, "': ", ec.message())
                : errors::ResourceExhausted("reader '", name_, "': file '", name, "' holds ", size,
                                            " bytes, more than a tensor may (", max_record_bytes_,
                                            ", --max-tensor-bytes)");
    }
    return OkStatus();
  }
  const int64_t records = size - format_.header_bytes - format_.footer_bytes;
  if (ec || records < 0 || (format_.hop_bytes == 0 && records % format_.record_bytes != 0)) {
    CloseFileLocked();
    return errors::InvalidArgument("reader '", name_, "': file '", name, "' (", ec ? -1 : size,
                                   " bytes) does not hold whole records of ", format_.record_bytes,
                                   " bytes between a header of ", format_.header_bytes,
                                   " and a footer of ", format_.footer_bytes);
  }
  data_end_ = size - format_.footer_bytes;
  in_.seekg(format_.header_bytes);
  return OkStatus();
}

void RecordReader::CloseFileLocked() {
  file_.clear();
  held_.reset();
  open_ = false;
  in_.rdbuf(nullptr);
  inflate_ = nullptr;
  buf_.reset();
}

// TFRecord framing: length (uint64), its masked CRC-32C (uint32), the
// data, the data's masked CRC-32C; little-endian.
namespace {

uint32_t MaskedCrc(const void* data, size_t n) {
  const uint32_t crc = crc32c::Value(data, n);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

template <typename T>
T LittleEndian(const char* p) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

}  // namespace

StatusOr<bool> RecordReader::NextTFRecordLocked(std::string* key, std::string* value) {
  const int64_t at = in_.tellg();
  if (at >= data_end_) return false;
  // Not a lambda: the thread-safety analysis would not see mu_ held in one.
  const std::string where =
      "reader '" + name_ + "': TFRecord at offset " + std::to_string(at) + " of '" + file_ + "'";
  // A record takes 16 bytes besides its data; a compressed file's end is
  // not known before it is reached (data_end_ is then the largest int64_t).
  const int64_t left = data_end_ - at;
  if (left < 16) return errors::DataLoss(where, " is cut short");
  char header[12];
  in_.read(header, 12);
  if (in_.gcount() == 0 && inflate_ != nullptr && inflate_->status().ok()) return false;
  if (in_.gcount() < 12) return ShortReadLocked(where, " is cut short");
  const auto length = LittleEndian<uint64_t>(header);
  if (LittleEndian<uint32_t>(header + 8) != MaskedCrc(header, 8)) {
    return errors::DataLoss(where, " has a length that fails its checksum");
  }
  if (length > static_cast<uint64_t>(left - 16)) {
    return errors::DataLoss(where, " runs past the file");
  }
  if (length > max_record_bytes_) {
    return errors::ResourceExhausted(where, " holds ", length, " bytes, more than a tensor may (",
                                     max_record_bytes_, ", --max-tensor-bytes)");
  }
  // In slices, so that a compressed file cut short after a length it
  // claims costs no more memory than the data it holds.
  constexpr uint64_t kSlice = uint64_t{16} << 20;
  value->clear();
  while (value->size() < length) {
    const size_t had = value->size();
    const auto n = static_cast<std::streamsize>(std::min<uint64_t>(kSlice, length - had));
    value->resize(had + n);
    if (!in_.read(value->data() + had, n)) return ShortReadLocked(where, " runs past the file");
  }
  char footer[4];
  if (!in_.read(footer, 4)) return ShortReadLocked(where, " is cut short");
  if (LittleEndian<uint32_t>(footer) != MaskedCrc(value->data(), length)) {
    return errors::DataLoss(where, " has data that fails its checksum");
  }
  *key = file_ + ":" + std::to_string(at);
  ++record_in_file_;
  return true;
}

Status RecordReader::ShortReadLocked(const std::string& where, const char* what) {
  if (inflate_ != nullptr && !inflate_->status().ok()) {
    return inflate_->status().WithContext(where);
  }
  if (in_.bad()) return errors::Internal("reader '", name_, "' failed reading '", file_, "'");
  return errors::DataLoss(where, what);
}

StatusOr<bool> RecordReader::NextRecordLocked(std::string* key, std::string* value) {
  if (format_.kind == RecordFormat::Kind::kTFRecord) return NextTFRecordLocked(key, value);
  if (format_.kind == RecordFormat::Kind::kIdentity ||
      format_.kind == RecordFormat::Kind::kWholeFile) {
    if (record_in_file_ > 0) return false;
    if (format_.kind == RecordFormat::Kind::kIdentity) {
      *value = file_;
    } else {
      value->resize(static_cast<size_t>(data_end_));
      if (!in_.read(value->data(), data_end_) || in_.peek() != std::char_traits<char>::eof()) {
        return errors::DataLoss("reader '", name_, "': '", file_, "' changed size while read");
      }
    }
    *key = file_;
    ++record_in_file_;
    return true;
  }
  if (format_.kind == RecordFormat::Kind::kTextLine) {
    if (!std::getline(in_, *value)) {
      if (in_.bad()) return errors::Internal("reader '", name_, "' failed reading '", file_, "'");
      return false;
    }
    if (!value->empty() && value->back() == '\r') value->pop_back();
    *key = file_ + ":" + std::to_string(++record_in_file_);
    return true;
  }
  const int64_t hop = format_.hop_bytes > 0 ? format_.hop_bytes : format_.record_bytes;
  const int64_t at = format_.header_bytes + record_in_file_ * hop;
  if (at >= data_end_ || format_.record_bytes > data_end_ - at) return false;
  if (format_.hop_bytes > 0) in_.seekg(at);  // records overlap, or leave gaps
  value->resize(format_.record_bytes);
  if (!in_.read(value->data(), format_.record_bytes)) {
    return errors::Internal("reader '", name_, "' failed reading record ", record_in_file_, " of '",
                            file_, "'");
  }
  *key = file_ + ":" + std::to_string(record_in_file_++);
  return true;
}

}  // namespace tfd::kernels::io
