#include "daemon/client/training/event_file.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/tensor_bundle/crc32c.h"

namespace tfd::training {
namespace {

// Protocol buffer wire format, the few pieces an Event needs.
void Varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void Key(std::string& out, int field, int wire_type) { Varint(out, (field << 3) | wire_type); }
template <typename T>
void Fixed(std::string& out, int field, T value) {  // double: wire type 1; float: 5
  Key(out, field, sizeof(T) == 8 ? 1 : 5);
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // little endian on every host tfd builds for
  out.append(bytes, sizeof(T));
}
void Bytes(std::string& out, int field, const std::string& value) {
  Key(out, field, 2);
  Varint(out, value.size());
  out += value;
}

double WallTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Event(double wall_time, int64_t step) {
  std::string event;
  Fixed(event, 1, wall_time);
  Key(event, 2, 0);
  Varint(event, static_cast<uint64_t>(step));
  return event;
}

// tensorflow.HistogramProto: five doubles, then the limits and counts
// as packed repeated doubles.
std::string HistogramProto(const Histogram& h) {
  std::string out;
  Fixed(out, 1, h.min);
  Fixed(out, 2, h.max);
  Fixed(out, 3, h.num);
  Fixed(out, 4, h.sum);
  Fixed(out, 5, h.sum_squares);
  for (const auto& [field, values] : {std::pair{6, &h.bucket_limit}, std::pair{7, &h.bucket}}) {
    std::string packed;
    for (double d : *values) {
      char bytes[sizeof d];
      std::memcpy(bytes, &d, sizeof d);
      packed.append(bytes, sizeof d);
    }
    Bytes(out, field, packed);
  }
  return out;
}

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

uint32_t MaskedCrc32c(const void* data, size_t n) {
  const uint32_t crc = kernels::crc32c::Value(data, n);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string TfRecord(const std::string& data) {
  std::string record;
  PutLe(record, data.size(), 8);
  PutLe(record, MaskedCrc32c(record.data(), 8), 4);
  record += data;
  PutLe(record, MaskedCrc32c(data.data(), data.size()), 4);
  return record;
}

StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Create(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return errors::InvalidArgument("--logdir '", dir, "' cannot be made: ", ec.message());
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const auto seconds = static_cast<int64_t>(WallTime());
  const std::string base = (std::filesystem::path(dir) /
                            ("events.out.tfevents." + std::to_string(seconds) + "." + host + "." +
                             std::to_string(getpid())))
                               .string();
  // "x": never append to another writer's file; a second writer of this
  // process in the same second takes the next free suffix.
  std::string path = base;
  std::FILE* file = std::fopen(path.c_str(), "wbx");
  for (int i = 1; file == nullptr && errno == EEXIST && i < 100; ++i) {
    path = base + "." + std::to_string(i);
    file = std::fopen(path.c_str(), "wbx");
  }
  if (file == nullptr) {
    return errors::InvalidArgument("event file '", path, "' cannot be made: ",
                                   std::strerror(errno));
  }
  auto writer = std::make_unique<EventFileWriter>(path, file);
  std::string first = Event(WallTime(), 0);
  Bytes(first, 3, "brain.Event:2");
  TFD_RETURN_IF_ERROR(writer->WriteRecord(first));
  return writer;
}

EventFileWriter::~EventFileWriter() { std::fclose(file_); }

Status EventFileWriter::Write(int64_t step, const Summaries& summaries) {
  std::string summary;
  for (const auto& [tag, value] : summaries.scalars) {
    std::string v;
    Bytes(v, 1, tag);
    Fixed(v, 2, static_cast<float>(value));
    Bytes(summary, 1, v);
  }
  for (const auto& [tag, histogram] : summaries.histograms) {
    std::string v;
    Bytes(v, 1, tag);
    Bytes(v, 5, HistogramProto(histogram));
    Bytes(summary, 1, v);
  }
  std::string event = Event(WallTime(), step);
  Bytes(event, 5, summary);
  return WriteRecord(event);
}

Status EventFileWriter::WriteRecord(const std::string& data) {
  const std::string record = TfRecord(data);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    return errors::Internal("writing event file '", path_, "': ", std::strerror(errno));
  }
  return OkStatus();
}

}  // namespace tfd::training
