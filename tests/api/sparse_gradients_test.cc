// Sparse gradients (TF's IndexedSlices): the gradient of a gather is its rows
// and their indices, stays sparse through a variable's read and through the
// sum of several gathers, densifies where a dense value is needed, and each
// optimizer applies it with a sparse kernel whose result matches a float64
// reference of the update over 100 steps with duplicate ids in the batches.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

#include "api/optimizers.h"
#include "api/placement.h"
#include "api/sync_replicas.h"
#include "api/train_signature.h"
#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using ops::Initializer;
using ops::Variable;
using testing::ApiEnv;

Tensor I32(const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(v); }

std::vector<double> Values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out.push_back(t.dtype() == DType::kFloat64 ? t.data<double>()[i] : t.data<float>()[i]);
  }
  return out;
}

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out.push_back(t.dtype() == DType::kInt64 ? t.data<int64_t>()[i] : t.data<int32_t>()[i]);
  }
  return out;
}

// A 5x2 float64 table and y = sum(gather(table, ids) * weights): dy/dtable
// has row ids[i] += weights[i].
struct GatherModel {
  ApiEnv env;
  Scope root = env.Root();
  Variable w{root.WithOpName("w"), {5, 2}, DType::kFloat64, Initializer::RandomNormal(1, 7)};

  // Initializes the table, then fetches `names`.
  std::vector<Tensor> Fetch(const std::vector<std::string>& names) {
    ops::GlobalVariablesInitializer(root);
    auto out = env.Run(root, {}, {}, {"init"});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    out = env.Run(root, {}, names);
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    return *out;
  }

  Output Term(const std::vector<int32_t>& ids, const std::vector<double>& weights) {
    const int64_t n = static_cast<int64_t>(ids.size());
    const Output rows = ops::Gather(root, w.value(), ops::Const(root, I32(ids)));
    const Output c = ops::Const(root, Tensor::FromVector<double>(weights, TensorShape{n, 2}));
    return ops::Sum(root, ops::Mul(root, rows, c), {0, 1});
  }
};

