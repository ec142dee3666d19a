#include "examples/ctr/ctr_model.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "api/data.h"
#include "api/embedding_ops.h"
#include "api/ops.h"
#include "api/optimizers.h"
#include "api/partitioned_variables.h"
#include "api/placement.h"
#include "api/sync_replicas.h"
#include "api/train_signature.h"
#include "api/variables.h"

namespace tfd::examples {
namespace {

namespace sig = train::signature;
using ops::Initializer;
using ops::PartitionedVariable;
using ops::Variable;

constexpr int64_t kFields = 26;
constexpr int64_t kDense = 13;
const std::vector<int64_t> kHidden = {256, 128};

struct Parameters {
  PartitionedVariable embedding, wide;
  std::vector<Variable> weights, biases;  // the MLP, the output layer last
};

Parameters MakeParameters(const Scope& s, const CtrOptions& o) {
  const DType f32 = DType::kFloat32;
  const auto partitioner =
      ops::FixedSizePartitioner(o.table_shards > 0 ? o.table_shards : std::max(o.ps_tasks, 1));
  Parameters p;
  // The peer's initialisation: N(0, 0.01) embeddings, a zero wide part.
  p.embedding = PartitionedVariable(s.WithOpName("embedding"), {o.vocab, o.embedding_dim}, f32,
                                    Initializer::RandomNormal(0.01, o.seed), partitioner);
  p.wide = PartitionedVariable(s.WithOpName("wide"), {o.vocab, 1}, f32, Initializer::Zeros(),
                               partitioner);
  std::vector<int64_t> widths = {kFields * o.embedding_dim + kDense};
  widths.insert(widths.end(), kHidden.begin(), kHidden.end());
  widths.push_back(1);
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    const int64_t in = widths[i], out = widths[i + 1];
    const std::string n = std::to_string(i + 1);
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));  // torch's nn.Linear
    p.weights.push_back(Variable(s.WithOpName("w" + n), {in, out}, f32,
                                 Initializer::RandomUniform(-bound, bound, o.seed + 1 + i)));
    p.biases.push_back(Variable(s.WithOpName("b" + n), {out}, f32, Initializer::Zeros()));
  }
  return p;
}

// The logits [b] of a batch: ids int64 [b, 26] (-1: empty), dense float32 [b, 13].
Output Logits(const Scope& s, const Parameters& p, const CtrOptions& o, const Output& ids,
              const Output& dense) {
  const Output present =
      ops::Cast(s, ops::GreaterEqual(s, ids, ops::Const(s, int64_t{0})), DType::kFloat32);
  // An empty field (-1) reads row 0 and is masked out; its row then gets a
  // zero gradient row, which leaves it unchanged.
  const Output rows = ops::Maximum(s, ids, ops::Const(s, int64_t{0}));
  const ops::EmbeddingLookupAttrs div = {.partition_strategy = "div"};
  const Output mask = ops::ExpandDims(s, present, 2);  // [b, 26, 1]
  const Output embedded = ops::Mul(
      s, ops::EmbeddingLookup(s.WithOpName("embedding_lookup"), p.embedding, rows, div), mask);
  const Output wide_rows = ops::Reshape(
      s, ops::EmbeddingLookup(s.WithOpName("wide_lookup"), p.wide, rows, div),
      {int64_t{-1}, kFields});
  const Output wide = ops::Sum(s, ops::Mul(s, wide_rows, present), 1);
  // log1p of the counts, as the peer; real Criteo data has a few negative
  // values (I2), which count as 0 here rather than giving NaN.
  const Output counts = ops::Log(
      s, ops::Add(s, ops::Maximum(s, dense, ops::Const(s, 0.0f)), ops::Const(s, 1.0f)));
  Output x = ops::Concat(
      s, {ops::Reshape(s, embedded, {int64_t{-1}, kFields * o.embedding_dim}), counts}, 1);
  for (size_t i = 0; i < p.weights.size(); ++i) {
    x = ops::BiasAdd(s, ops::MatMul(s, x, p.weights[i]), p.biases[i]);
    if (i + 1 < p.weights.size()) x = ops::Relu(s, x);
  }
  return ops::Add(s, ops::Reshape(s, x, {int64_t{-1}}), wide);
}

