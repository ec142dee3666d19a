// CriteoDataset: the handed-out place, the reader and the batch read ahead.
#include "kernels/data/criteo_dataset.h"

#include <algorithm>
#include <utility>

namespace tfd::kernels::data {

std::string CriteoDatasetSpec::ToString() const {
  std::string s = "files";
  for (size_t i = 0; i < paths.size(); ++i) s += (i ? ", '" : " '") + paths[i] + "'";
  s += ", " + std::to_string(num_buckets) + " buckets";
  s += epochs < 0 ? ", forever" : ", " + std::to_string(epochs) + (epochs == 1 ? " epoch" : " epochs");
  s += ", shard " + std::to_string(shard_index) + " of " + std::to_string(num_shards);
  return s;
}

CriteoDataset::CriteoDataset(std::string name, CriteoDatasetSpec spec)
    : name_(std::move(name)), spec_(std::move(spec)) {}

CriteoDataset::~CriteoDataset() = default;

std::string CriteoDataset::DebugString() const {
  MutexLock lock(mu_);
  return "Criteo dataset '" + name_ + "' (" + spec_.ToString() + "): epoch " +
         std::to_string(epoch_) + ", " + std::to_string(position_) + " examples in";
}

ResourceDescription CriteoDataset::Describe() const {
  MutexLock lock(mu_);
  return {.kind = "criteo_dataset", .initialized = !files_.empty()};
}

Status CriteoDataset::CheckSameSpec(const CriteoDatasetSpec& other) const {
  if (other == spec_) return OkStatus();
  return errors::InvalidArgument("dataset '", name_, "' exists as ", spec_.ToString(),
                                 ", which differs from the requested ", other.ToString());
}

Status CriteoDataset::BindReader(const SessionPresence& reader) {
  const auto session = reader.lock();
  if (!session) return OkStatus();
  MutexLock lock(mu_);
  const auto holder = holder_.lock();
  if (holder && holder != session) {
    return errors::FailedPrecondition(
        "Criteo dataset '", name_, "' is being read by ", *holder, ", so ", *session,
        " may not read it until that session closes: the dataset's cursor belongs to one "
        "session at a time. To read the same files with a cursor of its own, give this "
        "graph's CriteoDataset another shared_name");
  }
  holder_ = reader;
  return OkStatus();
}

Status CriteoDataset::Open(const KernelEnv& env) {
  MutexLock lock(mu_);
  if (!files_.empty()) return OkStatus();
  std::vector<std::filesystem::path> files;
  for (const std::string& p : spec_.paths) {
    TFD_ASSIGN_OR_RETURN(auto resolved, env.ResolveIoPath(p));
    files.push_back(std::move(resolved));
  }
  files_ = std::move(files);
  reader_ = MakeReader();
  return OkStatus();
}

std::unique_ptr<CriteoReader> CriteoDataset::MakeReader() const {
  return std::make_unique<CriteoReader>(CriteoReaderOptions{
      .files = files_, .names = spec_.paths, .num_buckets = spec_.num_buckets,
      .epochs = spec_.epochs, .shard_index = spec_.shard_index,
      .num_shards = spec_.num_shards, .start_epoch = epoch_, .start_position = position_});
}

void CriteoDataset::RestartLocked() {
  ++generation_;
  reading_ = false;
  ahead_.reset();
  if (!files_.empty()) reader_ = MakeReader();
}

StatusOr<CriteoBatch> CriteoDataset::ReadBatch(CriteoReader& reader, int64_t batch_size,
                                               bool drop_remainder, const std::string& name) {
  CriteoBatch b;
  // Room for what a file is likely to hold, not for a batch_size that may be
  // far larger than the data (the vectors grow with what is read).
  b.labels.reserve(static_cast<size_t>(std::min<int64_t>(batch_size, 1 << 16)));
  CriteoExample ex;
  while (b.size() < batch_size) {
    TFD_ASSIGN_OR_RETURN(bool got, reader.Next(ex));
    if (!got) break;
    b.labels.push_back(ex.label);
    b.dense.insert(b.dense.end(), ex.dense.begin(), ex.dense.end());
    b.ids.insert(b.ids.end(), ex.ids.begin(), ex.ids.end());
  }
  if (b.size() == 0 || (drop_remainder && b.size() < batch_size)) {
    return errors::OutOfRange("Criteo dataset '", name, "' is exhausted after ", reader.epoch(),
                              reader.epoch() == 1 ? " epoch" : " epochs");
  }
  return b;
}

StatusOr<CriteoBatch> CriteoDataset::Next(int64_t batch_size, bool drop_remainder,
                                          std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu_);
  if (files_.empty()) {
    return errors::FailedPrecondition("Criteo dataset '", name_, "' is not open: its "
                                      "CriteoDataset op has not run successfully");
  }
  if (!lock.WaitUntil(read_done_, deadline, [&]() REQUIRES(mu_) { return !reading_; })) {
    return errors::DeadlineExceeded("Criteo dataset '", name_, "': the batch being read ahead "
                                    "was not ready by the step's deadline");
  }
  if (ahead_ && (ahead_->batch_size != batch_size || ahead_->drop_remainder != drop_remainder)) {
    RestartLocked();  // read for another request: read again from the handed-out place
  }
  StatusOr<CriteoBatch> batch = errors::Internal("unset");
  if (ahead_) {
    batch = std::move(ahead_->batch);
    if (batch.ok()) MoveToLocked(ahead_->epoch, ahead_->position);
    ahead_.reset();
  } else {
    batch = ReadBatch(*reader_, batch_size, drop_remainder, name_);
    if (batch.ok()) MoveToLocked(reader_->epoch(), reader_->position());
  }
  return batch;
}

