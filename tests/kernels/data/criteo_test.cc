// The Criteo TSV reader: one line's fields and hashed rows (checked against
// lines that ../shared/peers' generator wrote), what a malformed file gets,
// shards and epochs over several files, the read-ahead and the checkpointed
// position, and the ops a graph uses.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "kernels/data/criteo_dataset.h"
#include "kernels/data/criteo_line.h"
#include "kernels/data/criteo_reader.h"
#include "kernels/register_all.h"
#include "tests/kernels/data/data_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

using kernels::data::CriteoBatch;
using kernels::data::CriteoDataset;
using kernels::data::CriteoDatasetSpec;
using kernels::data::CriteoExample;
using kernels::data::CriteoReader;
using kernels::data::CriteoReaderOptions;
using kernels::data::InputPosition;
using kernels::data::ParseCriteoLine;

// The first two lines `torch_peers_bench.py ctr_data --n 3 --seed 5 --vocab
// 4096` wrote, and the rows its ctr_read_tsv (torch) gave them, which a
// Python one-liner reimplementing only fmix32 reproduced.
constexpr const char* kPeerLine0 =
    "0\t32\t0\t\t26\t1\t2\t0\t0\t52\t\t1\t\t0\tc860074d\t99a3f6a4\t41b9d641\t59d3895e\t"
    "939d8f7d\te70da63a\t8e3c744f\td7a08430\tdb373ed7\t7c702504\t516d1657\t27d14292\t"
    "2e3dcad0\td334698a\t04e90bf5\t98f6565a\tec42f8d5\t16341441\t86bdc5f8\tba9986e5\t"
    "f8cb6b68\t\tdd507b42\t610c775a\tb53a11bb\t9f851130";
constexpr const char* kPeerLine1 =
    "0\t1\t9\t1\t4\t1\t2\t0\t8\t1\t16\t15\t\t\t36deb503\t3cd6e3f3\t9acc6f6e\t2c5fb6ba\t"
    "e12a7696\t\tba18070d\t3cfdfa46\t0f877f54\t1f4b8cef\t516d1657\t118da3c5\t6d1854f5\t"
    "b0faaec6\tdb1b0e84\t867d8392\t5d6d1c2a\teb35e22e\t\t3f30833a\td939ff68\t\t7fcff827\t"
    "5db59265\t31fd8ff4\t";
const std::vector<int64_t> kPeerRows0 = {3908, 642,  2038, 1742, 1969, 2643, 3144,
                                         2026, 2060, 190,  3497, 3933, 1711, 2352,
                                         2970, 1864, 3403, 478,  3226, 1912, 1212,
                                         -1,   114,  1567, 3792, 2180};
const std::vector<int64_t> kPeerRows1 = {1456, 2522, 1100, 292,  2115, -1,   3103,
                                         2344, 403,  3414, 3497, 3702, 453,  2424,
                                         3359, 2758, 1003, 3196, -1,   2345, 408,
                                         -1,   473,  1525, 3569, -1};

// A well-formed line whose label is `label`, I1 = `i1` and C1 = `c1` (hex).
std::string Line(int label, const std::string& i1, const std::string& c1) {
  std::string s = std::to_string(label) + "\t" + i1;
  for (int j = 1; j < 13; ++j) s += "\t" + std::to_string(j);
  s += "\t" + c1;
  for (int j = 1; j < 26; ++j) s += "\tabc" + std::to_string(j);
  return s;
}

// Line(k % 2, k, hex k) for k in [first, first + n), each ending in '\n'.
std::string CountingLines(int first, int n) {
  std::string s;
  char hex[16];
  for (int k = first; k < first + n; ++k) {
    std::snprintf(hex, sizeof hex, "%x", k);
    s += Line(k % 2, std::to_string(k), hex) + "\n";
  }
  return s;
}

std::vector<int64_t> Ids(const CriteoExample& ex) { return {ex.ids.begin(), ex.ids.end()}; }

