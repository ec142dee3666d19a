#include "daemon/checkpoint/sliced_restore.h"

#include <algorithm>
#include <cstring>
#include <system_error>

#include "daemon/checkpoint/checkpoint_dir.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "kernels/framework/resource.h"

namespace tfd {
namespace {

std::string Rows(int64_t begin, int64_t end) {
  return "rows [" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// Elements per row of `shape` (the product of all but axis 0).
int64_t RowElements(const TensorShape& shape) {
  int64_t n = 1;
  for (int i = 1; i < shape.rank(); ++i) n *= shape.dim(i);
  return n;
}

// Takes the "@slice/" entries out of `entries`, parsed, by the key of the
// shard each describes.
StatusOr<std::map<std::string, SaveSliceInfo>> TakeSlices(CheckpointEntries& entries) {
  std::map<std::string, SaveSliceInfo> slices;
  for (const auto& [key, value] : entries) {
    if (key.rfind(kSliceNamespace, 0) != 0) continue;
    if (value.dtype() != DType::kString || value.num_elements() != 1) {
      return errors::FailedPrecondition("'", key, "' holds ", value.Describe(),
                                        ", not a slice's text (a string scalar)");
    }
    TFD_ASSIGN_OR_RETURN(SaveSliceInfo s, SaveSliceInfo::Parse(value.data<std::string>()[0]));
    slices.emplace(key.substr(kSliceNamespace.size()), std::move(s));
  }
  std::erase_if(entries, [](const auto& e) { return e.first.rfind(kSliceNamespace, 0) == 0; });
  return slices;
}

// The value `key` (a variable of `dtype`, a shard of `want` or not) is to
// restore from the other parts of the step; nullopt when they hold none.
StatusOr<std::optional<Tensor>> FromOtherParts(const SliceIndex& index, const std::string& key,
                                               const std::optional<SaveSliceInfo>& want,
                                               DType dtype) {
  if (!want) return index.ReadEntry(key);
  if (!index.Holds(want->full_name)) return std::optional<Tensor>();  // saved before it existed
  TFD_ASSIGN_OR_RETURN(Tensor rows, index.Assemble(key, *want, dtype));
  return std::optional<Tensor>(std::move(rows));
}

// Whether `name` is a task's directory as tfd names it: "<job>-<task>".
bool IsTaskDirName(const std::string& name) {
  const size_t dash = name.rfind('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == name.size()) return false;
  return std::all_of(name.begin() + dash + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<std::filesystem::path> StepParts(const std::filesystem::path& cluster_dir,
                                             const std::filesystem::path& task_dir, int64_t step) {
  std::vector<std::filesystem::path> parts;
  const std::string file = CheckpointFileName(step);
  std::error_code ec;
  if (std::filesystem::exists(task_dir / file, ec)) parts.push_back(task_dir / file);
  if (cluster_dir.empty()) return parts;
  std::vector<std::filesystem::path> others;
  for (const auto& e : std::filesystem::directory_iterator(cluster_dir, ec)) {
    if (e.path() == task_dir || !IsTaskDirName(e.path().filename().string())) continue;
    if (std::filesystem::exists(e.path() / file, ec)) others.push_back(e.path() / file);
  }
  std::sort(others.begin(), others.end());  // a stable order
  parts.insert(parts.end(), others.begin(), others.end());
  return parts;
}

Status SliceIndex::Add(const std::filesystem::path& path) {
  TFD_ASSIGN_OR_RETURN(auto reader, kernels::CheckpointReader::Open(path));
  for (const kernels::CheckpointEntry& e : reader->entries()) {
    if (e.name.rfind(kSliceNamespace, 0) != 0) continue;
    TFD_ASSIGN_OR_RETURN(Tensor text, reader->ReadTensor(e));
    if (text.dtype() != DType::kString || text.num_elements() != 1) {
      return errors::FailedPrecondition("checkpoint '", path.string(), "' holds ",
                                        text.Describe(), " for '", e.name,
                                        "', not a slice's text (a string scalar)");
    }
    auto slice = SaveSliceInfo::Parse(text.data<std::string>()[0]);
    if (!slice.ok()) return slice.status().WithContext("checkpoint '" + path.string() + "'");
    const std::string key = e.name.substr(kSliceNamespace.size());
    slices_.emplace(slice->full_name, Saved{*slice, key, reader.get()});
  }
  readers_.push_back(std::move(reader));
  return OkStatus();
}

StatusOr<Tensor> SliceIndex::Assemble(const std::string& shard, const SaveSliceInfo& want,
                                      DType dtype) const {
  std::vector<const Saved*> saved;
  const auto [begin, end] = slices_.equal_range(want.full_name);
  for (auto it = begin; it != end; ++it) saved.push_back(&it->second);
  std::sort(saved.begin(), saved.end(), [](const Saved* a, const Saved* b) {
    return a->slice.first_row < b->slice.first_row;
  });
  auto allocated = Tensor::Allocate(dtype, want.ShardShape(), memory_);
  if (!allocated.ok()) return allocated.status().WithContext("restoring shard '" + shard + "'");
  Tensor out = std::move(allocated).value();
  int64_t row = want.first_row;  // the first row not copied yet
  for (const Saved* s : saved) {
    if (s->slice.full_shape != want.full_shape) {
      return errors::FailedPrecondition(
          "partitioned variable '", want.full_name, "' is ", want.full_shape.ToString(),
          " but checkpoint '", s->reader->path().string(), "' saved it as ",
          s->slice.full_shape.ToString(), " (shard '", s->key, "')");
    }
    if (s->slice.end_row() <= row || s->slice.first_row > row || row >= want.end_row()) continue;
    TFD_RETURN_IF_ERROR(CopyRows(*s, {want.full_name, want.full_shape, row,
                                      std::min(s->slice.end_row(), want.end_row()) - row},
                                 out, want.first_row));
    row = std::min(s->slice.end_row(), want.end_row());
  }
  if (row < want.end_row()) {
    return errors::NotFound("no saved slice of partitioned variable '", want.full_name,
                            "' holds its ", Rows(row, want.end_row()), ", which shard '", shard,
                            "' (", Rows(want.first_row, want.end_row()),
                            ") needs: the step's files in the checkpoint directory hold ",
                            saved.size(), " slices of it");
  }
  return out;
}

StatusOr<std::optional<Tensor>> SliceIndex::ReadEntry(const std::string& key) const {
  for (const auto& reader : readers_) {
    if (reader->Find(key) == nullptr) continue;
    TFD_ASSIGN_OR_RETURN(Tensor value, reader->ReadTensor(key, memory_));
    return std::optional<Tensor>(std::move(value));
  }
  return std::optional<Tensor>();
}

StatusOr<std::map<std::string, SaveSliceInfo>> ReshardEntries(
    const std::vector<std::filesystem::path>& parts, ResourceMgr& resources,
    CheckpointEntries& entries, const std::shared_ptr<MemoryBudget>& memory) {
  TFD_ASSIGN_OR_RETURN(auto saved_slices, TakeSlices(entries));
  std::map<std::string, size_t> at;  // entry index by key
  for (size_t i = 0; i < entries.size(); ++i) at.emplace(entries[i].first, i);
  std::optional<SliceIndex> index;  // the step's parts, opened when first needed
  for (const auto& [rkey, base] : resources.List()) {
    const auto* resource = dynamic_cast<const kernels::Resource*>(base.get());
    if (resource == nullptr || resource->CheckpointNamespace() != "") continue;
    auto key = CheckpointKey(rkey.container, resource->CheckpointName(rkey.name));
    if (!key.ok()) continue;  // the save refuses it; nothing can hold it
    const std::optional<SaveSliceInfo> want = resource->CheckpointSlice();
    const auto saved = saved_slices.find(*key);
    const bool here = at.count(*key) != 0;
    if (here && (!want || (saved != saved_slices.end() && saved->second == *want))) continue;
    if (!index) {
      index.emplace(memory);
      for (const auto& part : parts) TFD_RETURN_IF_ERROR(index->Add(part));
    }
    TFD_ASSIGN_OR_RETURN(auto value,
                         FromOtherParts(*index, *key, want, resource->Describe().dtype));
    if (!value) continue;  // not saved anywhere: left alone, as before
    if (here) {
      entries[at[*key]].second = std::move(*value);
    } else {
      at.emplace(*key, entries.size());
      entries.emplace_back(*key, std::move(*value));
    }
    saved_slices.erase(*key);
  }
  return saved_slices;
}

Status SliceIndex::CopyRows(const Saved& s, const SaveSliceInfo& piece, Tensor& out,
                            int64_t out_first_row) const {
  // TODO(perf): reads (and checks) the saved shard whole for each piece;
  // a shard split over several new ones is read once per piece.
  TFD_ASSIGN_OR_RETURN(Tensor value, s.reader->ReadTensor(s.key, memory_));
  if (value.dtype() != out.dtype() || value.shape() != s.slice.ShardShape()) {
    return errors::FailedPrecondition("checkpoint '", s.reader->path().string(), "' holds ",
                                      value.Describe(), " for shard '", s.key, "', but its slice '",
                                      s.slice.ToString(), "' and the restoring variable want ",
                                      DTypeName(out.dtype()), s.slice.ShardShape().ToString());
  }
  const int64_t per_row = RowElements(piece.full_shape);
  const int64_t from = (piece.first_row - s.slice.first_row) * per_row;
  const int64_t to = (piece.first_row - out_first_row) * per_row;
  const int64_t n = piece.rows * per_row;
  if (out.dtype() == DType::kString) {
    std::copy_n(value.data<std::string>() + from, n, out.data<std::string>() + to);
    return OkStatus();
  }
  const size_t size = DTypeSize(out.dtype());
  std::memcpy(static_cast<char*>(out.raw_data()) + to * size,
              static_cast<const char*>(value.raw_data()) + from * size, n * size);
  return OkStatus();
}

}  // namespace tfd