TEST_CASE("the gradient of a gather is its rows and their indices, and densifies") {
  GatherModel m;
  const Output y = m.Term({3, 1, 3}, {1, 2, 3, 4, 5, 6});
  auto g = AddGradientsKeepSparse(m.root, {y}, {m.w.ref()});
  REQUIRE(g.ok());
  REQUIRE((*g)[0].is_sparse());
  const IndexedSlices& sl = (*g)[0].sparse;
  auto dense = AddGradients(m.root, {y}, {m.w.ref()});
  REQUIRE(dense.ok());
  ops::Identity(m.root.WithOpName("dense"), (*dense)[0]);
  REQUIRE(m.root.ok());
  const std::vector<Tensor> out =
      m.Fetch({sl.values.name(), sl.indices.name(), sl.dense_shape.name(), "dense"});
  CHECK(Values(out[0]) == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(Ints(out[1]) == std::vector<int64_t>{3, 1, 3});
  CHECK(Ints(out[2]) == std::vector<int64_t>{5, 2});
  CHECK(Values(out[3]) == std::vector<double>{0, 0, 3, 4, 0, 0, 6, 8, 0, 0});
}

TEST_CASE("two gathers of one variable concatenate; a dense use densifies the sum") {
  GatherModel m;
  const Output y = ops::Add(m.root, m.Term({0, 4}, {1, 1, 2, 2}), m.Term({4}, {10, 20}));
  auto g = AddGradientsKeepSparse(m.root, {y}, {m.w.ref()});
  REQUIRE(g.ok());
  REQUIRE((*g)[0].is_sparse());
  const IndexedSlices& sl = (*g)[0].sparse;
  ops::Identity(m.root.WithOpName("dense"), Densify(m.root, sl));
  const std::vector<Tensor> out = m.Fetch({sl.values.name(), sl.indices.name(), "dense"});
  CHECK(Values(out[0]) == std::vector<double>{1, 1, 2, 2, 10, 20});
  CHECK(Ints(out[1]) == std::vector<int64_t>{0, 4, 4});
  CHECK(Values(out[2]) == std::vector<double>{1, 1, 0, 0, 0, 0, 0, 0, 12, 22});

  // The table also read whole: the gradient is dense, the sparse part in it.
  GatherModel mixed;
  const Output y2 = ops::Add(mixed.root, mixed.Term({2}, {5, 6}),
                             ops::Sum(mixed.root, mixed.w.value(), {0, 1}));
  auto g2 = AddGradientsKeepSparse(mixed.root, {y2}, {mixed.w.ref()});
  REQUIRE(g2.ok());
  REQUIRE(!(*g2)[0].is_sparse());
  REQUIRE((*g2)[0].dense.valid());
  const std::vector<Tensor> out2 = mixed.Fetch({(*g2)[0].dense.name()});
  CHECK(Values(out2[0]) == std::vector<double>{1, 1, 1, 1, 6, 7, 1, 1, 1, 1});
}

TEST_CASE("GatherV2 is sparse along axis 0 and dense along another axis") {
  GatherModel m;
  const Output ids = ops::Const(m.root, I32({1, 1}));
  const Output rows = ops::GatherV2(m.root, m.w.value(), ids, 0);
  const Output cols = ops::GatherV2(m.root, m.w.value(), ids, 1);
  auto g_rows = AddGradientsKeepSparse(m.root, {ops::Sum(m.root, rows, {0, 1})},
                                       {m.w.ref()});
  auto g_cols = AddGradientsKeepSparse(m.root, {ops::Sum(m.root, cols, {0, 1})},
                                       {m.w.ref()});
  REQUIRE(g_rows.ok());
  REQUIRE(g_cols.ok());
  CHECK((*g_rows)[0].is_sparse());
  REQUIRE((*g_cols)[0].dense.valid());
  const Output rows_dense = DenseOf(m.root, (*g_rows)[0]);
  const std::vector<Tensor> out = m.Fetch({rows_dense.name(), (*g_cols)[0].dense.name()});
  CHECK(Values(out[0]) == std::vector<double>{0, 0, 2, 2, 0, 0, 0, 0, 0, 0});
  CHECK(Values(out[1]) == std::vector<double>{0, 2, 0, 2, 0, 2, 0, 2, 0, 2});
}

// ---- Each optimizer's sparse update against a float64 reference. ----

constexpr int64_t kRows = 6, kWidth = 3, kBatch = 5;
using Table = std::vector<double>;  // kRows x kWidth, row-major

// The ids of step t: kBatch of kRows, with a duplicate (ids[1] = ids[0]) and
// rows left out.
std::vector<int32_t> BatchIds(int t) {
  std::vector<int32_t> ids(kBatch);
  uint32_t x = 2654435761u * static_cast<uint32_t>(t + 1);
  for (int i = 0; i < kBatch; ++i) {
    x = x * 1103515245u + 12345u;
    ids[i] = static_cast<int32_t>((x >> 16) % 4);  // rows 4 and 5 never; some of 0..3 missed
  }
  ids[1] = ids[0];
  if (t % 3 == 0) ids[4] = 4;  // row 4 now and then
  return ids;
}

// Targets of the rows gathered at step t.
std::vector<double> BatchTargets(int t) {
  std::vector<double> out;
  for (int i = 0; i < kBatch * kWidth; ++i) out.push_back(std::sin(0.3 * (t + 1) + i));
  return out;
}

// One optimizer's reference: the update of the rows touched (unique rows,
// gradients summed), slots as TF initializes them.
struct Reference {
  std::string name;
  std::function<std::unique_ptr<train::Optimizer>()> make;
  std::string sparse_op;         // the kernel the sparse path must use
  std::vector<double> slot_init;  // per slot
  // Updates element `k` of a touched row, step t (1-based), gradient g.
  std::function<void(std::vector<double*> r, double g, int t)> rule;
};

std::vector<Reference> References() {
  std::vector<Reference> refs;
  refs.push_back({"GradientDescent", [] { return std::make_unique<train::GradientDescent>(0.05); },
                  "ScatterSub", {}, [](std::vector<double*> r, double g, int) {
                    *r[0] -= 0.05 * g;
                  }});
  refs.push_back({"Momentum", [] { return std::make_unique<train::Momentum>(0.02, 0.9); },
                  "SparseApplyMomentum", {0}, [](std::vector<double*> r, double g, int) {
                    *r[1] = *r[1] * 0.9 + g;
                    *r[0] -= 0.02 * *r[1];
                  }});
  refs.push_back({"Adagrad", [] { return std::make_unique<train::Adagrad>(0.2); },
                  "SparseApplyAdagrad", {0.1}, [](std::vector<double*> r, double g, int) {
                    *r[1] += g * g;
                    *r[0] -= 0.2 * g / std::sqrt(*r[1]);
                  }});
  refs.push_back({"RMSProp", [] { return std::make_unique<train::RMSProp>(0.01, 0.9, 0.5, 1e-6); },
                  "SparseApplyRMSProp", {1, 0}, [](std::vector<double*> r, double g, int) {
                    *r[1] += (g * g - *r[1]) * (1 - 0.9);
                    *r[2] = *r[2] * 0.5 + 0.01 * g / std::sqrt(*r[1] + 1e-6);
                    *r[0] -= *r[2];
                  }});
  const auto ftrl = [](double shrink) {
    return [shrink](std::vector<double*> r, double g, int) {
      const double lr = 0.3, l1 = 0.01, l2 = 0.05;
      double &w = *r[0], &n = *r[1], &z = *r[2];
      const double n_new = n + g * g;
      z += g + 2 * shrink * w - (std::sqrt(n_new) - std::sqrt(n)) / lr * w;
      w = std::abs(z) > l1 ? ((z > 0 ? 1 : -1) * l1 - z) / (std::sqrt(n_new) / lr + 2 * l2) : 0;
      n = n_new;
    };
  };
  refs.push_back({"Ftrl", [] { return std::make_unique<train::Ftrl>(
                                   0.3, train::FtrlOptions{.l1 = 0.01, .l2 = 0.05}); },
                  "SparseApplyFtrl", {0.1, 0}, ftrl(0)});
  refs.push_back({"FtrlV2", [] { return std::make_unique<train::Ftrl>(
                                     0.3, train::FtrlOptions{.l1 = 0.01, .l2 = 0.05,
                                                             .l2_shrinkage = 0.1}); },
                  "SparseApplyFtrlV2", {0.1, 0}, ftrl(0.1)});
  refs.push_back({"Adam", [] { return std::make_unique<train::Adam>(0.02); },
                  "SparseApplyLazyAdam", {0, 0}, [](std::vector<double*> r, double g, int t) {
                    const double alpha =
                        0.02 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
                    *r[1] += (g - *r[1]) * (1 - 0.9);
                    *r[2] += (g * g - *r[2]) * (1 - 0.999);
                    *r[0] -= alpha * *r[1] / (std::sqrt(*r[2]) + 1e-8);
                  }});
  return refs;
}

// One step of the reference: loss = sum((gather(w, ids) - targets)^2).
void ReferenceStep(const Reference& ref, int t, std::vector<Table>& vars) {
  const std::vector<int32_t> ids = BatchIds(t);
  const std::vector<double> targets = BatchTargets(t);
  Table grad(kRows * kWidth, 0.0);
  std::set<int32_t> touched(ids.begin(), ids.end());
  for (int i = 0; i < kBatch; ++i) {
    for (int k = 0; k < kWidth; ++k) {
      grad[ids[i] * kWidth + k] += 2 * (vars[0][ids[i] * kWidth + k] - targets[i * kWidth + k]);
    }
  }
  for (int32_t row : touched) {
    for (int k = 0; k < kWidth; ++k) {
      std::vector<double*> r;
      for (Table& v : vars) r.push_back(&v[row * kWidth + k]);
      ref.rule(r, grad[row * kWidth + k], t + 1);
    }
  }
}

// The ops of the graph's nodes.
std::set<std::string> OpsOf(const Scope& root) {
  std::set<std::string> ops;
  for (int i = 0; i < root.num_nodes(); ++i) ops.insert(root.node(i).op);
  return ops;
}

TEST_CASE("each optimizer's sparse update equals a float64 reference after 100 steps") {
  for (const Reference& ref : References()) {
    INFO(ref.name);
    ApiEnv env;
    const Scope root = env.Root();
    Variable w(root.WithOpName("w"), {kRows, kWidth}, DType::kFloat32,
               Initializer::RandomNormal(0.5, 11));
    // A known batch shape, so that a dense gradient could be built too.
    const Output ids =
        ops::Placeholder(root.WithOpName("ids"), DType::kInt32, PartialShape({kBatch}));
    const Output targets = ops::Placeholder(root.WithOpName("targets"), DType::kFloat32);
    const Output err = ops::Sub(root, ops::Gather(root, w.value(), ids), targets);
    const Output loss = ops::Sum(root, ops::Square(root, err), {0, 1});
    const std::unique_ptr<train::Optimizer> opt = ref.make();
    opt->Minimize(root.WithOpName("train"), loss);
    ops::GlobalVariablesInitializer(root);
    INFO(root.status().ToString());
    REQUIRE(root.ok());
    const std::set<std::string> graph_ops = OpsOf(root);
    CHECK(graph_ops.count(ref.sparse_op) == 1);
    for (const std::string& op : graph_ops) CHECK(op.rfind("Apply", 0) != 0);  // no dense update

    auto session = env.Session(root);
    REQUIRE(session->Run({}, {}, {"init"}).ok());
    auto w0 = session->Run({}, {"w/read"}, {});
    REQUIRE(w0.ok());
    std::vector<Table> vars{Values(w0->fetches[0])};
    for (double init : ref.slot_init) vars.emplace_back(kRows * kWidth, init);
    const std::vector<double> start = vars[0];
    for (int t = 0; t < 100; ++t) {
      const std::vector<double> tv = BatchTargets(t);
      const Tensor tt = Tensor::FromVector<float>(std::vector<float>(tv.begin(), tv.end()),
                                                  TensorShape{kBatch, kWidth});
      const Status s = session->Run({{"ids", I32(BatchIds(t))}, {"targets", tt}}, {}, {"train"})
                           .status();
      INFO("step " << t << ": " << s.ToString());
      REQUIRE(s.ok());
      ReferenceStep(ref, t, vars);
    }
    auto w1 = session->Run({}, {"w/read"}, {});
    REQUIRE(w1.ok());
    const std::vector<double> got = Values(w1->fetches[0]);
    for (int64_t i = 0; i < kRows * kWidth; ++i) {
      INFO("element " << i << " got " << got[i] << " want " << vars[0][i]);
      CHECK(std::abs(got[i] - vars[0][i]) <= 1e-5 * std::max(1.0, std::abs(vars[0][i])));
    }
    // Row 5 is never gathered: exactly as initialized.
    for (int64_t k = 0; k < kWidth; ++k) CHECK(got[5 * kWidth + k] == start[5 * kWidth + k]);
  }
}

TEST_CASE("an empty batch is a sparse step that changes no row") {
  for (const Reference& ref : References()) {
    INFO(ref.name);
    ApiEnv env;
    const Scope root = env.Root();
    Variable w(root.WithOpName("w"), {kRows, kWidth}, DType::kFloat32,
               Initializer::RandomNormal(0.5, 3));
    const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt32);
    const Output rows = ops::Gather(root, w.value(), ids);
    ref.make()->Minimize(root.WithOpName("train"),
                         ops::Sum(root, ops::Square(root, rows), {0, 1}));
    ops::GlobalVariablesInitializer(root);
    REQUIRE(root.ok());
    auto session = env.Session(root);
    REQUIRE(session->Run({}, {}, {"init"}).ok());
    auto before = session->Run({}, {"w/read"}, {});
    const Status s = session->Run({{"ids", I32({})}}, {}, {"train"}).status();
    INFO(s.ToString());
    REQUIRE(s.ok());
    auto after = session->Run({}, {"w/read"}, {});
    REQUIRE(before.ok());
    REQUIRE(after.ok());
    CHECK(Values(before->fetches[0]) == Values(after->fetches[0]));
  }
}

