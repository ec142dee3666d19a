// CheckpointReader: validates the frame (header, footer, index) once, then
// reads and verifies tensors on demand with pread.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/io_error.h"
#include "common/tensor_bundle/checkpoint_file.h"
#include "common/tensor_bundle/checkpoint_layout.h"
#include "common/tensor_bundle/crc32c.h"

namespace tfd::kernels {
namespace {

using checkpoint::Cursor;

Status Corrupt(const std::filesystem::path& path, const std::string& what) {
  return errors::DataLoss("checkpoint '", path.string(), "' is corrupt: ", what);
}

// Exactly n bytes at `offset`; a short read means the file is shorter than
// its own index says.
Status ReadAt(int fd, const std::filesystem::path& path, uint64_t offset, size_t n, char* out) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return IoError(errno, "reading checkpoint '" + path.string() + "'");
    }
    if (r == 0) return Corrupt(path, "truncated");
    out += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return OkStatus();
}

// Decodes a string or bool payload already checked against its CRC. The checks here guard
// against a file built to pass the CRC with inconsistent contents.
// `t` is the entry's tensor, just allocated.
Status DecodePayload(const std::filesystem::path& path, const CheckpointEntry& e,
                     const std::string& bytes, Tensor& t) {
  const std::string bad = "tensor '" + e.name + "' does not match its index entry";
  if (e.dtype == DType::kString) {
    Cursor c(bytes.data(), bytes.size());
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      uint64_t len;
      if (!c.Get(&len) || len > bytes.size() || !c.GetBytes(len, &t.data<std::string>()[i])) {
        return Corrupt(path, bad);
      }
    }
    if (!c.done()) return Corrupt(path, bad);
  } else {
    // Any non-zero byte is true: a byte other than 0 or 1 is no valid bool.
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<bool>()[i] = bytes[i] != 0;
  }
  return OkStatus();
}

StatusOr<CheckpointEntry> DecodeEntry(const std::filesystem::path& path, Cursor& c,
                                      uint64_t index_offset) {
  CheckpointEntry e;
  uint32_t name_len, rank;
  uint8_t dtype;
  if (!c.Get(&name_len) || !c.GetBytes(name_len, &e.name) || !c.Get(&dtype) || !c.Get(&rank) ||
      rank > 64) {
    return Corrupt(path, "malformed index");
  }
  std::vector<int64_t> dims(rank);
  for (int64_t& d : dims) {
    if (!c.Get(&d)) return Corrupt(path, "malformed index");
  }
  if (!c.Get(&e.offset) || !c.Get(&e.length) || !c.Get(&e.crc)) {
    return Corrupt(path, "malformed index");
  }
  e.dtype = static_cast<DType>(dtype);
  auto shape = TensorShape::Make(std::move(dims));
  if (dtype == 0 || dtype >= kNumDTypes || !shape.ok()) {
    return Corrupt(path, "tensor '" + e.name + "' has an invalid dtype or shape in the index");
  }
  e.shape = std::move(shape).value();
  const uint64_t n = static_cast<uint64_t>(e.shape.num_elements());
  const bool length_ok =
      e.dtype == DType::kString ? e.length >= 8 * n : e.length == n * DTypeSize(e.dtype);
  if (!length_ok || e.offset < checkpoint::kHeaderSize || e.offset > index_offset ||
      e.length > index_offset - e.offset) {
    return Corrupt(path, "tensor '" + e.name + "' lies outside the data section");
  }
  return e;
}

}  // namespace

StatusOr<std::unique_ptr<CheckpointReader>> CheckpointReader::Open(
    const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return errors::NotFound("checkpoint '", path.string(), "' does not exist");
    return IoError(errno, "opening checkpoint '" + path.string() + "'");
  }
  std::unique_ptr<CheckpointReader> reader(new CheckpointReader(path, fd));  // private ctor
  struct stat st;
  if (::fstat(fd, &st) != 0) return IoError(errno, "reading checkpoint '" + path.string() + "'");
  if (!S_ISREG(st.st_mode)) {
    return errors::InvalidArgument("checkpoint '", path.string(), "' is not a regular file");
  }
  TFD_RETURN_IF_ERROR(reader->ReadIndex(static_cast<uint64_t>(st.st_size)));
  return reader;
}

CheckpointReader::~CheckpointReader() { ::close(fd_); }

