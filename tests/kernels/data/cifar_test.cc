// CifarDataset and CifarNextBatch through their kernels, on a few generated
// records whose every byte the test knows: the NHWC layout and scaling,
// labels, several files, sharding, the checkpointed position, and the
// errors a truncated file or a bad label give.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/data/cifar_file.h"
#include "kernels/data/idx_dataset.h"
#include "kernels/register_all.h"
#include "tests/kernels/data/data_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

// The byte record `id` holds in plane `channel` at `pixel` (y * 32 + x):
// the record's id at pixel 0 of the red plane, so a batch names its records.
uint8_t CifarByte(int id, int channel, int pixel) {
  if (channel == 0 && pixel == 0) return static_cast<uint8_t>(id);
  return static_cast<uint8_t>((id * 7 + channel * 50 + pixel) % 256);
}

// Records first_id .. first_id + n - 1, record i labelled labels(i).
std::string CifarBytes(int first_id, int n, int label_bytes = 1, int bad_label_at = -1) {
  std::string s;
  for (int id = first_id; id < first_id + n; ++id) {
    if (label_bytes == 2) s.push_back(static_cast<char>(id % 20));  // coarse
    const int label = id == bad_label_at ? (label_bytes == 2 ? 100 : 10)
                                         : (label_bytes == 2 ? id % 100 : id % 10);
    s.push_back(static_cast<char>(label));
    for (int c = 0; c < 3; ++c) {
      for (int p = 0; p < 1024; ++p) s.push_back(static_cast<char>(CifarByte(id, c, p)));
    }
  }
  return s;
}

struct CifarTask {
  explicit CifarTask(const std::string& task = "/job:worker/replica:0/task:0") {
    REQUIRE(kernels::RegisterAll(registry).ok());
    env.resources = &resources;
    env.io_dirs = {dir.path()};
    env.task = task;
    WriteBytes(dir.path() / "data_batch_1.bin", CifarBytes(0, 6));
    WriteBytes(dir.path() / "data_batch_2.bin", CifarBytes(6, 4));
  }

  RunOpOptions Options() {
    RunOpOptions o;
    o.env = &env;
    return o;
  }

  StatusOr<Value> Dataset(AttrMap attrs) {
    attrs.emplace("paths", std::vector<std::string>{"data_batch_1.bin", "data_batch_2.bin"});
    attrs.emplace("shared_name", std::string("cifar"));
    TFD_ASSIGN_OR_RETURN(auto out, RunOpValues(registry, "CifarDataset", attrs, {}, Options()));
    return out[0];
  }

  StatusOr<std::vector<Tensor>> Next(const Value& handle, AttrMap attrs) {
    TFD_ASSIGN_OR_RETURN(auto out,
                         RunOpValues(registry, "CifarNextBatch", std::move(attrs), {handle},
                                     Options()));
    return std::vector<Tensor>{out[0].tensor, out[1].tensor};
  }

  // The ids of the records of each batch of `batch` until OUT_OF_RANGE, each
  // record's pixels and label checked on the way.
  std::vector<int> Drain(const Value& handle, int64_t batch) {
    std::vector<int> ids;
    for (;;) {
      auto got = Next(handle, {{"batch_size", batch}});
      if (!got.ok()) {
        CHECK(got.status().code() == Code::kOutOfRange);
        return ids;
      }
      const Tensor& images = (*got)[0];
      const Tensor& labels = (*got)[1];
      const int64_t n = labels.dim(0);
      REQUIRE(images.shape() == TensorShape({n, 32, 32, 3}));
      for (int64_t k = 0; k < n; ++k) {
        const float* im = images.data<float>() + k * 3072;
        const int id = static_cast<int>(std::lround(im[0] * 255));
        CHECK(labels.data<int32_t>()[k] == id % 10);
        // HWC: pixel (y, x), channel c at (y * 32 + x) * 3 + c.
        for (int p : {1, 33, 1023}) {
          for (int c = 0; c < 3; ++c) {
            CHECK(im[p * 3 + c] == Approx(CifarByte(id, c, p) / 255.0).epsilon(1e-7));
          }
        }
        ids.push_back(id);
      }
      REQUIRE(ids.size() < 1000);
    }
  }

  DataTempDir dir;
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
};

std::vector<int> Iota(int n, int from = 0, int step = 1) {
  std::vector<int> v;
  for (int i = from; i < n; i += step) v.push_back(i);
  return v;
}

TEST_CASE("CifarNextBatch gives NHWC images in [0, 1] and the records' labels, file by file") {
  CifarTask t;
  auto ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  REQUIRE(ds.ok());
  CHECK(t.Drain(*ds, 4) == Iota(10));  // both files, in order; the last batch short
}

TEST_CASE("CifarNextBatch standardize gives each image mean 0 and variance 1") {
  CifarTask t;
  auto ds = t.Dataset({{"shuffle", false}});
  REQUIRE(ds.ok());
  auto got = t.Next(*ds, {{"batch_size", int64_t{2}}, {"standardize", true}});
  REQUIRE(got.ok());
  for (int k = 0; k < 2; ++k) {
    const float* im = (*got)[0].data<float>() + k * 3072;
    double sum = 0, sum_sq = 0;
    for (int j = 0; j < 3072; ++j) {
      sum += im[j];
      sum_sq += static_cast<double>(im[j]) * im[j];
    }
    CHECK(sum / 3072 == Approx(0).margin(1e-5));
    CHECK(sum_sq / 3072 == Approx(1).epsilon(1e-4));
  }
}

