// IdxDataset, IdxNextBatch and IdxDatasetEpoch through their kernels: what
// a training loop sees batch by batch, epoch by epoch, shard by shard.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include "common/shape_inference.h"
#include "kernels/register_all.h"
#include "tests/kernels/data/data_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

constexpr int kExamples = 10;  // 2x3 images; the label of example i is i

// One task: its allowed directory (holding "images" and "labels"), its
// resources and its kernel environment.
struct DataTask {
  explicit DataTask(const std::string& task = "/job:worker/replica:0/task:0") {
    REQUIRE(kernels::RegisterAll(registry).ok());
    env.resources = &resources;
    env.io_dirs = {dir.path()};
    env.task = task;
    WriteCountingExamples(dir.path(), kExamples);
  }

  RunOpOptions Options() {
    RunOpOptions o;
    o.env = &env;
    return o;
  }

  // Runs IdxDataset with `attrs` over the defaults below; the handle.
  StatusOr<Value> Dataset(AttrMap attrs) {
    attrs.emplace("images_path", std::string("images"));
    attrs.emplace("labels_path", std::string("labels"));
    attrs.emplace("shared_name", std::string("mnist"));
    TFD_ASSIGN_OR_RETURN(auto out, RunOpValues(registry, "IdxDataset", attrs, {}, Options()));
    return out[0];
  }

  // IdxNextBatch's (images, labels), run for `session` (none: a session in
  // one process).
  StatusOr<std::vector<Tensor>> Next(const Value& handle, AttrMap attrs,
                                     SessionPresence session = {}) {
    RunOpOptions options = Options();
    options.session = std::move(session);
    TFD_ASSIGN_OR_RETURN(auto out, RunOpValues(registry, "IdxNextBatch", std::move(attrs),
                                               {handle}, options));
    return std::vector<Tensor>{out[0].tensor, out[1].tensor};
  }

  int64_t Epoch(const Value& handle) {
    auto out = RunOpValues(registry, "IdxDatasetEpoch", {}, {handle}, Options());
    REQUIRE(out.ok());
    return (*out)[0].tensor.scalar<int64_t>();
  }

  double Progress(const Value& handle) {
    auto out = RunOpValues(registry, "IdxDatasetProgress", {}, {handle}, Options());
    REQUIRE(out.ok());
    return (*out)[0].tensor.scalar<double>();
  }

  // The labels (= example indices) of batches of `batch` until OUT_OF_RANGE;
  // each batch's images are checked against the example they belong to.
  std::vector<std::vector<int>> Drain(const Value& handle, int64_t batch) {
    std::vector<std::vector<int>> batches;
    for (;;) {
      auto got = Next(handle, {{"batch_size", batch}});
      if (!got.ok()) {
        CHECK(got.status().code() == Code::kOutOfRange);
        return batches;
      }
      const Tensor& images = (*got)[0];
      const Tensor& labels = (*got)[1];
      REQUIRE(labels.dtype() == DType::kInt32);
      REQUIRE(images.shape() == TensorShape({labels.dim(0), 6}));
      std::vector<int> ids;
      for (int64_t k = 0; k < labels.dim(0); ++k) {
        const int id = labels.data<int32_t>()[k];
        for (int j = 0; j < 6; ++j) {
          CHECK(images.data<float>()[k * 6 + j] == Approx(TestPixel(id, j) / 255.0).epsilon(1e-7));
        }
        ids.push_back(id);
      }
      batches.push_back(ids);
      REQUIRE(batches.size() < 1000);  // a dataset that never ends fails here
    }
  }

  DataTempDir dir;
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
};

