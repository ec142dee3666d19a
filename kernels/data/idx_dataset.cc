// IdxDataset: loading the files once, and the epoch/position cursor.
#include "kernels/data/idx_dataset.h"

#include <algorithm>
#include <atomic>
#include <utility>

namespace tfd::kernels::data {

std::string IdxDatasetSpec::ToString() const {
  std::string s;
  if (cifar_paths.empty()) {
    s = "images '" + images_path + "', labels '" + labels_path + "', ";
  } else {
    s = "CIFAR files";
    for (size_t i = 0; i < cifar_paths.size(); ++i) {
      s += (i == 0 ? " '" : ", '") + cifar_paths[i] + "'";
    }
    s += " with " + std::to_string(label_bytes) + " label byte" + (label_bytes == 1 ? "" : "s") +
         ", ";
  }
  s += shuffle ? "shuffled with seed " + std::to_string(seed) : std::string("in file order");
  s += epochs < 0 ? ", forever" : ", " + std::to_string(epochs) + " epochs";
  s += ", shard " + std::to_string(shard_index) + " of " + std::to_string(num_shards);
  return s;
}

IdxDataset::IdxDataset(std::string name, IdxDatasetSpec spec)
    : name_(std::move(name)), spec_(std::move(spec)) {
  order_spec_.shuffle = spec_.shuffle;
  order_spec_.seed = spec_.seed;
  order_spec_.shard_index = spec_.shard_index;
  order_spec_.num_shards = spec_.num_shards;
}

std::string IdxDataset::DebugString() const {
  MutexLock lock(mu_);
  std::string s = std::string(Kind()) + " '" + name_ + "': ";
  if (!examples_) return s + "not loaded (" + spec_.ToString() + ")";
  const IdxImages& im = examples_->images;
  s += std::to_string(im.count) + " examples of " + std::to_string(im.rows) + "x" +
       std::to_string(im.cols) +
       (examples_->channels == 1 ? "" : "x" + std::to_string(examples_->channels)) +
       ", shard " + std::to_string(spec_.shard_index) + " of " + std::to_string(spec_.num_shards) +
       ", epoch " + std::to_string(ReadEpochLocked());
  s += spec_.epochs < 0 ? " (forever)" : " of " + std::to_string(spec_.epochs);
  return s;
}

Status IdxDataset::CheckSameSpec(const IdxDatasetSpec& other) const {
  if (other == spec_) return OkStatus();
  return errors::InvalidArgument("dataset '", name_, "' exists as ", spec_.ToString(),
                                 ", which differs from the requested ", other.ToString());
}

StatusOr<std::shared_ptr<IdxDataset::Examples>> IdxDataset::LoadIdx(const KernelEnv& env) const {
  TFD_ASSIGN_OR_RETURN(auto images_file, env.ResolveIoPath(spec_.images_path));
  TFD_ASSIGN_OR_RETURN(auto labels_file, env.ResolveIoPath(spec_.labels_path));
  auto examples = std::make_shared<Examples>();
  TFD_ASSIGN_OR_RETURN(examples->images, ReadIdxImages(images_file, spec_.images_path));
  TFD_ASSIGN_OR_RETURN(examples->labels, ReadIdxLabels(labels_file, spec_.labels_path));
  const auto labels = static_cast<int64_t>(examples->labels.labels.size());
  if (labels != examples->images.count) {
    return errors::InvalidArgument("IDX files '", spec_.images_path, "' and '", spec_.labels_path,
                                   "' disagree: ", examples->images.count, " images but ", labels,
                                   " labels");
  }
  examples->labels_path = spec_.labels_path;
  return examples;
}

StatusOr<std::shared_ptr<IdxDataset::Examples>> IdxDataset::LoadCifar(
    const KernelEnv& env) const {
  CifarRecords records;
  for (const std::string& path : spec_.cifar_paths) {
    TFD_ASSIGN_OR_RETURN(auto file, env.ResolveIoPath(path));
    TFD_RETURN_IF_ERROR(ReadCifarFile(file, path, spec_.label_bytes, &records));
  }
  auto examples = std::make_shared<Examples>();
  examples->images.count = records.count;
  examples->images.rows = kCifarSide;
  examples->images.cols = kCifarSide;
  examples->images.pixels = std::move(records.pixels);
  examples->channels = kCifarChannels;
  examples->labels.labels = std::move(records.labels);
  examples->labels_path = spec_.cifar_paths.front();
  return examples;
}

Status IdxDataset::EnsureLoaded(const KernelEnv& env) {
  MutexLock lock(mu_);
  if (examples_) return OkStatus();
  TFD_ASSIGN_OR_RETURN(std::shared_ptr<Examples> examples,
                       spec_.cifar_paths.empty() ? LoadIdx(env) : LoadCifar(env));
  const auto labels = static_cast<int64_t>(examples->labels.labels.size());
  if (pending_) {
    // Checked against the count now known; on failure the dataset stays
    // unloaded and says so again on the next try.
    TFD_RETURN_IF_ERROR(CheckPosition(*pending_, labels));
    epoch_ = pending_->epoch;
    position_ = pending_->position;
    order_.clear();
    pending_.reset();
  }
  order_spec_.count = labels;
  examples_ = std::move(examples);
  return OkStatus();
}

Status IdxDataset::Exhausted() const {
  return errors::OutOfRange("dataset '", name_, "' is exhausted after ", spec_.epochs,
                            spec_.epochs == 1 ? " epoch" : " epochs");
}

StatusOr<IdxDataset::Batch> IdxDataset::Next(int64_t batch_size, bool drop_remainder) {
  MutexLock lock(mu_);
  PutBackLocked();
  return NextLocked(batch_size, drop_remainder);
}

StatusOr<IdxDataset::Reserved> IdxDataset::Reserve(int64_t batch_size, bool drop_remainder) {
  static std::atomic<uint64_t> next_ticket{1};
  MutexLock lock(mu_);
  PutBackLocked();
  const int64_t epoch = epoch_, position = position_;
  auto batch = NextLocked(batch_size, drop_remainder);
  if (!batch.ok()) {
    MoveCursorLocked(epoch, position);  // an exhausting draw moved it
    return batch.status();
  }
  reserved_ = ReservedStart{next_ticket.fetch_add(1, std::memory_order_relaxed), epoch, position};
  return Reserved{std::move(*batch), reserved_->ticket};
}

bool IdxDataset::Commit(uint64_t ticket) {
  MutexLock lock(mu_);
  if (!reserved_ || reserved_->ticket != ticket) return false;
  reserved_.reset();
  return true;
}

void IdxDataset::MoveCursorLocked(int64_t epoch, int64_t position) {
  if (epoch != epoch_) order_.clear();
  epoch_ = epoch;
  position_ = position;
}

void IdxDataset::PutBackLocked() {
  if (!reserved_) return;
  MoveCursorLocked(reserved_->epoch, reserved_->position);
  reserved_.reset();
}

StatusOr<IdxDataset::Batch> IdxDataset::NextLocked(int64_t batch_size, bool drop_remainder) {
  if (!examples_) {
    return errors::FailedPrecondition("dataset '", name_, "' is not loaded: its dataset op "
                                      "has not run successfully");
  }
  const int64_t shard_size = ShardSize(order_spec_);
  if (shard_size == 0) {
    return errors::OutOfRange("dataset '", name_, "' has no examples for shard ",
                              spec_.shard_index, " of ", spec_.num_shards, " (its files hold ",
                              order_spec_.count, ")");
  }
  const bool finite = spec_.epochs >= 0;
  if (finite && epoch_ >= spec_.epochs) return Exhausted();
  int64_t available = batch_size;
  if (finite) {
    // What is left, computed so that a huge epoch count cannot overflow.
    const int64_t in_this_epoch = shard_size - position_;
    const int64_t later_epochs = spec_.epochs - epoch_ - 1;
    if (in_this_epoch < batch_size &&
        later_epochs < (batch_size - in_this_epoch) / shard_size + 1) {
      available = in_this_epoch + later_epochs * shard_size;
    }
  }
  if (available < batch_size && drop_remainder) {
    epoch_ = spec_.epochs;
    position_ = 0;
    order_.clear();
    return Exhausted();
  }
  Batch b;
  b.examples = examples_;
  b.indices.reserve(static_cast<size_t>(std::min(available, batch_size)));
  while (static_cast<int64_t>(b.indices.size()) < batch_size &&
         !(finite && epoch_ >= spec_.epochs)) {
    if (order_.empty()) order_ = EpochOrder(order_spec_, epoch_);
    const int64_t take = std::min(batch_size - static_cast<int64_t>(b.indices.size()),
                                  static_cast<int64_t>(order_.size()) - position_);
    b.indices.insert(b.indices.end(), order_.begin() + position_,
                     order_.begin() + position_ + take);
    position_ += take;
    if (position_ == static_cast<int64_t>(order_.size())) {
      ++epoch_;
      position_ = 0;
      order_.clear();
    }
  }
  return b;
}

int64_t IdxDataset::epoch() const {
  MutexLock lock(mu_);
  return ReadEpochLocked();
}

Status IdxDataset::BindReader(const SessionPresence& reader) {
  const auto session = reader.lock();
  if (!session) return OkStatus();
  MutexLock lock(mu_);
  const auto holder = reader_.lock();
  if (holder && holder != session) {
    return errors::FailedPrecondition(
        Kind(), " '", name_, "' is being read by ", *holder, ", so ", *session,
        " may not read it until that session closes: the dataset's cursor belongs to one "
        "session at a time (a second trainer on one task would take half its batches). "
        "To read the same files with a cursor of its own, give this graph's dataset op "
        "another shared_name");
  }
  reader_ = reader;
  return OkStatus();
}

void IdxDataset::Reset() {
  MutexLock lock(mu_);
  reserved_.reset();
  epoch_ = 0;
  position_ = 0;
  order_.clear();
  pending_.reset();
}

std::optional<InputPosition> IdxDataset::Position() const {
  MutexLock lock(mu_);
  if (!examples_) return pending_;
  return InputPosition{.epoch = ReadEpochLocked(), .position = ReadPositionLocked(),
                       .count = order_spec_.count,
                       .shard_index = spec_.shard_index, .num_shards = spec_.num_shards,
                       .seed = spec_.seed, .shuffle = spec_.shuffle};
}

Status IdxDataset::CheckPosition(const InputPosition& p, std::optional<int64_t> count) const {
  // Says what differs, and the two ways on: the reader the checkpoint was
  // saved under, or a model trained afresh, whose input starts anew.
  auto differs = [&](const std::string& what) {
    return errors::FailedPrecondition(
        "dataset '", name_, "' cannot continue from the saved input position (", p.ToString(),
        "): ", what, "; read with the shards, order and files it was saved under, or train a "
        "new model without this checkpoint");
  };
  if (p.shard_index != spec_.shard_index || p.num_shards != spec_.num_shards) {
    return differs("this task reads shard " + std::to_string(spec_.shard_index) + " of " +
                   std::to_string(spec_.num_shards));
  }
  if (p.shuffle != spec_.shuffle || (p.shuffle && p.seed != spec_.seed)) {
    return differs(spec_.shuffle ? "the graph shuffles with seed " + std::to_string(spec_.seed)
                                 : std::string("the graph reads in file order"));
  }
  if (!count) return OkStatus();  // not loaded: the load checks the rest
  if (p.count != *count) {
    return differs("its files now hold " + std::to_string(*count) + " examples");
  }
  EpochOrderSpec order = order_spec_;
  order.count = *count;
  const int64_t shard_size = ShardSize(order);
  const bool exhausted = spec_.epochs >= 0 && p.epoch >= spec_.epochs;
  if ((exhausted && (p.epoch != spec_.epochs || p.position != 0)) ||
      (!exhausted && p.position != 0 && p.position >= shard_size)) {
    return differs("the shard holds " + std::to_string(shard_size) + " examples per epoch" +
                   (spec_.epochs >= 0 ? ", " + std::to_string(spec_.epochs) + " epochs" : ""));
  }
  return OkStatus();
}

std::optional<int64_t> IdxDataset::LoadedCount() const {
  return examples_ ? std::optional<int64_t>(order_spec_.count) : std::nullopt;
}

Status IdxDataset::AcceptsPosition(const InputPosition& p) const {
  MutexLock lock(mu_);
  return CheckPosition(p, LoadedCount());
}

Status IdxDataset::SetPosition(const InputPosition& p) {
  MutexLock lock(mu_);
  TFD_RETURN_IF_ERROR(CheckPosition(p, LoadedCount()));
  if (!examples_) {
    pending_ = p;
    return OkStatus();
  }
  reserved_.reset();
  epoch_ = p.epoch;
  position_ = p.position;
  order_.clear();
  return OkStatus();
}

ResourceDescription IdxDataset::Describe() const {
  MutexLock lock(mu_);
  return {.kind = spec_.cifar_paths.empty() ? "idx_dataset" : "cifar_dataset",
          .initialized = examples_ != nullptr};
}

std::optional<Tensor> IdxDataset::CheckpointValue() const {
  auto p = Position();
  if (!p) return std::nullopt;  // nothing read, nothing to keep
  return p->ToTensor();
}

Status IdxDataset::CheckRestore(const Tensor& saved, const std::string& key,
                                const std::string& file) const {
  TFD_ASSIGN_OR_RETURN(InputPosition p, InputPosition::FromTensor(saved, key));
  return AcceptsPosition(p).WithContext("restoring from '" + file + "'");
}

Status IdxDataset::Restore(const Tensor& saved, const std::string& key) {
  TFD_ASSIGN_OR_RETURN(InputPosition p, InputPosition::FromTensor(saved, key));
  return SetPosition(p);
}

double IdxDataset::progress() const {
  MutexLock lock(mu_);
  if (!examples_) return 0;
  const int64_t shard_size = ShardSize(order_spec_);
  const auto epoch = static_cast<double>(ReadEpochLocked());
  if (shard_size == 0) return epoch;
  return epoch + static_cast<double>(ReadPositionLocked()) / shard_size;
}

}  // namespace tfd::kernels::data
