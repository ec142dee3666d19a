// IdxNextBatch's prefetch: a kernel kept across runs (as the executor keeps
// it) draws the next batch while the step computes. What a training loop
// relies on is that this is invisible: the same batches in the same order,
// the same end, and a dataset position (epoch, progress, checkpoints) that
// counts only the batches runs have taken.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <thread>

#include "common/allowed_cpus.h"
#include "common/subprocess.h"
#include "kernels/data/idx_dataset.h"
#include "kernels/register_all.h"
#include "tests/kernels/data/data_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

constexpr int kExamples = 10;  // 2x3 images; the label of example i is i

// One task with its own dataset files, resources and environment.
struct Task {
  explicit Task(int examples = kExamples) {
    REQUIRE(kernels::RegisterAll(registry).ok());
    env.resources = &resources;
    env.io_dirs = {dir.path()};
    env.task = "/job:worker/replica:0/task:0";
    WriteCountingExamples(dir.path(), examples);
  }

  RunOpOptions Options() {
    RunOpOptions o;
    o.env = &env;
    return o;
  }

  Value Dataset(AttrMap attrs) {
    attrs.emplace("images_path", std::string("images"));
    attrs.emplace("labels_path", std::string("labels"));
    attrs.emplace("shared_name", std::string("mnist"));
    auto out = RunOpValues(registry, "IdxDataset", attrs, {}, Options());
    REQUIRE(out.ok());
    return (*out)[0];
  }

  // An IdxNextBatch kernel that lives across runs.
  std::unique_ptr<KernelRunner> Reader(AttrMap attrs) {
    auto k = KernelRunner::Make(registry, "IdxNextBatch", std::move(attrs), Options());
    REQUIRE(k.ok());
    return std::move(*k);
  }

  DataTempDir dir;
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
};

kernels::data::IdxDataset& DatasetOf(const Value& handle) {
  return static_cast<kernels::data::IdxDataset&>(*handle.ref);
}

// What one run gave: its labels (= example ids), or the error's code.
struct Got {
  std::vector<int> ids;
  Code code = Code::kOk;
  bool operator==(const Got&) const = default;
};

// One run of `reader`; the images are checked against the examples named.
Got Read(KernelRunner& reader, const Value& handle) {
  auto out = reader.Run({handle});
  if (!out.ok()) return Got{{}, out.status().code()};
  const Tensor& images = (*out)[0].tensor;
  const Tensor& labels = (*out)[1].tensor;
  Got got;
  for (int64_t k = 0; k < labels.dim(0); ++k) {
    const int id = labels.dtype() == DType::kInt32
                       ? labels.data<int32_t>()[k]
                       : static_cast<int>(std::max_element(labels.data<float>() + k * 10,
                                                           labels.data<float>() + k * 10 + 10) -
                                          (labels.data<float>() + k * 10));
    for (int j = 0; j < 6; ++j) {
      CHECK(images.data<float>()[k * 6 + j] == Approx(TestPixel(id, j) / 255.0).epsilon(1e-7));
    }
    got.ids.push_back(id);
  }
  return got;
}

// Each run's batch with the dataset's position after it.
struct Step {
  Got got;
  std::optional<kernels::data::InputPosition> position;
  bool operator==(const Step&) const = default;
};

std::vector<Step> ReadAll(const AttrMap& dataset, AttrMap batch, bool prefetch, int runs) {
  Task t;
  const Value ds = t.Dataset(dataset);
  batch["prefetch"] = prefetch;
  auto reader = t.Reader(batch);
  std::vector<Step> steps;
  for (int i = 0; i < runs; ++i) {
    steps.push_back(Step{Read(*reader, ds), DatasetOf(ds).Position()});
  }
  return steps;
}