std::vector<int> Flatten(const std::vector<std::vector<int>>& batches) {
  std::vector<int> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

std::vector<int> Sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<int> Iota(int n, int from = 0) {
  std::vector<int> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST_CASE("IdxNextBatch gives flattened images scaled to [0, 1] with their labels") {
  DataTask t;
  auto ds = t.Dataset({{"shuffle", false}});
  REQUIRE(ds.ok());
  CHECK(ds->is_ref());
  auto got = t.Next(*ds, {{"batch_size", int64_t{10}}});
  REQUIRE(got.ok());
  const Tensor& images = (*got)[0];
  REQUIRE(images.dtype() == DType::kFloat32);
  REQUIRE(images.shape() == TensorShape({10, 6}));
  for (int i = 0; i < kExamples; ++i) {
    CHECK((*got)[1].data<int32_t>()[i] == i);
    for (int j = 0; j < 6; ++j) {
      CHECK(images.data<float>()[i * 6 + j] == Approx(TestPixel(i, j) / 255.0).epsilon(1e-7));
    }
  }
  CHECK(images.data<float>()[0] == 0.0f);   // pixel 0 of image 0
  CHECK(images.data<float>()[59] == 1.0f);  // the 255 pixel
}

TEST_CASE("One epoch visits every example once; batches run on across epochs") {
  DataTask t;
  SECTION("in file order") {
    auto ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{2}}});
    REQUIRE(ds.ok());
    const auto batches = t.Drain(*ds, 4);
    // 20 examples in batches of 4: the third spans the two epochs.
    REQUIRE(batches.size() == 5);
    CHECK(batches[2] == std::vector<int>{8, 9, 0, 1});
    std::vector<int> want = Iota(10);
    want.insert(want.end(), want.begin(), want.end());
    CHECK(Flatten(batches) == want);
  }
  SECTION("shuffled: each epoch a permutation, a new one each epoch") {
    auto ds = t.Dataset({{"seed", int64_t{5}}, {"epochs", int64_t{3}}});
    REQUIRE(ds.ok());
    const auto all = Flatten(t.Drain(*ds, 10));
    REQUIRE(all.size() == 30);
    std::vector<std::vector<int>> epochs;
    for (int e = 0; e < 3; ++e) {
      epochs.emplace_back(all.begin() + 10 * e, all.begin() + 10 * (e + 1));
      CHECK(Sorted(epochs.back()) == Iota(10));
    }
    CHECK(epochs[0] != Iota(10));
    CHECK((epochs[0] != epochs[1] || epochs[1] != epochs[2]));
  }
}

TEST_CASE("The last batch of the last epoch is short, then OUT_OF_RANGE") {
  DataTask t;
  auto ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  REQUIRE(ds.ok());
  CHECK(t.Epoch(*ds) == 0);
  auto first = t.Next(*ds, {{"batch_size", int64_t{6}}});
  REQUIRE(first.ok());
  CHECK((*first)[1].dim(0) == 6);
  CHECK(t.Epoch(*ds) == 0);
  auto second = t.Next(*ds, {{"batch_size", int64_t{6}}});
  REQUIRE(second.ok());
  CHECK((*second)[0].shape() == TensorShape({4, 6}));
  CHECK((*second)[1].shape() == TensorShape({4}));
  CHECK((*second)[1].data<int32_t>()[3] == 9);
  CHECK(t.Epoch(*ds) == 1);
  for (int again = 0; again < 2; ++again) {
    auto done = t.Next(*ds, {{"batch_size", int64_t{6}}});
    CHECK(done.status().code() == Code::kOutOfRange);
    CHECK(Contains(done.status().message(), "dataset 'mnist' is exhausted after 1 epoch"));
  }
  CHECK(t.Epoch(*ds) == 1);
}

TEST_CASE("drop_remainder ends with OUT_OF_RANGE instead of a short batch") {
  DataTask t;
  auto ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{2}}});
  REQUIRE(ds.ok());
  const AttrMap attrs{{"batch_size", int64_t{6}}, {"drop_remainder", true}};
  for (int i = 0; i < 3; ++i) {
    auto got = t.Next(*ds, attrs);
    REQUIRE(got.ok());
    CHECK((*got)[1].dim(0) == 6);
  }
  auto done = t.Next(*ds, attrs);  // 2 left of 20
  CHECK(done.status().code() == Code::kOutOfRange);
  CHECK(Contains(done.status().message(), "exhausted after 2 epochs"));
  CHECK(t.Epoch(*ds) == 2);
}

TEST_CASE("epochs = -1 repeats forever") {
  DataTask t;
  auto ds = t.Dataset({{"shuffle", false}});
  REQUIRE(ds.ok());
  for (int i = 0; i < 7; ++i) {
    auto got = t.Next(*ds, {{"batch_size", int64_t{3}}});
    REQUIRE(got.ok());
    REQUIRE((*got)[1].dim(0) == 3);
    for (int k = 0; k < 3; ++k) CHECK((*got)[1].data<int32_t>()[k] == (3 * i + k) % 10);
  }
  CHECK(t.Epoch(*ds) == 2);
  // A batch larger than the dataset wraps around it.
  auto big = t.Next(*ds, {{"batch_size", int64_t{25}}});
  REQUIRE(big.ok());
  CHECK((*big)[1].dim(0) == 25);
  CHECK((*big)[1].data<int32_t>()[0] == 1);
  CHECK(t.Epoch(*ds) == 4);
}