// Every example the reader yields, by I1; the error that ended it, if any.
// At most 1000, so that a reader that never ends fails the test instead of
// hanging it.
std::vector<int> DrainI1(CriteoReader& r, Status* error = nullptr) {
  std::vector<int> seen;
  CriteoExample ex;
  while (seen.size() < 1000) {
    auto got = r.Next(ex);
    if (!got.ok()) {
      if (error) *error = got.status();
      return seen;
    }
    if (!*got) return seen;
    seen.push_back(static_cast<int>(ex.dense[0]));
  }
  return seen;
}

CriteoReaderOptions ReaderOver(const DataTempDir& dir, std::vector<std::string> names) {
  CriteoReaderOptions o;
  for (const std::string& n : names) o.files.push_back(dir.path() / n);
  o.names = std::move(names);
  o.num_buckets = 4096;
  return o;
}

TEST_CASE("A Criteo line hashes its categories to the peer benchmark's rows") {
  CriteoExample ex;
  REQUIRE(ParseCriteoLine(kPeerLine0, 4096, ex).ok());
  CHECK(ex.label == 0.0f);
  CHECK(Ids(ex) == kPeerRows0);
  const std::vector<float> dense0 = {32, 0, 0, 26, 1, 2, 0, 0, 52, 0, 1, 0, 0};
  CHECK(std::vector<float>(ex.dense.begin(), ex.dense.end()) == dense0);
  REQUIRE(ParseCriteoLine(kPeerLine1, 4096, ex).ok());
  CHECK(Ids(ex) == kPeerRows1);  // its last field is empty: the line ends in a tab
}

TEST_CASE("Empty features read as 0 and row -1; CRLF and upper-case hex are accepted") {
  std::string empty = "1";
  for (int j = 0; j < 39; ++j) empty += "\t";
  CriteoExample ex;
  REQUIRE(ParseCriteoLine(empty, 100, ex).ok());
  CHECK(ex.label == 1.0f);
  for (float d : ex.dense) CHECK(d == 0.0f);
  for (int64_t id : ex.ids) CHECK(id == -1);

  CriteoExample lower, upper;
  REQUIRE(ParseCriteoLine(Line(0, "-3", "c860074d") + "\r", 4096, lower).ok());
  REQUIRE(ParseCriteoLine(Line(0, "-3", "C860074D"), 4096, upper).ok());
  CHECK(lower.dense[0] == -3.0f);
  CHECK(lower.ids[0] == 3908);  // as kPeerLine0's C1
  CHECK(Ids(lower) == Ids(upper));
}