Status CheckpointReader::ReadIndex(uint64_t file_size) {
  if (file_size < checkpoint::kHeaderSize + checkpoint::kFooterSize) {
    return Corrupt(path_, "truncated (" + std::to_string(file_size) + " bytes)");
  }
  char header[checkpoint::kHeaderSize];
  TFD_RETURN_IF_ERROR(ReadAt(fd_, path_, 0, sizeof(header), header));
  if (std::memcmp(header, checkpoint::kHeaderMagic, sizeof(checkpoint::kHeaderMagic)) != 0) {
    return errors::DataLoss("'", path_.string(), "' is not a tfd checkpoint");
  }
  uint32_t version;
  std::memcpy(&version, header + 8, 4);
  if (version != kCheckpointVersion) {
    return errors::FailedPrecondition("checkpoint '", path_.string(), "' has format version ",
                                      version, "; this build reads version ", kCheckpointVersion);
  }

  char footer[checkpoint::kFooterSize];
  TFD_RETURN_IF_ERROR(ReadAt(fd_, path_, file_size - sizeof(footer), sizeof(footer), footer));
  if (std::memcmp(footer + 24, checkpoint::kFooterMagic, sizeof(checkpoint::kFooterMagic)) != 0) {
    return Corrupt(path_, "truncated (no footer at the end)");
  }
  uint64_t index_offset, index_length;
  uint32_t index_crc, footer_version;
  Cursor fc(footer, sizeof(footer));
  fc.Get(&index_offset);
  fc.Get(&index_length);
  fc.Get(&index_crc);
  fc.Get(&footer_version);
  if (footer_version != version)
    return Corrupt(path_, "the footer's version differs from the header's");
  if (index_offset < checkpoint::kHeaderSize ||
      index_offset > file_size - checkpoint::kFooterSize ||
      index_length != file_size - checkpoint::kFooterSize - index_offset) {
    return Corrupt(path_, "the footer does not match the file's size (truncated or extended)");
  }

  std::string index(index_length, '\0');
  TFD_RETURN_IF_ERROR(ReadAt(fd_, path_, index_offset, index.size(), index.data()));
  if (crc32c::Value(index.data(), index.size()) != index_crc) {
    return Corrupt(path_, "checksum mismatch in the index");
  }
  Cursor c(index.data(), index.size());
  uint32_t count;
  if (!c.Get(&count)) return Corrupt(path_, "malformed index");
  for (uint32_t i = 0; i < count; ++i) {
    TFD_ASSIGN_OR_RETURN(CheckpointEntry e, DecodeEntry(path_, c, index_offset));
    entries_.push_back(std::move(e));
  }
  if (!c.done()) return Corrupt(path_, "malformed index");
  return OkStatus();
}

const CheckpointEntry* CheckpointReader::Find(const std::string& name) const {
  for (const CheckpointEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

StatusOr<Tensor> CheckpointReader::ReadTensor(
    const std::string& name, const std::shared_ptr<MemoryBudget>& budget) const {
  const CheckpointEntry* e = Find(name);
  if (e == nullptr) {
    return errors::NotFound("tensor '", name, "' is not in checkpoint '", path_.string(), "'");
  }
  return ReadTensor(*e, budget);
}

StatusOr<Tensor> CheckpointReader::AllocateFor(const CheckpointEntry& e,
                                               const std::shared_ptr<MemoryBudget>& budget) const {
  // Every byte of a number's payload is read over the fill; strings and
  // bools are decoded into a tensor constructed (and zeroed) as usual.
  const bool decoded = e.dtype == DType::kString || e.dtype == DType::kBool;
  auto t = Tensor::Allocate(e.dtype, e.shape, budget, decoded ? Fill::kZeros : Fill::kNone);
  if (!t.ok()) {
    return t.status().WithContext("reading tensor '" + e.name + "' of checkpoint '" +
                                  path_.string() + "'");
  }
  return t;
}

StatusOr<Tensor> CheckpointReader::ReadTensor(
    const CheckpointEntry& e, const std::shared_ptr<MemoryBudget>& budget) const {
  auto mismatch = [&] { return Corrupt(path_, "checksum mismatch in tensor '" + e.name + "'"); };
  TFD_ASSIGN_OR_RETURN(Tensor t, AllocateFor(e, budget));
  if (e.dtype != DType::kString && e.dtype != DType::kBool) {
    // Straight into the tensor: no second copy of a large payload.
    TFD_RETURN_IF_ERROR(ReadAt(fd_, path_, e.offset, e.length, static_cast<char*>(t.raw_data())));
    if (crc32c::Value(t.raw_data(), e.length) != e.crc) return mismatch();
    return t;
  }
  std::string bytes(e.length, '\0');
  TFD_RETURN_IF_ERROR(ReadAt(fd_, path_, e.offset, bytes.size(), bytes.data()));
  if (crc32c::Value(bytes.data(), bytes.size()) != e.crc) return mismatch();
  TFD_RETURN_IF_ERROR(DecodePayload(path_, e, bytes, t));
  return t;
}

StatusOr<std::vector<std::pair<std::string, Tensor>>> ReadCheckpoint(
    const std::filesystem::path& path, const std::shared_ptr<MemoryBudget>& budget) {
  TFD_ASSIGN_OR_RETURN(auto reader, CheckpointReader::Open(path));
  std::vector<std::pair<std::string, Tensor>> out;
  for (const CheckpointEntry& e : reader->entries()) {
    TFD_ASSIGN_OR_RETURN(Tensor t, reader->ReadTensor(e, budget));
    out.emplace_back(e.name, std::move(t));
  }
  return out;
}

StatusOr<Tensor> ReadTensor(const std::filesystem::path& path, const std::string& name,
                            const std::shared_ptr<MemoryBudget>& budget) {
  TFD_ASSIGN_OR_RETURN(auto reader, CheckpointReader::Open(path));
  return reader->ReadTensor(name, budget);
}

}  // namespace tfd::kernels