TEST_CASE("IdxDatasetProgress counts epochs with the fraction of the current one") {
  DataTask t("/job:worker/replica:0/task:1");
  auto ds = t.Dataset({{"epochs", int64_t{3}}, {"num_shards", int64_t{2}}});
  REQUIRE(ds.ok());
  CHECK(t.Progress(*ds) == 0.0);
  // Shard 1 of 2 holds 5 of the 10 examples: 2 of them are 0.4 epoch.
  REQUIRE(t.Next(*ds, {{"batch_size", int64_t{2}}}).ok());
  CHECK(t.Progress(*ds) == Approx(0.4));
  REQUIRE(t.Next(*ds, {{"batch_size", int64_t{4}}}).ok());
  CHECK(t.Progress(*ds) == Approx(1.2));
  t.Drain(*ds, 4);
  CHECK(t.Progress(*ds) == 3.0);
}

TEST_CASE("IdxDatasetReset starts an exhausted dataset over from epoch 0") {
  DataTask t;
  auto ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  REQUIRE(ds.ok());
  const auto first = t.Drain(*ds, 4);
  CHECK(t.Epoch(*ds) == 1);
  REQUIRE(RunOpValues(t.registry, "IdxDatasetReset", {}, {*ds}, t.Options()).ok());
  CHECK(t.Epoch(*ds) == 0);
  CHECK(t.Progress(*ds) == 0.0);
  CHECK(t.Drain(*ds, 4) == first);
}

TEST_CASE("The order is fixed by the seed") {
  auto order = [](int64_t seed) {
    DataTask t;  // a fresh task: nothing shared with the last one
    auto ds = t.Dataset({{"seed", seed}, {"epochs", int64_t{2}}});
    REQUIRE(ds.ok());
    return Flatten(t.Drain(*ds, 7));
  };
  const auto a = order(1);
  CHECK(order(1) == a);
  CHECK(order(2) != a);
  CHECK(Sorted(std::vector<int>(a.begin(), a.begin() + 10)) == Iota(10));
}

TEST_CASE("seed2 (TF1's op seed under a graph seed) is part of the order") {
  auto order = [](int64_t seed, int64_t seed2) {
    DataTask t;
    auto ds = t.Dataset({{"seed", seed}, {"seed2", seed2}, {"epochs", int64_t{2}}});
    REQUIRE(ds.ok());
    return Flatten(t.Drain(*ds, 7));
  };
  const auto a = order(87654321, 1);
  CHECK(order(87654321, 1) == a);
  CHECK(order(87654321, 2) != a);
  CHECK(order(1234, 1) != a);
  CHECK(order(1, 0) == order(1, 0));
}

TEST_CASE("one_hot labels are float32 rows with a single 1") {
  DataTask t;
  auto ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  REQUIRE(ds.ok());
  auto got = t.Next(*ds, {{"batch_size", int64_t{4}}, {"one_hot", true},
                          {"Tlabels", DType::kFloat32}, {"num_classes", int64_t{12}}});
  REQUIRE(got.ok());
  const Tensor& labels = (*got)[1];
  REQUIRE(labels.dtype() == DType::kFloat32);
  REQUIRE(labels.shape() == TensorShape({4, 12}));
  for (int k = 0; k < 4; ++k) {
    for (int c = 0; c < 12; ++c) CHECK(labels.data<float>()[k * 12 + c] == (c == k ? 1.0f : 0.0f));
  }
  SECTION("a label beyond num_classes is INVALID_ARGUMENT naming it and the file") {
    auto bad = t.Next(*ds, {{"batch_size", int64_t{10}}, {"one_hot", true},
                            {"Tlabels", DType::kFloat32}, {"num_classes", int64_t{8}}});
    CHECK(bad.status().code() == Code::kInvalidArgument);
    CHECK(Contains(bad.status().message(), "label 8 of example 8 in IDX file 'labels'"));
  }
  SECTION("one_hot needs Tlabels = float32") {
    auto bad = t.Next(*ds, {{"batch_size", int64_t{4}}, {"one_hot", true}});
    CHECK(bad.status().code() == Code::kInvalidArgument);
    CHECK(Contains(bad.status().message(), "Tlabels must be float32, not int32"));
  }
}

