// WriteCheckpoint: serialise through an AtomicFile (a temporary file beside
// the target, synced, renamed over it, the directory synced).
#include <set>

#include "common/atomic_file.h"
#include "common/tensor_bundle/checkpoint_file.h"
#include "common/tensor_bundle/checkpoint_layout.h"
#include "common/tensor_bundle/crc32c.h"

namespace tfd::kernels {
namespace {

using checkpoint::Put;

// Buffers small writes; large payloads go straight from the tensor's memory.
class FileWriter {
 public:
  explicit FileWriter(AtomicFile& file) : file_(file) {}

  Status Append(const void* data, size_t n) {
    if (n >= kDirect) {
      TFD_RETURN_IF_ERROR(Flush());
      TFD_RETURN_IF_ERROR(file_.Append(data, n));
    } else {
      buffer_.append(static_cast<const char*>(data), n);
      if (buffer_.size() >= kDirect) TFD_RETURN_IF_ERROR(Flush());
    }
    position_ += n;
    return OkStatus();
  }
  Status Append(const std::string& s) { return Append(s.data(), s.size()); }
  Status PadTo(uint64_t alignment) {
    const uint64_t pad = (alignment - position_ % alignment) % alignment;
    return Append(std::string(pad, '\0'));
  }
  Status Flush() {
    Status s = file_.Append(buffer_);
    buffer_.clear();
    return s;
  }
  uint64_t position() const { return position_; }

 private:
  static constexpr size_t kDirect = size_t{1} << 20;

  AtomicFile& file_;
  std::string buffer_;
  uint64_t position_ = 0;
};

// Writes one tensor's payload, returning its index entry.
StatusOr<CheckpointEntry> WritePayload(FileWriter& w, const std::string& name, const Tensor& t) {
  TFD_RETURN_IF_ERROR(w.PadTo(checkpoint::kPayloadAlignment));
  CheckpointEntry e;
  e.name = name;
  e.dtype = t.dtype();
  e.shape = t.shape();
  e.offset = w.position();
  if (t.dtype() == DType::kString) {
    // Length-prefixed elements, serialised in chunks to bound the copy.
    std::string chunk;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const std::string& s = t.data<std::string>()[i];
      Put<uint64_t>(chunk, s.size());
      chunk += s;
      if (chunk.size() >= (size_t{1} << 20) || i + 1 == t.num_elements()) {
        e.crc = crc32c::Extend(e.crc, chunk.data(), chunk.size());
        TFD_RETURN_IF_ERROR(w.Append(chunk));
        chunk.clear();
      }
    }
  } else {
    e.crc = crc32c::Value(t.raw_data(), t.total_bytes());
    TFD_RETURN_IF_ERROR(w.Append(t.raw_data(), t.total_bytes()));
  }
  e.length = w.position() - e.offset;
  return e;
}

std::string EncodeIndex(const std::vector<CheckpointEntry>& entries) {
  std::string index;
  Put<uint32_t>(index, static_cast<uint32_t>(entries.size()));
  for (const CheckpointEntry& e : entries) {
    Put<uint32_t>(index, static_cast<uint32_t>(e.name.size()));
    index += e.name;
    Put<uint8_t>(index, static_cast<uint8_t>(e.dtype));
    Put<uint32_t>(index, static_cast<uint32_t>(e.shape.rank()));
    for (int64_t d : e.shape.dims()) Put<int64_t>(index, d);
    Put<uint64_t>(index, e.offset);
    Put<uint64_t>(index, e.length);
    Put<uint32_t>(index, e.crc);
  }
  return index;
}

Status CheckArguments(const std::filesystem::path& path, const std::vector<std::string>& names,
                      const std::vector<Tensor>& tensors) {
  if (names.size() != tensors.size()) {
    return errors::InvalidArgument("checkpoint '", path.string(), "': ", names.size(),
                                   " names for ", tensors.size(), " tensors");
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) {
      return errors::InvalidArgument("checkpoint '", path.string(), "': tensor ", i,
                                     " has an empty name");
    }
    if (!seen.insert(names[i]).second) {
      return errors::InvalidArgument("checkpoint '", path.string(), "': tensor name '", names[i],
                                     "' appears twice");
    }
    if (!tensors[i].initialized()) {
      return errors::InvalidArgument("checkpoint '", path.string(), "': tensor '", names[i],
                                     "' has no value");
    }
  }
  if (names.size() > UINT32_MAX) {
    return errors::InvalidArgument("checkpoint '", path.string(), "': too many tensors");
  }
  return OkStatus();
}

// Everything up to the rename, into the temporary file.
Status WriteContents(AtomicFile& file, const std::vector<std::string>& names,
                     const std::vector<Tensor>& tensors) {
  FileWriter w(file);
  std::string header(checkpoint::kHeaderMagic, sizeof(checkpoint::kHeaderMagic));
  Put<uint32_t>(header, kCheckpointVersion);
  Put<uint32_t>(header, 0);
  TFD_RETURN_IF_ERROR(w.Append(header));
  std::vector<CheckpointEntry> entries;
  for (size_t i = 0; i < names.size(); ++i) {
    TFD_ASSIGN_OR_RETURN(CheckpointEntry e, WritePayload(w, names[i], tensors[i]));
    entries.push_back(std::move(e));
  }
  const std::string index = EncodeIndex(entries);
  const uint64_t index_offset = w.position();
  TFD_RETURN_IF_ERROR(w.Append(index));
  std::string footer;
  Put<uint64_t>(footer, index_offset);
  Put<uint64_t>(footer, index.size());
  Put<uint32_t>(footer, crc32c::Value(index.data(), index.size()));
  Put<uint32_t>(footer, kCheckpointVersion);
  footer.append(checkpoint::kFooterMagic, sizeof(checkpoint::kFooterMagic));
  TFD_RETURN_IF_ERROR(w.Append(footer));
  return w.Flush();
}

}  // namespace

Status WriteCheckpoint(const std::filesystem::path& path, const std::vector<std::string>& names,
                       const std::vector<Tensor>& tensors) {
  TFD_RETURN_IF_ERROR(CheckArguments(path, names, tensors));
  TFD_ASSIGN_OR_RETURN(AtomicFile file,
                       AtomicFile::Create(path, {.sync = true, .description = "checkpoint"}));
  TFD_RETURN_IF_ERROR(WriteContents(file, names, tensors));
  return file.Commit();
}

}  // namespace tfd::kernels