TEST_CASE("A malformed Criteo line is INVALID_ARGUMENT naming the field") {
  struct Case {
    std::string line, expect;
  };
  std::string too_many = Line(0, "1", "a") + "\tx";
  const std::vector<Case> cases = {
      {Line(2, "1", "a"), "the label must be 0 or 1"},
      {Line(0, "1.5", "a"), "I1 must be a decimal integer"},
      {Line(0, "99999999999999999999", "a"), "I1 must be a decimal integer"},
      {Line(0, "1", "zz"), "C1 must be 1 to 8 hex digits"},
      {Line(0, "1", "123456789"), "C1 must be 1 to 8 hex digits"},
      {Line(0, "1", "-1"), "C1 must be 1 to 8 hex digits"},
      {too_many, "expected 40 tab-separated fields"},
      {"0\t1\t2", "but the line has 3"},
      {"", "but the line has 1"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    CriteoExample ex;
    const Status s = ParseCriteoLine(c.line, 4096, ex);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(Contains(s.message(), c.expect));
  }
}

TEST_CASE("The reader names the file and line of a bad line, and keeps failing there") {
  DataTempDir dir;
  WriteBytes(dir.path() / "a", CountingLines(0, 3) + Line(0, "x", "1") + "\n" + CountingLines(4, 2));
  CriteoReader r(ReaderOver(dir, {"a"}));
  Status error;
  CHECK(DrainI1(r, &error) == std::vector<int>{0, 1, 2});
  CHECK(error.code() == Code::kInvalidArgument);
  CHECK(Contains(error.message(), "line 4 of Criteo file 'a'"));
  CriteoExample ex;
  const Status again = r.Next(ex).status();
  CHECK(again.code() == error.code());
  CHECK(again.message() == error.message());
}

TEST_CASE("A last line without its newline is read; a truncated one is an error") {
  DataTempDir dir;
  std::string whole = CountingLines(0, 3);
  whole.pop_back();  // no '\n' after the last line
  WriteBytes(dir.path() / "whole", whole);
  CriteoReader r(ReaderOver(dir, {"whole"}));
  CHECK(DrainI1(r) == std::vector<int>{0, 1, 2});

  std::string cut = CountingLines(0, 3);
  cut.resize(cut.size() - 30);  // mid-way through the third line's categories
  WriteBytes(dir.path() / "cut", cut);
  CriteoReader t(ReaderOver(dir, {"cut"}));
  Status error;
  CHECK(DrainI1(t, &error) == std::vector<int>{0, 1});
  CHECK(error.code() == Code::kInvalidArgument);
  CHECK(Contains(error.message(), "line 3 of Criteo file 'cut'"));
}

TEST_CASE("Hostile files: a huge line, a binary file, a missing file") {
  DataTempDir dir;
  WriteBytes(dir.path() / "long", CountingLines(0, 1) + std::string(1 << 20, '7'));
  CriteoReader r(ReaderOver(dir, {"long"}));
  Status error;
  CHECK(DrainI1(r, &error) == std::vector<int>{0});
  CHECK(error.code() == Code::kInvalidArgument);
  CHECK(Contains(error.message(), "line 2 of Criteo file 'long' is longer than"));

  WriteBytes(dir.path() / "binary", std::string("\x00\x01\xff\t\n", 5));
  CriteoReader b(ReaderOver(dir, {"binary"}));
  CHECK(DrainI1(b, &error).empty());
  CHECK(error.code() == Code::kInvalidArgument);

  CriteoReader m(ReaderOver(dir, {"absent"}));
  CHECK(DrainI1(m, &error).empty());
  CHECK(error.code() == Code::kNotFound);
  CHECK(Contains(error.message(), "'absent'"));
}

TEST_CASE("Shards take every n-th line over all files, and cover them together") {
  DataTempDir dir;
  WriteBytes(dir.path() / "a", CountingLines(0, 5));
  WriteBytes(dir.path() / "b", CountingLines(5, 4));
  std::set<int> all;
  for (int shard = 0; shard < 3; ++shard) {
    CriteoReaderOptions o = ReaderOver(dir, {"a", "b"});
    o.shard_index = shard;
    o.num_shards = 3;
    o.epochs = 2;
    CriteoReader r(o);
    const std::vector<int> seen = DrainI1(r);
    std::vector<int> expect;
    for (int epoch = 0; epoch < 2; ++epoch) {
      for (int k = shard; k < 9; k += 3) expect.push_back(k);
    }
    CHECK(seen == expect);
    all.insert(seen.begin(), seen.end());
    CHECK(r.epoch() == 2);
  }
  CHECK(all.size() == 9);

  // More shards than lines: the empty shard says so rather than spinning.
  CriteoReaderOptions o = ReaderOver(dir, {"a"});
  o.shard_index = 7;
  o.num_shards = 8;
  o.epochs = -1;
  CriteoReader r(o);
  Status error;
  CHECK(DrainI1(r, &error).empty());
  CHECK(error.code() == Code::kOutOfRange);
}

// A dataset over "a" (lines 0..6) in 2 epochs, opened in `dir`.
struct DatasetFixture {
  DatasetFixture() {
    WriteBytes(dir.path() / "a", CountingLines(0, 7));
    env.io_dirs = {dir.path()};
  }
  std::shared_ptr<CriteoDataset> Make() {
    CriteoDatasetSpec spec{.paths = {"a"}, .num_buckets = 4096, .epochs = 2};
    auto ds = std::make_shared<CriteoDataset>("train", spec);
    REQUIRE(ds->Open(env).ok());
    return ds;
  }
  // I1 of each example of the next batch of 3, or empty on an error.
  static std::vector<int> Batch(CriteoDataset& ds, bool ahead) {
    auto b = ds.Next(3, false, std::chrono::steady_clock::now() + std::chrono::seconds(30));
    if (!b.ok()) return {};
    if (ahead) ds.ReadAhead(3, false);
    std::vector<int> out;
    for (int64_t k = 0; k < b->size(); ++k) out.push_back(static_cast<int>(b->dense[k * 13]));
    return out;
  }
  DataTempDir dir;
  KernelEnv env;
};

TEST_CASE("An epoch's last example moves the place to the next epoch's start") {
  DataTempDir dir;
  WriteBytes(dir.path() / "a", CountingLines(0, 3));
  CriteoReaderOptions o = ReaderOver(dir, {"a"});
  o.epochs = 2;
  CriteoReader r(o);
  CriteoExample ex;
  for (int k = 0; k < 3; ++k) REQUIRE(r.Next(ex).value());
  CHECK(r.epoch() == 1);  // one epoch read whole, not "epoch 0, 3 examples in"
  CHECK(r.position() == 0);
  for (int k = 0; k < 3; ++k) REQUIRE(r.Next(ex).value());
  CHECK(r.epoch() == 2);
  CHECK_FALSE(r.Next(ex).value());

  // The dataset, whose epoch a graph's summary reads after each batch: a
  // batch that ends an epoch exactly counts it.
  DatasetFixture f;
  auto ds = f.Make();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  REQUIRE(ds->Next(7, false, deadline).ok());
  CHECK(ds->epoch() == 1);
  auto p = ds->Position();
  REQUIRE(p.has_value());
  CHECK(p->epoch == 1);
  CHECK(p->position == 0);
  REQUIRE(ds->Next(7, false, deadline).ok());
  CHECK(ds->epoch() == 2);
  const Status end = ds->Next(7, false, deadline).status();
  CHECK(end.code() == Code::kOutOfRange);
  CHECK(Contains(end.message(), "after 2 epochs"));
}

TEST_CASE("Reading ahead gives the same batches, and the position counts only those taken") {
  DatasetFixture f;
  const std::vector<std::vector<int>> expect = {
      {0, 1, 2}, {3, 4, 5}, {6, 0, 1}, {2, 3, 4}, {5, 6}};
  for (bool ahead : {false, true}) {
    INFO("read ahead " << ahead);
    auto ds = f.Make();
    CHECK_FALSE(ds->Position().has_value());
    std::vector<std::vector<int>> got;
    for (auto b = f.Batch(*ds, ahead); !b.empty(); b = f.Batch(*ds, ahead)) {
      got.push_back(b);
      if (got.size() == 1) {
        // The next batch is read ahead, but not yet counted.
        REQUIRE(ds->WaitForReadAhead(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
        auto p = ds->Position();
        REQUIRE(p.has_value());
        CHECK(p->epoch == 0);
        CHECK(p->position == 3);
      }
    }
    CHECK(got == expect);
  }
}

TEST_CASE("A restored position reads on where the saved one was, read-ahead dropped") {
  DatasetFixture f;
  auto first = f.Make();
  f.Batch(*first, true);
  f.Batch(*first, true);
  f.Batch(*first, true);  // {6, 0, 1}: into epoch 1; the next is read ahead
  const std::optional<Tensor> saved = first->CheckpointValue();
  REQUIRE(saved.has_value());
  CHECK(f.Batch(*first, true) == std::vector<int>{2, 3, 4});

  auto second = f.Make();
  REQUIRE(second->Restore(*saved, "train").ok());
  CHECK(second->epoch() == 1);
  CHECK(f.Batch(*second, true) == std::vector<int>{2, 3, 4});
  // Restoring over a batch read ahead drops it.
  REQUIRE(second->Restore(*saved, "train").ok());
  CHECK(f.Batch(*second, false) == std::vector<int>{2, 3, 4});

  // Another shard's position is refused, naming why.
  InputPosition other{.epoch = 0, .position = 1, .count = 0, .shard_index = 1,
                      .num_shards = 2, .seed = 0, .shuffle = false};
  const Status s = second->SetPosition(other);
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(Contains(s.message(), "shard 0 of 1"));
  // A position past the files fails on the next read, not silently.
  REQUIRE(second->SetPosition({.epoch = 0, .position = 50, .shuffle = false}).ok());
  auto past = second->Next(3, false, std::chrono::steady_clock::now() + std::chrono::seconds(30));
  CHECK(past.status().code() == Code::kFailedPrecondition);

  second->Reset();
  CHECK(f.Batch(*second, false) == std::vector<int>{0, 1, 2});
}

// The ops, as a graph runs them.
TEST_CASE("CriteoDataset and CriteoNextBatch give labels, dense features and rows") {
  OpRegistry registry;
  REQUIRE(kernels::RegisterAll(registry).ok());
  DataTempDir dir;
  WriteBytes(dir.path() / "a", std::string(kPeerLine0) + "\n" + kPeerLine1 + "\r\n");
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  env.io_dirs = {dir.path()};
  env.task = "/job:worker/replica:0/task:0";
  RunOpOptions o;
  o.env = &env;
  const AttrMap attrs = {{"paths", std::vector<std::string>{"a"}},
                         {"num_buckets", int64_t{4096}}};
  auto ds = RunOpValues(registry, "CriteoDataset", attrs, {}, o);
  REQUIRE(ds.ok());
  auto out = RunOpValues(registry, "CriteoNextBatch", {{"batch_size", int64_t{5}}}, {(*ds)[0]}, o);
  REQUIRE(out.ok());
  const Tensor& labels = (*out)[0].tensor;
  const Tensor& dense = (*out)[1].tensor;
  const Tensor& ids = (*out)[2].tensor;
  REQUIRE(labels.shape() == TensorShape({2}));
  REQUIRE(dense.shape() == TensorShape({2, 13}));
  REQUIRE(ids.shape() == TensorShape({2, 26}));
  CHECK(ids.dtype() == DType::kInt64);
  CHECK(dense.data<float>()[13] == 1.0f);  // the second line's I1
  std::vector<int64_t> row1(ids.data<int64_t>() + 26, ids.data<int64_t>() + 52);
  CHECK(row1 == kPeerRows1);
  auto end = RunOpValues(registry, "CriteoNextBatch", {{"batch_size", int64_t{5}}}, {(*ds)[0]}, o);
  CHECK(end.status().code() == Code::kOutOfRange);

  // A batch far larger than the data gives what there is, allocating for
  // what was read rather than for batch_size.
  REQUIRE(RunOpValues(registry, "CriteoDatasetReset", {}, {(*ds)[0]}, o).ok());
  auto huge = RunOpValues(registry, "CriteoNextBatch", {{"batch_size", int64_t{1} << 30}},
                          {(*ds)[0]}, o);
  REQUIRE(huge.ok());
  CHECK((*huge)[0].tensor.shape() == TensorShape({2}));

  // Bad attrs are refused when the kernel is made.
  auto bad = RunOpValues(registry, "CriteoDataset",
                         {{"paths", std::vector<std::string>{"a"}}, {"num_buckets", int64_t{0}}},
                         {}, o);
  CHECK(bad.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing
