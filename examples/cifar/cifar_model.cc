#include "examples/cifar/cifar_model.h"

#include <algorithm>

#include "api/data.h"
#include "api/ops.h"
#include "api/optimizers.h"
#include "api/placement.h"
#include "api/train_signature.h"
#include "api/variables.h"
#include "examples/cifar/resnet.h"

namespace tfd::examples {
namespace {

namespace sig = train::signature;

// eval/accuracy: the first test_batch examples of the test file, in file
// order, classified eval_batch at a time with the moving averages; each
// chunk is read after the previous one is counted, so one chunk's
// activations are alive at a time.
void AddEvaluation(const Scope& root, const CifarOptions& o, const ResnetConfig& config,
                   ResnetParams* params) {
  const Scope eval = root.WithName("eval");
  const Output test_data = ops::CifarDataset(eval.WithOpName("test_data"),
                                             {.paths = {o.test_file}, .shuffle = false});
  std::vector<Output> counts;
  for (int64_t first = 0; first < o.test_batch; first += o.eval_batch) {
    const Scope after =
        counts.empty() ? eval : eval.WithControlDependencies({ops::AsOperation(counts.back())});
    const ops::CifarBatch test = ops::CifarNextBatch(
        after.WithOpName("test_batch"), test_data,
        {.batch_size = std::min(o.eval_batch, o.test_batch - first), .prefetch = false});
    const Output logits = ResnetLogits(eval.WithName("model"), config, test.images,
                                       /*training=*/false, params);
    const Output predicted = ops::Cast(eval, ops::ArgMax(eval, logits, 1), DType::kInt32);
    const Output correct =
        ops::Cast(eval, ops::Equal(eval, predicted, test.labels), DType::kFloat32);
    counts.push_back(ops::Sum(eval, correct, 0));
  }
  ops::Div(root.WithOpName(sig::kAccuracy), ops::AddN(eval, counts),
           ops::Input(static_cast<float>(o.test_batch)));
}

}  // namespace

Status CheckCifarOptions(const CifarOptions& o) {
  if (o.blocks < 1) return errors::InvalidArgument("--blocks must be at least 1, not ", o.blocks);
  if (o.ps_tasks < 0) return errors::InvalidArgument("--ps-tasks must not be negative");
  if (o.workers < 1) return errors::InvalidArgument("--workers must be at least 1");
  if (o.batch_size < 1) return errors::InvalidArgument("--batch-size must be at least 1");
  if (o.epochs < 1) return errors::InvalidArgument("--epochs must be at least 1");
  if (!(o.learning_rate > 0)) {
    return errors::InvalidArgument("--learning-rate must be positive, not ", o.learning_rate);
  }
  if (!(o.momentum >= 0 && o.momentum < 1)) {
    return errors::InvalidArgument("--momentum must be in [0, 1), not ", o.momentum);
  }
  if (o.train_files.empty()) return errors::InvalidArgument("--train-files names no file");
  if (o.test_batch < 1) return errors::InvalidArgument("--test-batch must be at least 1");
  if (o.eval_batch < 1) return errors::InvalidArgument("--eval-batch must be at least 1");
  return OkStatus();
}

Status BuildCifar(const Scope& scope, const CifarOptions& o) {
  TFD_RETURN_IF_ERROR(CheckCifarOptions(o));
  const Scope root = scope.WithDeviceFunction(train::ReplicaDeviceSetter(
      {.ps_tasks = o.ps_tasks, .worker_device = "/job:worker",
       .strategy = train::PsStrategy::kGreedyBytes}));
  const ops::Variable global_step = ops::GlobalStep(root);
  const ResnetConfig config{.blocks = o.blocks, .seed = o.seed};
  ResnetParams params;

  const Output train_data = ops::CifarDataset(
      root.WithOpName("train_data"),
      {.paths = o.train_files, .seed = o.seed, .epochs = o.epochs,
       .num_shards = o.workers > 1 ? o.workers : 0});
  const ops::CifarBatch batch =
      ops::CifarNextBatch(root.WithOpName("next_batch"), train_data, {.batch_size = o.batch_size});
  const Output logits =
      ResnetLogits(root.WithName("model"), config, batch.images, /*training=*/true, &params);
  const Output xent = ops::SparseSoftmaxCrossEntropyWithLogits(root, logits, batch.labels).loss;
  const Output loss = ops::Mean(root.WithOpName("loss"), xent, 0);
  ops::ScalarSummary(root, "loss", loss);
  ops::ScalarSummary(root, "epoch",
                     ops::IdxDatasetProgress(
                         root.WithControlDependencies({ops::AsOperation(batch.labels)}),
                         train_data));
  ops::Const(root.WithOpName(sig::kEpochs), ops::Input(o.epochs));
  ops::IdxDatasetReset(root.WithOpName(sig::kResetInput), train_data);

  // The moving averages move with every step (TF's UPDATE_OPS).
  train::Momentum optimizer(o.learning_rate, o.momentum);
  const Operation train = optimizer.Minimize(
      root.WithOpName(sig::kTrain).WithControlDependencies(params.update_ops), loss, global_step);
  ops::Identity(root.WithOpName(sig::kGlobalStep), train.output(0));
  ops::GlobalVariablesInitializer(root.WithOpName(sig::kInit));
  AddEvaluation(root, o, config, &params);
  return root.status();
}

}  // namespace tfd::examples