TEST_CASE("synchronous replicas train a variable whose gradient is sparse") {
  const Reference sgd = References()[0];
  REQUIRE(sgd.name == "GradientDescent");
  ApiEnv env;
  const Scope root = env.Root();
  Variable step = ops::GlobalStep(root);
  Variable w(root.WithOpName("w"), {kRows, kWidth}, DType::kFloat32,
             Initializer::RandomNormal(0.5, 11));
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt32);
  const Output targets = ops::Placeholder(root.WithOpName("targets"), DType::kFloat32);
  const Output err = ops::Sub(root, ops::Gather(root, w.value(), ids), targets);
  const std::unique_ptr<train::Optimizer> opt = sgd.make();
  train::SyncReplicas sync(*opt, {.replicas_to_aggregate = 1, .total_replicas = 1});
  sync.Minimize(root.WithOpName("train"), ops::Sum(root, ops::Square(root, err), {0, 1}), step);
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  // w's gradient is summed as rows, never as a table: a sparse accumulator,
  // no dense one for w, and nothing densified on the way.
  std::vector<std::string> accumulators;
  for (int id = 0; id < root.num_nodes(); ++id) {
    const NodeDef& node = root.node(id);
    INFO(node.name << " is " << node.op);
    CHECK(node.op != "UnsortedSegmentSum");
    if (node.op.ends_with("ConditionalAccumulator")) {
      accumulators.push_back(node.op + " " + node.name);
    }
  }
  CHECK(accumulators == std::vector<std::string>{"SparseConditionalAccumulator sync/w/accumulator"});
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  REQUIRE(session->Run({}, {}, {train::signature::kChiefInit}).ok());
  auto w0 = session->Run({}, {"w/read"}, {});
  REQUIRE(w0.ok());
  std::vector<Table> vars{Values(w0->fetches[0])};
  for (int t = 0; t < 10; ++t) {
    const std::vector<double> tv = BatchTargets(t);
    const Tensor tt = Tensor::FromVector<float>(std::vector<float>(tv.begin(), tv.end()),
                                                TensorShape{kBatch, kWidth});
    const Status s = session->Run({{"ids", I32(BatchIds(t))}, {"targets", tt}}, {},
                                  {train::signature::kChiefStep}).status();
    INFO("step " << t << ": " << s.ToString());
    REQUIRE(s.ok());
    ReferenceStep(sgd, t, vars);
  }
  auto w1 = session->Run({}, {"w/read", "global_step/read"}, {});
  REQUIRE(w1.ok());
  CHECK(w1->fetches[1].scalar<int64_t>() == 10);
  const std::vector<double> got = Values(w1->fetches[0]);
  for (int64_t i = 0; i < kRows * kWidth; ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - vars[0][i]) <= 1e-5 * std::max(1.0, std::abs(vars[0][i])));
  }
}