TEST_CASE("shard = auto splits each epoch by the task that runs the kernel") {
  for (const bool shuffle : {false, true}) {
    INFO("shuffle " << shuffle);
    DataTask task0("/job:worker/replica:0/task:0");
    DataTask task1("/job:worker/replica:0/task:1");
    const AttrMap attrs{{"shuffle", shuffle}, {"seed", int64_t{3}}, {"num_shards", int64_t{2}},
                        {"epochs", int64_t{1}}};
    auto ds0 = task0.Dataset(attrs);
    auto ds1 = task1.Dataset(attrs);
    REQUIRE(ds0.ok());
    REQUIRE(ds1.ok());
    const auto half0 = Flatten(task0.Drain(*ds0, 3));
    const auto half1 = Flatten(task1.Drain(*ds1, 3));
    CHECK(half0.size() == 5);
    CHECK(half1.size() == 5);
    std::vector<int> both = half0;
    both.insert(both.end(), half1.begin(), half1.end());
    CHECK(Sorted(both) == Iota(10));  // disjoint, and together everything
    if (!shuffle) CHECK(half1 == std::vector<int>{1, 3, 5, 7, 9});
  }
}

TEST_CASE("Sharding is off with num_shards = 0 or shard = none") {
  DataTask t("/job:worker/replica:0/task:3");
  for (const AttrMap& attrs : {AttrMap{{"num_shards", int64_t{0}}},
                               AttrMap{{"shard", std::string("none")}}}) {
    auto ds = t.Dataset(attrs);
    REQUIRE(ds.ok());
    t.resources.ClearContainer("");
  }
  auto ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  REQUIRE(ds.ok());
  CHECK(Flatten(t.Drain(*ds, 4)) == Iota(10));
}

TEST_CASE("Bad sharding attrs are INVALID_ARGUMENT") {
  DataTask t("/job:worker/replica:0/task:2");
  auto beyond = t.Dataset({{"num_shards", int64_t{2}}});
  CHECK(beyond.status().code() == Code::kInvalidArgument);
  CHECK(Contains(beyond.status().message(), "would read shard 2 but num_shards is 2"));
  auto contradiction = t.Dataset({{"shard", std::string("none")}, {"num_shards", int64_t{2}}});
  CHECK(contradiction.status().code() == Code::kInvalidArgument);
  auto unknown = t.Dataset({{"shard", std::string("task")}});
  CHECK(unknown.status().code() == Code::kInvalidArgument);
  CHECK(Contains(unknown.status().message(), "shard must be \"auto\" or \"none\""));
  auto zero = t.Dataset({{"epochs", int64_t{0}}});
  CHECK(zero.status().code() == Code::kInvalidArgument);
  CHECK(Contains(zero.status().message(), "epochs must be positive"));
}

TEST_CASE("A shard with no examples is OUT_OF_RANGE at once, even forever") {
  DataTask t("/job:worker/replica:0/task:11");
  auto ds = t.Dataset({{"num_shards", int64_t{12}}});
  REQUIRE(ds.ok());
  auto got = t.Next(*ds, {{"batch_size", int64_t{1}}});
  CHECK(got.status().code() == Code::kOutOfRange);
  CHECK(Contains(got.status().message(), "no examples for shard 11 of 12"));
}

TEST_CASE("Graphs naming the same dataset share its cursor and must agree on it") {
  DataTask t;
  auto a = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  auto b = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->ref == b->ref);
  REQUIRE(t.Next(*a, {{"batch_size", int64_t{4}}}).ok());
  auto from_b = t.Next(*b, {{"batch_size", int64_t{1}}});
  REQUIRE(from_b.ok());
  CHECK((*from_b)[1].data<int32_t>()[0] == 4);
  auto differs = t.Dataset({{"shuffle", false}, {"epochs", int64_t{2}}});
  CHECK(differs.status().code() == Code::kInvalidArgument);
  CHECK(Contains(differs.status().message(), "dataset 'mnist' exists as"));
  CHECK(Contains(a->ref->DebugString(), "10 examples of 2x3"));
}

