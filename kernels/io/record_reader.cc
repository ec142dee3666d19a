// The TF1 reader resource; see record_reader.h.
#include "kernels/io/record_reader.h"

#include <filesystem>
#include <system_error>

#include "common/tensor_bundle/crc32c.h"

namespace tfd::kernels::io {

RecordReader::RecordReader(std::string name, RecordFormat format)
    : name_(std::move(name)), format_(format) {}

std::string RecordReader::DebugString() const {
  MutexLock lock(mu_);
  return "reader '" + name_ + "': " + (file_.empty() ? "no file" : "in '" + file_ + "'") + ", " +
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
  file_.clear();
  in_.close();
  records_produced_ = work_units_completed_ = 0;
}

void RecordReader::Read(std::shared_ptr<Queue> queue, const KernelEnv& env, CancellationManager* cm,
                        ReadDone done) {
  {
    MutexLock lock(mu_);
    requests_.push_back(Request{std::move(queue), &env, cm, std::move(done)});
    if (pumping_) return;
    pumping_ = true;
  }
  Pump();
}

void RecordReader::Pump() {
  for (;;) {
    Request served;
    Status status;
    std::string key, value;
    {
      MutexLock lock(mu_);
      if (requests_.empty()) {
        pumping_ = false;
        return;
      }
      if (file_.empty()) {
        const Request next = requests_.front();  // stays first until a file is open
        lock.Unlock();
        TakeFileFromQueue(next);  // its callback pumps on
        return;
      }
      auto got = NextRecordLocked(&key, &value);
      if (got.ok() && !*got) {  // the file is done: the next one
        file_.clear();
        in_.close();
        ++work_units_completed_;
        continue;
      }
      status = got.status();
      if (status.ok()) {
        ++records_produced_;
      } else {  // a broken file is left behind; the next read takes the next file
        file_.clear();
        in_.close();
      }
      served = std::move(requests_.front());
      requests_.pop_front();
    }
    served.done(status, std::move(key), std::move(value));
  }
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
        if (!error.ok()) failed.done(error, "", "");
        self->Pump();
      });
}

Status RecordReader::OpenLocked(const std::string& name, const KernelEnv& env) {
  TFD_ASSIGN_OR_RETURN(std::filesystem::path path, env.ResolveIoPath(name));
  in_.open(path, std::ios::binary);
  if (!in_) return errors::NotFound("reader '", name_, "' cannot open '", name, "'");
  file_ = name;
  record_in_file_ = 0;
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
    data_end_ = ec ? 0 : size;
    return OkStatus();
  }
  const int64_t records = size - format_.header_bytes - format_.footer_bytes;
  if (ec || records < 0 || records % format_.record_bytes != 0) {
    file_.clear();
    in_.close();
    return errors::InvalidArgument("reader '", name_, "': file '", name, "' (", ec ? -1 : size,
                                   " bytes) does not hold whole records of ", format_.record_bytes,
                                   " bytes between a header of ", format_.header_bytes,
                                   " and a footer of ", format_.footer_bytes);
  }
  data_end_ = size - format_.footer_bytes;
  in_.seekg(format_.header_bytes);
  return OkStatus();
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
  char header[12];
  // A record takes 16 bytes besides its data.
  if (data_end_ - at < 16 || !in_.read(header, 12))
    return errors::InvalidArgument(where, " is cut short");
  const auto length = LittleEndian<uint64_t>(header);
  if (LittleEndian<uint32_t>(header + 8) != MaskedCrc(header, 8)) {
    return errors::InvalidArgument(where, " has a length that fails its checksum");
  }
  if (length > static_cast<uint64_t>(data_end_ - at - 16)) {
    return errors::InvalidArgument(where, " runs past the file");
  }
  value->resize(length);
  char footer[4];
  if (!in_.read(value->data(), static_cast<std::streamsize>(length)) || !in_.read(footer, 4)) {
    return errors::Internal("reader '", name_, "' failed reading '", file_, "'");
  }
  if (LittleEndian<uint32_t>(footer) != MaskedCrc(value->data(), length)) {
    return errors::InvalidArgument(where, " has data that fails its checksum");
  }
  *key = file_ + ":" + std::to_string(at);
  ++record_in_file_;
  return true;
}

StatusOr<bool> RecordReader::NextRecordLocked(std::string* key, std::string* value) {
  if (format_.kind == RecordFormat::Kind::kTFRecord) return NextTFRecordLocked(key, value);
  if (format_.kind == RecordFormat::Kind::kTextLine) {
    if (!std::getline(in_, *value)) {
      if (in_.bad()) return errors::Internal("reader '", name_, "' failed reading '", file_, "'");
      return false;
    }
    if (!value->empty() && value->back() == '\r') value->pop_back();
    *key = file_ + ":" + std::to_string(++record_in_file_);
    return true;
  }
  const int64_t at = format_.header_bytes + record_in_file_ * format_.record_bytes;
  if (at >= data_end_) return false;
  value->resize(format_.record_bytes);
  if (!in_.read(value->data(), format_.record_bytes)) {
    return errors::Internal("reader '", name_, "' failed reading record ", record_in_file_, " of '",
                            file_, "'");
  }
  *key = file_ + ":" + std::to_string(record_in_file_++);
  return true;
}

}  // namespace tfd::kernels::io