// d(loss)/d(w) of batch t, dense, at the parameters `w`.
Table DenseGrad(const Table& w, int t) {
  const std::vector<int32_t> ids = BatchIds(t);
  const std::vector<double> targets = BatchTargets(t);
  Table grad(kRows * kWidth, 0.0);
  for (int i = 0; i < kBatch; ++i) {
    for (int k = 0; k < kWidth; ++k) {
      grad[ids[i] * kWidth + k] += 2 * (w[ids[i] * kWidth + k] - targets[i * kWidth + k]);
    }
  }
  return grad;
}

TEST_CASE("synchronous replicas average two replicas' sparse gradients as the dense step would") {
  const Reference sgd = References()[0];
  REQUIRE(sgd.name == "GradientDescent");
  ApiEnv env;
  const Scope root = env.Root();
  Variable step = ops::GlobalStep(root);
  Variable w(root.WithOpName("w"), {kRows, kWidth}, DType::kFloat32,
             Initializer::RandomNormal(0.5, 13));
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt32);
  const Output targets = ops::Placeholder(root.WithOpName("targets"), DType::kFloat32);
  const Output err = ops::Sub(root, ops::Gather(root, w.value(), ids), targets);
  const std::unique_ptr<train::Optimizer> opt = sgd.make();
  train::SyncReplicas sync(*opt, {.replicas_to_aggregate = 2, .total_replicas = 2});
  sync.Minimize(root.WithOpName("train"), ops::Sum(root, ops::Square(root, err), {0, 1}), step);
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  REQUIRE(session->Run({}, {}, {train::signature::kChiefInit}).ok());
  auto w0 = session->Run({}, {"w/read"}, {});
  REQUIRE(w0.ok());
  Table want = Values(w0->fetches[0]);
  const auto feeds = [](int t) {
    const std::vector<double> tv = BatchTargets(t);
    return LocalSession::Feeds{{"ids", I32(BatchIds(t))},
                 {"targets", Tensor::FromVector<float>(std::vector<float>(tv.begin(), tv.end()),
                                                       TensorShape{kBatch, kWidth})}};
  };
  for (int round = 0; round < 5; ++round) {
    // One replica pushes batch 2r (its push alone: its wait would end only
    // after the round), the chief pushes batch 2r + 1 and applies.
    const Status pushed = session->Run(feeds(2 * round), {}, {"sync/w/push"}).status();
    INFO("round " << round << ": " << pushed.ToString());
    REQUIRE(pushed.ok());
    const Status s =
        session->Run(feeds(2 * round + 1), {}, {train::signature::kChiefStep}).status();
    INFO("round " << round << ": " << s.ToString());
    REQUIRE(s.ok());
    const Table a = DenseGrad(want, 2 * round), b = DenseGrad(want, 2 * round + 1);
    // The dense average: a row only one replica touched is halved too.
    for (int64_t i = 0; i < kRows * kWidth; ++i) sgd.rule({&want[i]}, (a[i] + b[i]) / 2, round + 1);
  }
  auto w1 = session->Run({}, {"w/read", "global_step/read"}, {});
  REQUIRE(w1.ok());
  CHECK(w1->fetches[1].scalar<int64_t>() == 5);
  const std::vector<double> got = Values(w1->fetches[0]);
  for (int64_t i = 0; i < kRows * kWidth; ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= 1e-5 * std::max(1.0, std::abs(want[i])));
  }
}