TEST_CASE("With prefetch, runs give the same batches, positions and end as without") {
  struct Case {
    const char* what;
    AttrMap dataset, batch;
  };
  const Case cases[] = {
      {"shuffled, a short last batch", {{"seed", int64_t{3}}, {"epochs", int64_t{3}}},
       {{"batch_size", int64_t{4}}}},
      {"drop_remainder", {{"seed", int64_t{5}}, {"epochs", int64_t{2}}},
       {{"batch_size", int64_t{3}}, {"drop_remainder", true}}},
      {"one-hot labels, a batch larger than an epoch", {{"epochs", int64_t{4}}},
       {{"batch_size", int64_t{13}}, {"one_hot", true}, {"Tlabels", DType::kFloat32}}},
      {"forever, in file order", {{"shuffle", false}}, {{"batch_size", int64_t{7}}}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const auto with = ReadAll(c.dataset, c.batch, true, 14);
    const auto without = ReadAll(c.dataset, c.batch, false, 14);
    CHECK(with == without);
    // The runs reach the end where the dataset has one: the test compares
    // the end, not only full batches.
    if (c.dataset.count("epochs")) CHECK(with.back().got.code == Code::kOutOfRange);
  }
}

TEST_CASE("A batch drawn ahead is unread: position, epoch and other readers see it so") {
  Task t;
  const Value ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{2}}});
  auto reader = t.Reader({{"batch_size", int64_t{4}}});
  CHECK(Read(*reader, ds).ids == std::vector<int>{0, 1, 2, 3});
  // The next four are drawn ahead; the position says 4, not 8.
  auto p = DatasetOf(ds).Position();
  REQUIRE(p.has_value());
  CHECK(p->epoch == 0);
  CHECK(p->position == 4);
  CHECK(DatasetOf(ds).progress() == Approx(0.4));
  // Another reader (another graph's node, another batch size) comes next
  // and gets example 4: the batch ahead goes back to the dataset.
  auto other = t.Reader({{"batch_size", int64_t{3}}});
  CHECK(Read(*other, ds).ids == std::vector<int>{4, 5, 6});
  CHECK(Read(*reader, ds).ids == std::vector<int>{7, 8, 9, 0});
  CHECK(Read(*other, ds).ids == std::vector<int>{1, 2, 3});
  CHECK(Read(*other, ds).ids == std::vector<int>{4, 5, 6});
  CHECK(Read(*reader, ds).ids == std::vector<int>{7, 8, 9});
  CHECK(DatasetOf(ds).epoch() == 2);
  CHECK(Read(*reader, ds).code == Code::kOutOfRange);
  CHECK(Read(*other, ds).code == Code::kOutOfRange);
}

TEST_CASE("A reader dropped with a batch ahead leaves it to the next reader") {
  Task t;
  const Value ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  {
    auto reader = t.Reader({{"batch_size", int64_t{4}}});
    CHECK(Read(*reader, ds).ids == std::vector<int>{0, 1, 2, 3});
  }  // its session ended: 4..7 were drawn ahead and never taken
  CHECK(DatasetOf(ds).Position()->position == 4);
  auto next = t.Reader({{"batch_size", int64_t{4}}});
  CHECK(Read(*next, ds).ids == std::vector<int>{4, 5, 6, 7});
  CHECK(Read(*next, ds).ids == std::vector<int>{8, 9});
}

TEST_CASE("Reset and a restored position drop the batch drawn ahead") {
  Task t;
  const Value ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  auto reader = t.Reader({{"batch_size", int64_t{3}}});
  CHECK(Read(*reader, ds).ids == std::vector<int>{0, 1, 2});
  const auto saved = DatasetOf(ds).Position();
  REQUIRE(saved.has_value());
  CHECK(Read(*reader, ds).ids == std::vector<int>{3, 4, 5});
  REQUIRE(RunOpValues(t.registry, "IdxDatasetReset", {}, {ds}, t.Options()).ok());
  CHECK(Read(*reader, ds).ids == std::vector<int>{0, 1, 2});
  CHECK(Read(*reader, ds).ids == std::vector<int>{3, 4, 5});
  // Twice in a row, as a restore during recovery may come again.
  REQUIRE(DatasetOf(ds).SetPosition(*saved).ok());
  REQUIRE(DatasetOf(ds).SetPosition(*saved).ok());
  CHECK(Read(*reader, ds).ids == std::vector<int>{3, 4, 5});
  CHECK(Read(*reader, ds).ids == std::vector<int>{6, 7, 8});
  CHECK(Read(*reader, ds).ids == std::vector<int>{9});
  CHECK(Read(*reader, ds).code == Code::kOutOfRange);
}