// Binary cross-entropy of logits z for labels y, in the stable form
// max(z, 0) - z y + log(1 + exp(-|z|)), averaged over the batch.
Output BinaryCrossEntropy(const Scope& s, const Output& z, const Output& y) {
  const Output per_example =
      ops::Add(s, ops::Sub(s, ops::Relu(s, z), ops::Mul(s, z, y)),
               ops::Softplus(s, ops::Neg(s, ops::Abs(s, z))));
  return ops::Mean(s, per_example, 0);
}

// The peer's recipe, asynchronous: Adagrad on the rows of both tables a
// batch touches (sparse gradients, SparseApplyAdagrad on the shards' ps
// tasks), Adam on the MLP; global_step moves once both have applied. The
// tiny initial accumulator stands in for torch's Adagrad, which starts at 0
// and adds 1e-10 to the root: TF's default of 0.1 would shrink the first
// steps of rows whose gradients are ~1e-3 by a factor of 300.
Operation AsyncTrainOp(const Scope& root, const CtrOptions& o, const Output& loss,
                       const Variable& global_step) {
  const train::Adam adam(o.learning_rate);
  const train::Adagrad adagrad(o.sparse_learning_rate, /*initial_accumulator_value=*/1e-10);
  auto grads = adam.ComputeGradients(root, loss);
  if (!grads.ok()) {
    root.UpdateStatus(grads.status());
    return Operation();
  }
  std::vector<train::GradAndVar> tables, mlp;
  for (const train::GradAndVar& gv : *grads) (gv.sparse.valid() ? tables : mlp).push_back(gv);
  const Operation sparse = adagrad.ApplyGradients(root.WithOpName("train_tables"), tables);
  const Operation dense = adam.ApplyGradients(root.WithOpName("train_mlp"), mlp);
  return ops::AsOperation(ops::AssignAdd(root.WithOpName(sig::kTrain)
                                             .WithControlDependencies({sparse, dense})
                                             .ColocatedWith(global_step.ref()),
                                         global_step.ref(), 1));
}

void AddTrainOp(const Scope& root, const CtrOptions& o, const Output& loss,
                const Variable& global_step) {
  if (o.sync) {
    // SyncReplicas wraps one optimizer: Adam for everything, the tables
    // updated sparsely (SparseApplyLazyAdam) on their rows.
    const train::Adam adam(o.learning_rate);
    const int replicas = std::max(o.workers, 1);
    const int aggregate = o.replicas_to_aggregate > 0 ? o.replicas_to_aggregate : replicas;
    train::SyncReplicas sync(adam,
                             {.replicas_to_aggregate = aggregate, .total_replicas = replicas});
    sync.Minimize(root.WithOpName(sig::kTrain), loss, global_step);
  } else {
    const Operation train = AsyncTrainOp(root, o, loss, global_step);
    if (root.ok()) ops::Identity(root.WithOpName(sig::kGlobalStep), train.output(0));
  }
  if (o.max_steps > 0) ops::Const(root.WithOpName(sig::kMaxSteps), ops::Input(o.max_steps));
}

}  // namespace