// The bytes of the tensors the worker's nodes hand to the ps's nodes in the
// train step of a gather-only model on a [rows, 8] table, 16 ids a batch, as
// the step's _Send/_Recv pairs would carry them (every shape must be known).
int64_t BytesWorkerToPs(const train::Optimizer& opt, int64_t rows) {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 1}));
  Variable emb(root.WithOpName("emb"), {rows, 8}, DType::kFloat32, Initializer::Zeros());
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt32, PartialShape({16}));
  const Output rows_out = ops::Gather(root, emb.value(), ids);
  opt.Minimize(root.WithOpName("train"), ops::Sum(root, ops::Square(root, rows_out), {0, 1}));
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  const auto on_ps = [](const NodeDef& n) { return n.device.rfind("/job:ps", 0) == 0; };
  int64_t bytes = 0;
  for (int id = 0; id < root.num_nodes(); ++id) {
    const NodeDef& node = root.node(id);
    if (!on_ps(node)) continue;
    for (const std::string& in : node.inputs) {
      auto ref = ParseInput(in);
      REQUIRE(ref.ok());
      if (ref->control) continue;
      const int src = root.FindNode(ref->node);
      REQUIRE(src >= 0);
      if (on_ps(root.node(src))) continue;
      const Output t = root.OutputOf(ref->node, ref->port);
      INFO(in << " -> " << node.name << " is " << t.shape.ToString());
      const auto shape = t.shape.AsTensorShape();
      REQUIRE(shape.has_value());
      bytes += shape->num_elements() * static_cast<int64_t>(DTypeSize(t.dtype));
    }
  }
  return bytes;
}

TEST_CASE("what a sparse step sends the ps does not grow with the table") {
  for (const Reference& ref : References()) {
    INFO(ref.name);
    const std::unique_ptr<train::Optimizer> opt = ref.make();
    const int64_t small = BytesWorkerToPs(*opt, 1000);
    const int64_t large = BytesWorkerToPs(*opt, 100000);
    CHECK(small == large);
    // The rows (16 x 8 floats) and their ids, and a few scalars at most.
    CHECK(large <= 16 * 8 * 4 + 16 * 4 + 64);
  }
}

}  // namespace
}  // namespace tfd