TEST_CASE("A batch made ahead into a full memory budget is made again by the run") {
  Task t;
  const Value ds = t.Dataset({{"shuffle", false}});
  // Room for one batch of 4 (images float32 [4, 6], labels int32 [4]).
  const uint64_t one_batch = 4 * 6 * 4 + 4 * 4;
  t.env.memory = std::make_shared<MemoryBudget>(one_batch);
  auto reader = t.Reader({{"batch_size", int64_t{4}}});
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    auto held = reader->Run({ds});
    REQUIRE(held.ok());
    CHECK(t.env.memory->used() == one_batch);
    const int held_first = (*held)[1].tensor.data<int32_t>()[0];
    // The batch ahead cannot fit while this one is held; give the prefetch
    // thread time to try (the outcome is the same if it has not).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // Held, the next run fails as it would without a prefetch...
    auto full = reader->Run({ds});
    CHECK(full.status().code() == Code::kResourceExhausted);
    held->clear();
    CHECK(t.env.memory->used() == 0);
    CHECK(held_first == 12 * round % kExamples);
    // ... and with the memory free it succeeds. The failed run used up its
    // batch, as without a prefetch: each round takes 12 examples.
    const int first = 12 * round % kExamples;
    const Got next = Read(*reader, ds);
    REQUIRE(next.code == Code::kOk);
    CHECK(next.ids.front() == (first + 8) % kExamples);
  }
}

TEST_CASE("Concurrent runs of one prefetching kernel never get an example twice") {
  constexpr int kMany = 250;
  Task t(kMany);
  const Value ds = t.Dataset({{"epochs", int64_t{2}}});
  auto reader = t.Reader({{"batch_size", int64_t{7}}});
  // Catch2's assertions are not thread-safe: threads only record.
  std::vector<std::vector<Got>> seen(4);
  std::vector<std::thread> threads;
  for (auto& mine : seen) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        auto out = reader->Run({ds});
        Got got;
        if (!out.ok()) {
          got.code = out.status().code();
          mine.push_back(got);
          return;
        }
        const Tensor& labels = (*out)[1].tensor;
        for (int64_t k = 0; k < labels.dim(0); ++k) got.ids.push_back(labels.data<int32_t>()[k]);
        mine.push_back(got);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<int> all;
  for (const auto& mine : seen) {
    REQUIRE(!mine.empty());
    CHECK(mine.back().code == Code::kOutOfRange);
    for (const Got& g : mine) all.insert(all.end(), g.ids.begin(), g.ids.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<int> want;
  for (int e = 0; e < 2; ++e) {
    for (int i = 0; i < kMany; ++i) want.push_back(i);
  }
  std::sort(want.begin(), want.end());
  CHECK(all == want);
}

// Threads of this process named as the dataset's prefetch thread.
int PrefetchThreads() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    n += name == "tfd-prefetch";
  }
  return n;
}

TEST_CASE("A prefetching kernel built where one CPU is allowed draws nothing ahead, and reads "
          "the same batches") {
  const std::vector<int> cpus = AllowedCpus();
  REQUIRE(!cpus.empty());
  const AttrMap dataset{{"seed", int64_t{3}}, {"epochs", int64_t{2}}};
  const AttrMap batch{{"batch_size", int64_t{4}}};
  const auto without = ReadAll(dataset, batch, false, 8);
  REQUIRE(PrefetchThreads() == 0);  // the datasets of earlier cases are gone
  // Built and run on a thread pinned to one CPU, as in a task allowed one.
  std::vector<Step> pinned;
  int threads_while_pinned = -1;
  std::thread([&] {
    if (!PinSelf(cpus.back()).ok()) return;
    Task t;
    const Value ds = t.Dataset(dataset);
    AttrMap attrs = batch;
    attrs["prefetch"] = true;
    auto reader = t.Reader(attrs);
    for (int i = 0; i < 8; ++i) pinned.push_back(Step{Read(*reader, ds), DatasetOf(ds).Position()});
    threads_while_pinned = PrefetchThreads();
  }).join();
  CHECK(threads_while_pinned == 0);
  CHECK(pinned == without);
  if (cpus.size() > 1) {
    // Where more may run, the same kernel prefetches on the dataset's thread.
    Task t;
    const Value ds = t.Dataset(dataset);
    AttrMap attrs = batch;
    attrs["prefetch"] = true;
    auto reader = t.Reader(attrs);
    Read(*reader, ds);
    CHECK(PrefetchThreads() == 1);
  }
}

}  // namespace
}  // namespace tfd::testing