Status CheckCtrOptions(const CtrOptions& o) {
  if (o.ps_tasks < 0) return errors::InvalidArgument("--ps-tasks must not be negative");
  if (o.workers < 0) return errors::InvalidArgument("--workers must not be negative");
  if (o.vocab < 1 || o.vocab > (int64_t{1} << 32)) {
    return errors::InvalidArgument("--vocab must be in [1, 2^32], not ", o.vocab);
  }
  if (o.vocab < std::max(o.ps_tasks, 1)) {
    return errors::InvalidArgument("--vocab ", o.vocab, " is smaller than --ps-tasks ",
                                   o.ps_tasks, ": every ps task holds a shard of the tables");
  }
  if (o.table_shards < 0) return errors::InvalidArgument("--table-shards must not be negative");
  if (o.table_shards > o.vocab) {
    return errors::InvalidArgument("--table-shards ", o.table_shards, " exceeds --vocab ", o.vocab,
                                   ": every shard holds at least one row");
  }
  if (o.embedding_dim < 1) return errors::InvalidArgument("--embedding-dim must be at least 1");
  if (o.batch_size < 1) return errors::InvalidArgument("--batch-size must be at least 1");
  if (o.epochs < 1) return errors::InvalidArgument("--epochs must be at least 1");
  if (o.max_steps < 0) return errors::InvalidArgument("--steps must not be negative");
  if (o.sync && o.max_steps == 0) {
    return errors::InvalidArgument("--sync needs --steps: synchronous replicas end at a step");
  }
  if (!(o.learning_rate > 0)) return errors::InvalidArgument("--learning-rate must be positive");
  if (!(o.sparse_learning_rate > 0)) {
    return errors::InvalidArgument("--sparse-learning-rate must be positive");
  }
  if (o.train_files.empty()) return errors::InvalidArgument("--train needs at least one file");
  if (o.eval_file.empty()) return errors::InvalidArgument("--eval needs a file");
  if (o.eval_examples < 2) return errors::InvalidArgument("--eval-examples must be at least 2");
  const int replicas = std::max(o.workers, 1);
  if (!o.sync && o.replicas_to_aggregate > 0) {
    return errors::InvalidArgument("--replicas-to-aggregate needs --sync");
  }
  if (o.replicas_to_aggregate > replicas) {
    return errors::InvalidArgument("--replicas-to-aggregate ", o.replicas_to_aggregate,
                                   " exceeds --workers ", replicas);
  }
  return OkStatus();
}

Status BuildCtr(const Scope& scope, const CtrOptions& o) {
  TFD_RETURN_IF_ERROR(CheckCtrOptions(o));
  const Scope root = scope.WithDeviceFunction(train::ReplicaDeviceSetter(
      {.ps_tasks = o.ps_tasks, .strategy = train::PsStrategy::kGreedyBytes}));
  const Variable global_step = ops::GlobalStep(root);
  const Parameters params = MakeParameters(root, o);

  // Training input: this worker's lines of the files.
  const Output train_data = ops::CriteoDataset(
      root.WithOpName("train_data"),
      {.paths = o.train_files,
       .num_buckets = o.vocab,
       .epochs = o.sync ? -1 : o.epochs,  // sync ends at train/max_steps instead
       .num_shards = o.workers > 1 ? o.workers : 0});
  const ops::CriteoBatch batch = ops::CriteoNextBatch(root.WithOpName("next_batch"), train_data,
                                                      {.batch_size = o.batch_size});
  const Output logits = Logits(root.WithName("model"), params, o, batch.ids, batch.dense);
  const Output loss = BinaryCrossEntropy(root.WithOpName("loss"), logits, batch.labels);
  ops::ScalarSummary(root, "loss", loss);
  ops::ScalarSummary(
      root, "epoch",
      ops::Cast(root, ops::CriteoDatasetEpoch(
                          root.WithControlDependencies({ops::AsOperation(batch.labels)}),
                          train_data),
                DType::kFloat64));
  ops::Const(root.WithOpName(sig::kEpochs), ops::Input(o.epochs));
  ops::CriteoDatasetReset(root.WithOpName(sig::kResetInput), train_data);

  AddTrainOp(root, o, loss, global_step);
  ops::GlobalVariablesInitializer(root.WithOpName(sig::kInit));

  // Evaluation: the held-out examples in one batch, with the current
  // parameters. The dataset repeats, so every evaluation sees the same set
  // when eval_examples is the file's line count.
  const Scope eval = root.WithName("eval");
  const Output eval_data = ops::CriteoDataset(
      eval.WithOpName("eval_data"),
      {.paths = {o.eval_file}, .num_buckets = o.vocab, .epochs = -1});
  const ops::CriteoBatch held_out = ops::CriteoNextBatch(
      eval.WithOpName("eval_batch"), eval_data, {.batch_size = o.eval_examples, .prefetch = false});
  const Output eval_logits = Logits(eval, params, o, held_out.ids, held_out.dense);
  ops::Auc(root.WithOpName(sig::kAuc), held_out.labels, eval_logits);
  return root.status();
}

}  // namespace tfd::examples