TEST_CASE("CifarDataset shards by task and shuffles by seed") {
  CifarTask task0("/job:worker/replica:0/task:0");
  CifarTask task1("/job:worker/replica:0/task:1");
  const AttrMap attrs{{"shuffle", false}, {"num_shards", int64_t{2}}, {"epochs", int64_t{1}}};
  auto ds0 = task0.Dataset(attrs);
  auto ds1 = task1.Dataset(attrs);
  REQUIRE(ds0.ok());
  REQUIRE(ds1.ok());
  CHECK(task0.Drain(*ds0, 3) == Iota(10, 0, 2));
  CHECK(task1.Drain(*ds1, 3) == Iota(10, 1, 2));

  CifarTask shuffled;
  auto ds = shuffled.Dataset({{"seed", int64_t{5}}, {"epochs", int64_t{1}}});
  REQUIRE(ds.ok());
  std::vector<int> ids = shuffled.Drain(*ds, 3);
  CHECK(ids != Iota(10));
  std::sort(ids.begin(), ids.end());
  CHECK(ids == Iota(10));
}

TEST_CASE("A CIFAR dataset's position is checkpointed and read on after a restore") {
  CifarTask t;
  auto ds = t.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  REQUIRE(ds.ok());
  REQUIRE(t.Next(*ds, {{"batch_size", int64_t{3}}, {"prefetch", false}}).ok());
  auto dataset = t.resources.Lookup<kernels::data::IdxDataset>("", "cifar");
  REQUIRE(dataset.ok());
  const std::optional<Tensor> saved = (*dataset)->CheckpointValue();
  REQUIRE(saved.has_value());

  CifarTask restarted;
  auto again = restarted.Dataset({{"shuffle", false}, {"epochs", int64_t{1}}});
  REQUIRE(again.ok());
  auto fresh = restarted.resources.Lookup<kernels::data::IdxDataset>("", "cifar");
  REQUIRE(fresh.ok());
  REQUIRE((*fresh)->Restore(*saved, "cifar").ok());
  CHECK(restarted.Drain(*again, 4) == Iota(10, 3));
}

TEST_CASE("CIFAR-100 records (label_bytes = 2) give the fine label") {
  CifarTask t;
  WriteBytes(t.dir.path() / "train.bin", CifarBytes(90, 5, 2));
  auto out = RunOpValues(t.registry, "CifarDataset",
                         {{"paths", std::vector<std::string>{"train.bin"}},
                          {"label_bytes", int64_t{2}}, {"shuffle", false}},
                         {}, t.Options());
  REQUIRE(out.ok());
  auto got = t.Next((*out)[0], {{"batch_size", int64_t{5}}});
  REQUIRE(got.ok());
  for (int k = 0; k < 5; ++k) CHECK((*got)[1].data<int32_t>()[k] == 90 + k);
}

TEST_CASE("A truncated CIFAR file is INVALID_ARGUMENT naming the file and the offset") {
  CifarTask t;
  WriteBytes(t.dir.path() / "data_batch_2.bin", CifarBytes(6, 4).substr(0, 3 * 3073 + 100));
  auto ds = t.Dataset({});
  REQUIRE(ds.status().code() == Code::kInvalidArgument);
  CHECK(Contains(ds.status().message(), "CIFAR file 'data_batch_2.bin' is truncated"));
  CHECK(Contains(ds.status().message(), "record at offset 9219 has only 100 bytes"));
}

TEST_CASE("A label out of range is INVALID_ARGUMENT naming its record") {
  CifarTask t;
  WriteBytes(t.dir.path() / "data_batch_1.bin", CifarBytes(0, 6, 1, /*bad_label_at=*/4));
  auto ds = t.Dataset({});
  REQUIRE(ds.status().code() == Code::kInvalidArgument);
  CHECK(Contains(ds.status().message(),
                 "record 4 (offset 12292) of CIFAR file 'data_batch_1.bin' has label 10"));

  kernels::data::CifarRecords records;
  const std::string bytes = CifarBytes(0, 3, 2, 2);
  const Status s = kernels::data::ParseCifarRecords(bytes, 2, "c100.bin", &records);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(Contains(s.message(), "record 2 (offset 6148) of CIFAR file 'c100.bin' has label 100"));
  CHECK(records.count == 0);
}

TEST_CASE("Bad CifarDataset attrs are INVALID_ARGUMENT") {
  CifarTask t;
  auto three = t.Dataset({{"label_bytes", int64_t{3}}});
  CHECK(three.status().code() == Code::kInvalidArgument);
  CHECK(Contains(three.status().message(), "label_bytes must be 1 (CIFAR-10) or 2"));
  auto none = RunOpValues(t.registry, "CifarDataset",
                          {{"paths", std::vector<std::string>{}}}, {}, t.Options());
  CHECK(none.status().code() == Code::kInvalidArgument);
  auto missing = RunOpValues(t.registry, "CifarDataset",
                             {{"paths", std::vector<std::string>{"nope.bin"}}}, {}, t.Options());
  CHECK(missing.status().code() == Code::kNotFound);
}

TEST_CASE("CifarNextBatch refuses an IDX dataset's handle, naming the node") {
  CifarTask t;
  WriteCountingExamples(t.dir.path(), 4);  // 2x3 images
  auto idx = RunOpValues(t.registry, "IdxDataset",
                         {{"images_path", std::string("images")},
                          {"labels_path", std::string("labels")}},
                         {}, t.Options());
  REQUIRE(idx.ok());
  auto got = t.Next((*idx)[0], {{"batch_size", int64_t{2}}, {"prefetch", false}});
  CHECK(got.status().code() == Code::kInvalidArgument);
  CHECK(Contains(got.status().message(), "CifarNextBatch reads 32x32x3 images, but its dataset "
                                         "holds 2x3x1 ones"));
}

}  // namespace
}  // namespace tfd::testing