TEST_CASE("Concurrent readers of one dataset never get the same example twice") {
  DataTask t;
  constexpr int kMany = 250;
  std::vector<uint8_t> labels(kMany);
  std::iota(labels.begin(), labels.end(), uint8_t{0});
  WriteBytes(t.dir.path() / "many_images", IdxImagesBytes(kMany, 2, 3));
  WriteBytes(t.dir.path() / "many_labels", IdxLabelsBytes(labels));
  auto ds = t.Dataset({{"images_path", std::string("many_images")},
                       {"labels_path", std::string("many_labels")}, {"epochs", int64_t{2}}});
  REQUIRE(ds.ok());
  // Catch2's assertions are not thread-safe: the readers only record what
  // they got, and the checks run after they are joined.
  struct Reader {
    std::vector<Tensor> labels;
    Status end;
  };
  std::vector<Reader> seen(4);
  std::vector<std::thread> readers;
  for (Reader& mine : seen) {
    readers.emplace_back([&t, &ds, &mine] {
      for (int i = 0; i < 1000; ++i) {
        auto got = t.Next(*ds, {{"batch_size", int64_t{7}}});
        if (!got.ok()) {
          mine.end = got.status();
          return;
        }
        mine.labels.push_back((*got)[1]);
      }
    });
  }
  for (auto& r : readers) r.join();
  std::vector<int> all;
  for (const Reader& mine : seen) {
    CHECK(mine.end.code() == Code::kOutOfRange);
    for (const Tensor& l : mine.labels) {
      for (int64_t k = 0; k < l.dim(0); ++k) all.push_back(l.data<int32_t>()[k]);
    }
  }
  std::vector<int> want = Iota(kMany);
  want.insert(want.end(), want.begin(), want.end());
  CHECK(Sorted(all) == Sorted(want));
}

