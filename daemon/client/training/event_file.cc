#include "daemon/client/training/event_file.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/proto_wire.h"
#include "common/tensor_bundle/crc32c.h"

namespace tfd::training {
namespace {

double WallTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Event(double wall_time, int64_t step) {
  std::string event;
  proto_wire::PutFixed(event, 1, wall_time);
  proto_wire::PutKey(event, 2, proto_wire::kVarint);
  proto_wire::PutVarint(event, static_cast<uint64_t>(step));
  return event;
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

StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Create(const std::string& dir,
                                                                   const std::string& suffix) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return errors::InvalidArgument("logdir '", dir, "' cannot be made: ", ec.message());
  if (suffix.find('/') != std::string::npos) {
    return errors::InvalidArgument("an event file's suffix names no directory: '", suffix, "'");
  }
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const auto seconds = static_cast<int64_t>(WallTime());
  const std::string base = (std::filesystem::path(dir) /
                            ("events.out.tfevents." + std::to_string(seconds) + "." + host + "." +
                             std::to_string(getpid())))
                               .string();
  // "x": never append to another writer's file; a second writer of this
  // process in the same second takes the next free suffix.
  std::string path = base + suffix;
  std::FILE* file = std::fopen(path.c_str(), "wbx");
  for (int i = 1; file == nullptr && errno == EEXIST && i < 100; ++i) {
    path = base + "." + std::to_string(i) + suffix;
    file = std::fopen(path.c_str(), "wbx");
  }
  if (file == nullptr) {
    return errors::InvalidArgument("event file '", path, "' cannot be made: ",
                                   std::strerror(errno));
  }
  auto writer = std::make_unique<EventFileWriter>(path, file);
  std::string first = Event(WallTime(), 0);
  proto_wire::PutBytes(first, 3, "brain.Event:2");
  TFD_RETURN_IF_ERROR(writer->WriteRecord(first));
  return writer;
}

EventFileWriter::~EventFileWriter() { std::fclose(file_); }

Status EventFileWriter::Write(int64_t step, const summary::Summary& summaries) {
  return WriteSerialized(step, summary::Serialize(summaries));
}

Status EventFileWriter::WriteSerialized(int64_t step, std::string_view summary) {
  std::string event = Event(WallTime(), step);
  proto_wire::PutBytes(event, 5, summary);
  return WriteRecord(event);
}

Status EventFileWriter::WriteGraph(std::string_view graph_def) {
  std::string event = Event(WallTime(), 0);
  proto_wire::PutBytes(event, 4, graph_def);
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