void CriteoDataset::MoveToLocked(int64_t epoch, int64_t position) {
  epoch_ = epoch;
  position_ = position;
  moved_ = true;
}

void CriteoDataset::ReadAhead(int64_t batch_size, bool drop_remainder) {
  std::unique_ptr<CriteoReader> reader;
  uint64_t generation = 0;
  {
    MutexLock lock(mu_);
    if (reading_ || ahead_ || !reader_) return;
    reader = std::move(reader_);
    reading_ = true;
    generation = generation_;
  }
  // The reader moves to the thread and back; a restart meanwhile makes a
  // new one, and this read's result is dropped with the old reader.
  auto shared = std::make_shared<std::unique_ptr<CriteoReader>>(std::move(reader));
  thread_.Post([this, shared, generation, batch_size, drop_remainder] {
    CriteoReader& r = **shared;
    auto batch = ReadBatch(r, batch_size, drop_remainder, name_);
    MutexLock lock(mu_);
    if (generation != generation_) return;
    ahead_ = Ahead{batch_size, drop_remainder, std::move(batch), r.epoch(), r.position()};
    reader_ = std::move(*shared);
    reading_ = false;
    read_done_.notify_all();
  });
}

bool CriteoDataset::WaitForReadAhead(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu_);
  return lock.WaitUntil(read_done_, deadline, [&]() REQUIRES(mu_) { return !reading_; });
}

int64_t CriteoDataset::epoch() const {
  MutexLock lock(mu_);
  return epoch_;
}

void CriteoDataset::Reset() {
  MutexLock lock(mu_);
  epoch_ = 0;
  position_ = 0;
  moved_ = false;
  RestartLocked();
}

std::optional<InputPosition> CriteoDataset::Position() const {
  MutexLock lock(mu_);
  if (!moved_) return std::nullopt;
  return InputPosition{.epoch = epoch_, .position = position_, .count = 0,
                       .shard_index = spec_.shard_index, .num_shards = spec_.num_shards,
                       .seed = 0, .shuffle = false};
}

Status CriteoDataset::AcceptsPosition(const InputPosition& p) const {
  auto differs = [&](const std::string& what) {
    return errors::FailedPrecondition(
        "Criteo dataset '", name_, "' cannot continue from the saved input position (",
        p.ToString(), "): ", what, "; read with the shards it was saved under, or train a new "
        "model without this checkpoint");
  };
  if (p.shard_index != spec_.shard_index || p.num_shards != spec_.num_shards) {
    return differs("this task reads shard " + std::to_string(spec_.shard_index) + " of " +
                   std::to_string(spec_.num_shards));
  }
  if (p.shuffle || p.count != 0) return differs("it was saved by a dataset of another kind");
  if (spec_.epochs >= 0 && p.epoch > spec_.epochs) {
    return differs("the graph reads " + std::to_string(spec_.epochs) + " epochs");
  }
  return OkStatus();
}

Status CriteoDataset::SetPosition(const InputPosition& p) {
  TFD_RETURN_IF_ERROR(AcceptsPosition(p));
  MutexLock lock(mu_);
  epoch_ = p.epoch;
  position_ = p.position;
  moved_ = true;
  RestartLocked();
  return OkStatus();
}

std::optional<Tensor> CriteoDataset::CheckpointValue() const {
  auto p = Position();
  if (!p) return std::nullopt;
  return p->ToTensor();
}

Status CriteoDataset::CheckRestore(const Tensor& saved, const std::string& key,
                                   const std::string& file) const {
  TFD_ASSIGN_OR_RETURN(InputPosition p, InputPosition::FromTensor(saved, key));
  return AcceptsPosition(p).WithContext("restoring from '" + file + "'");
}

Status CriteoDataset::Restore(const Tensor& saved, const std::string& key) {
  TFD_ASSIGN_OR_RETURN(InputPosition p, InputPosition::FromTensor(saved, key));
  return SetPosition(p);
}

}  // namespace tfd::kernels::data