TEST_CASE("Bad files are INVALID_ARGUMENT naming the file") {
  DataTask t;
  std::string cut = IdxImagesBytes(kExamples, 2, 3);
  cut.resize(cut.size() - 3);
  WriteBytes(t.dir.path() / "cut", cut);
  WriteBytes(t.dir.path() / "nine", IdxLabelsBytes({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  DataTempDir elsewhere;
  WriteBytes(elsewhere.path() / "images", IdxImagesBytes(kExamples, 2, 3));
  const std::string outside = (elsewhere.path() / "images").string();
  struct Case {
    std::string images, labels, expect;
  };
  const Case cases[] = {
      {"cut", "labels", "IDX file 'cut' is truncated"},
      {"labels", "labels", "IDX file 'labels' has magic number 0x00000801"},
      {"images", "images", "IDX file 'images' has magic number 0x00000803"},
      {"images", "nine", "'images' and 'nine' disagree: 10 images but 9 labels"},
      {outside, "labels", "'" + outside + "' is outside the allowed directories"},
      {"../x/images", "labels", "is outside the allowed directories"},
  };
  for (const Case& c : cases) {
    INFO(c.images << " + " << c.labels);
    t.resources.ClearContainer("");
    auto ds = t.Dataset({{"images_path", c.images}, {"labels_path", c.labels}});
    REQUIRE(ds.status().code() == Code::kInvalidArgument);
    INFO(ds.status().message());
    CHECK(Contains(ds.status().message(), c.expect));
  }
  t.resources.ClearContainer("");
  auto missing = t.Dataset({{"images_path", std::string("nope")}});
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(Contains(missing.status().message(), "IDX file 'nope' does not exist"));
}

TEST_CASE("A failed load is retried on the next run") {
  DataTask t;
  WriteBytes(t.dir.path() / "later", "");
  auto first = t.Dataset({{"images_path", std::string("later")}});
  CHECK(first.status().code() == Code::kInvalidArgument);
  WriteBytes(t.dir.path() / "later", IdxImagesBytes(kExamples, 2, 3));
  auto second = t.Dataset({{"images_path", std::string("later")}});
  CHECK(second.ok());
}

TEST_CASE("No file access without an allowed directory") {
  DataTask t;
  t.env.io_dirs.clear();
  auto ds = t.Dataset({});
  CHECK(ds.status().code() == Code::kInvalidArgument);
  CHECK(Contains(ds.status().message(), "path 'images' refused"));
}

TEST_CASE("Shape functions: batch dimension known only with drop_remainder") {
  DataTask t;
  const OpRegistry& reg = t.registry;
  auto infer = [&](const std::string& op, AttrMap attrs, int inputs, int outputs) {
    auto found = reg.Lookup(op);
    REQUIRE(found.ok());
    const OpRegistration* entry = *found;
    REQUIRE(CompleteAndCheckAttrs(entry->def, attrs).ok());
    InferenceContext c(attrs, std::vector<PartialShape>(inputs), std::vector<DType>(inputs),
                       std::vector<const Tensor*>(inputs, nullptr), outputs);
    Status s = entry->shape_fn(c);
    return std::make_pair(s, c.outputs());
  };
  auto [s1, out1] = infer("IdxNextBatch", {{"batch_size", int64_t{32}}}, 1, 2);
  REQUIRE(s1.ok());
  CHECK(out1[0] == PartialShape({-1, -1}));
  CHECK(out1[1] == PartialShape({-1}));
  auto [s2, out2] = infer("IdxNextBatch", {{"batch_size", int64_t{32}}, {"drop_remainder", true},
                                           {"one_hot", true}, {"Tlabels", DType::kFloat32}}, 1, 2);
  REQUIRE(s2.ok());
  CHECK(out2[0] == PartialShape({32, -1}));
  CHECK(out2[1] == PartialShape({32, 10}));
  auto [s3, out3] = infer("IdxNextBatch", {{"batch_size", int64_t{32}}, {"one_hot", true}}, 1, 2);
  CHECK(s3.code() == Code::kInvalidArgument);
  auto [s4, out4] = infer("IdxDatasetEpoch", {}, 1, 1);
  REQUIRE(s4.ok());
  CHECK(out4[0] == PartialShape(TensorShape()));
  auto [s5, out5] = infer("IdxDataset", {{"images_path", std::string("a")},
                                         {"labels_path", std::string("b")},
                                         {"shard", std::string("both")}}, 0, 1);
  CHECK(s5.code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing

namespace tfd::testing {
namespace {

// The labels of the next batch of 2 that `session` reads, or the error.
StatusOr<std::vector<int>> NextIds(DataTask& t, const Value& ds, const SessionPresence& session) {
  TFD_ASSIGN_OR_RETURN(auto got, t.Next(ds, {{"batch_size", int64_t{2}}}, session));
  return std::vector<int>(got[1].data<int32_t>(), got[1].data<int32_t>() + got[1].dim(0));
}

std::shared_ptr<const std::string> NewSession(const std::string& name) {
  return std::make_shared<const std::string>(name);
}

// Two trainers on one task used to share the cursor, each silently taking
// every other batch; a trainer's next session (after a failed step, or the
// next run) must still read on from where the last one stopped.
TEST_CASE("a dataset's cursor is read by one session at a time and passed on when it ends") {
  DataTask t;
  auto ds = t.Dataset({{"shuffle", false}});
  REQUIRE(ds.ok());
  auto first = NewSession("session 1 of /job:worker/replica:0/task:0");
  auto second = NewSession("session 2 of /job:worker/replica:0/task:0");
  CHECK(NextIds(t, *ds, first).value() == std::vector<int>{0, 1});

  auto refused = NextIds(t, *ds, second);
  CHECK(refused.status().code() == Code::kFailedPrecondition);
  CHECK(Contains(refused.status().message(),
                 "IDX dataset 'mnist' is being read by session 1 of /job:worker/replica:0/task:0, "
                 "so session 2 of /job:worker/replica:0/task:0 may not read it"));
  CHECK(Contains(refused.status().message(), "another shared_name"));
  // Refused twice in a row, and a reset is refused as well: the first
  // session's cursor did not move.
  CHECK(NextIds(t, *ds, second).status().code() == Code::kFailedPrecondition);
  RunOpOptions as_second = t.Options();
  as_second.session = second;
  CHECK(RunOpValues(t.registry, "IdxDatasetReset", {}, {*ds}, as_second).status().code() ==
        Code::kFailedPrecondition);
  CHECK(NextIds(t, *ds, first).value() == std::vector<int>{2, 3});
  // Reading where it stands binds nothing.
  CHECK(t.Epoch(*ds) == 0);
  CHECK(t.Progress(*ds) == Approx(0.4));

  SECTION("the first session closes: the next reads on from its position") {
    first.reset();
    CHECK(NextIds(t, *ds, second).value() == std::vector<int>{4, 5});
    // Now the second holds it, and a third waits in turn.
    auto third = NewSession("session 3 of /job:worker/replica:0/task:0");
    CHECK(NextIds(t, *ds, third).status().code() == Code::kFailedPrecondition);
    second.reset();
    CHECK(NextIds(t, *ds, third).value() == std::vector<int>{6, 7});
  }
  SECTION("a session in one process is not tied, and does not tie") {
    CHECK(NextIds(t, *ds, {}).value() == std::vector<int>{4, 5});
    CHECK(NextIds(t, *ds, first).value() == std::vector<int>{6, 7});
  }
}

}  // namespace
}  // namespace tfd::testing
