#include "examples/mnist/mnist_model.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/data.h"
#include "api/ops.h"
#include "api/optimizers.h"
#include "api/placement.h"
#include "api/sync_replicas.h"
#include "api/train_signature.h"
#include "api/variables.h"
#include "examples/mnist/convnet.h"

namespace tfd::examples {
namespace {

namespace sig = train::signature;
using ops::Initializer;
using ops::Variable;

constexpr int64_t kPixels = 28 * 28;
constexpr int64_t kClasses = 10;

// The hidden layers' widths of each model.
std::vector<int64_t> HiddenWidths(MnistModel model) {
  switch (model) {
    case MnistModel::kClassic:
      return {100};
    case MnistModel::kStrong:
      return {256};
    case MnistModel::kLarge:
      return {2048, 2048};
    case MnistModel::kDeep:
      break;  // convnet.h
  }
  return {};
}

// w1, b1, w2, b2, ...: one weight and one bias per layer, the output layer
// last; or the convnet's.
struct Layers {
  std::vector<Variable> weights, biases;
  ConvnetParams convnet;
};

Layers MakeParameters(const Scope& s, const MnistOptions& o) {
  Layers p;
  if (o.model == MnistModel::kDeep) {
    p.convnet = MakeConvnetParams(s, o.seed);
    return p;
  }
  std::vector<int64_t> widths = HiddenWidths(o.model);
  widths.insert(widths.begin(), kPixels);
  widths.push_back(kClasses);
  const DType f32 = DType::kFloat32;
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    const int64_t in = widths[i], out = widths[i + 1];
    const int64_t seed = o.seed + static_cast<int64_t>(i);
    Initializer init = Initializer::Zeros();
    switch (o.model) {
      case MnistModel::kClassic:
        init = Initializer::RandomNormal(1.0, seed);
        break;
      case MnistModel::kStrong:
      case MnistModel::kLarge:
      case MnistModel::kDeep:
        init = Initializer::TruncatedNormal(std::sqrt(2.0 / static_cast<double>(in)), seed);
        break;
    }
    const std::string n = std::to_string(i + 1);
    p.weights.push_back(Variable(s.WithOpName("w" + n), {in, out}, f32, init));
  }
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    p.biases.push_back(Variable(s.WithOpName("b" + std::to_string(i + 1)), {widths[i + 1]}, f32,
                                Initializer::Zeros()));
  }
  return p;
}

// The logits of `images`; dropout (the deep model's) only when `training`.
Output Logits(const Scope& s, const Layers& p, const Output& images, const MnistOptions& o,
              bool training) {
  const MnistModel model = o.model;
  if (model == MnistModel::kDeep) {
    return ConvnetLogits(s, p.convnet, images,
                         training ? std::optional<int64_t>(o.seed) : std::nullopt);
  }
  Output x = images;
  for (size_t i = 0; i < p.weights.size(); ++i) {
    x = ops::BiasAdd(s, ops::MatMul(s, x, p.weights[i]), p.biases[i]);
    if (i + 1 == p.weights.size()) break;  // the logits
    x = model == MnistModel::kClassic ? ops::Sigmoid(s, x) : ops::Relu(s, x);
  }
  return x;
}

// The train op (and the global step after it, or the sync chief's nodes
// and train/max_steps).
void AddUpdate(const Scope& root, const MnistOptions& o, const Output& loss,
               const Variable& global_step) {
  std::unique_ptr<train::Optimizer> optimizer;
  if (o.model == MnistModel::kStrong || o.model == MnistModel::kDeep) {
    optimizer = std::make_unique<train::Adam>(o.learning_rate);
  } else {
    optimizer = std::make_unique<train::GradientDescent>(o.learning_rate);
  }
  if (!o.sync) {
    const Operation train = optimizer->Minimize(root.WithOpName(sig::kTrain), loss, global_step);
    ops::Identity(root.WithOpName(sig::kGlobalStep), train.output(0));
    return;
  }
  const int replicas = std::max(o.workers, 1);
  const int aggregate = o.replicas_to_aggregate > 0 ? o.replicas_to_aggregate : replicas;
  train::SyncReplicas sync(*optimizer,
                           {.replicas_to_aggregate = aggregate, .total_replicas = replicas});
  sync.Minimize(root.WithOpName(sig::kTrain), loss, global_step);
  const int64_t examples_per_update = o.batch_size * aggregate;
  ops::Const(root.WithOpName(sig::kMaxSteps),
             ops::Input((o.epochs * o.train_examples + examples_per_update - 1) /
                        examples_per_update));
}

// eval/accuracy: the first test_batch test examples, in file order, with the
// current weights, classified eval_batch at a time. Each chunk's batch is
// taken after the previous chunk is counted, so one chunk's activations are
// alive at a time and the chunks read the file in order.
void AddEvaluation(const Scope& root, const MnistOptions& o, const Layers& params) {
  const Scope eval = root.WithName("eval");
  const Scope eval_input = o.gpu ? eval.WithDevice("/device:CPU:0") : eval;
  const Output test_data = ops::IdxDataset(
      eval_input.WithOpName("test_data"),
      {.images_path = o.test_images, .labels_path = o.test_labels, .shuffle = false});
  const bool chunked = o.eval_batch < o.test_batch;
  std::vector<Output> counts;
  for (int64_t first = 0; first < o.test_batch; first += o.eval_batch) {
    const Scope after = counts.empty()
                            ? eval_input
                            : eval_input.WithControlDependencies({ops::AsOperation(counts.back())});
    const ops::IdxBatch test = ops::IdxNextBatch(
        after.WithOpName("test_batch"), test_data,
        {.batch_size = std::min(o.eval_batch, o.test_batch - first), .prefetch = !chunked});
    const Output predicted =
        ops::ArgMax(eval, Logits(eval, params, test.images, o, /*training=*/false), 1);
    const Output correct =
        ops::Cast(eval, ops::Equal(eval, ops::Cast(eval, predicted, DType::kInt32), test.labels),
                  DType::kFloat32);
    if (!chunked) {
      ops::Mean(root.WithOpName(sig::kAccuracy), correct, 0);
      return;
    }
    counts.push_back(ops::Sum(eval, correct, 0));
  }
  ops::Div(root.WithOpName(sig::kAccuracy), ops::AddN(eval, counts),
           ops::Input(static_cast<float>(o.test_batch)));
}

}  // namespace

StatusOr<MnistModel> ParseMnistModel(const std::string& name) {
  if (name == "classic") return MnistModel::kClassic;
  if (name == "strong") return MnistModel::kStrong;
  if (name == "large") return MnistModel::kLarge;
  if (name == "deep") return MnistModel::kDeep;
  return errors::InvalidArgument("the model must be classic, strong, large or deep, not '", name,
                                 "'");
}

MnistOptions WithModelDefaults(MnistOptions o) {
  const bool deep = o.model == MnistModel::kDeep;
  if (o.batch_size == 0) o.batch_size = deep ? 50 : 100;
  if (o.learning_rate == 0) o.learning_rate = deep ? 1e-4 : 0.001;
  if (o.eval_batch == 0) o.eval_batch = deep ? std::min<int64_t>(1000, o.test_batch) : o.test_batch;
  return o;
}

Status CheckMnistOptions(const MnistOptions& o) {
  if (o.ps_tasks < 0) return errors::InvalidArgument("--ps-tasks must not be negative");
  if (o.workers < 0) return errors::InvalidArgument("--workers must not be negative");
  if (o.batch_size < 0) {
    return errors::InvalidArgument("--batch-size must be at least 1 (0: the model's own), not ",
                                   o.batch_size);
  }
  if (o.epochs < 1) return errors::InvalidArgument("--epochs must be at least 1");
  if (!(o.learning_rate >= 0)) {
    return errors::InvalidArgument("--learning-rate must be positive (0: the model's own), not ",
                                   o.learning_rate);
  }
  if (o.test_batch < 1) return errors::InvalidArgument("--test-batch must be at least 1");
  if (o.eval_batch < 0) {
    return errors::InvalidArgument("--eval-batch must be at least 1 (0: the model's own), not ",
                                   o.eval_batch);
  }
  if (o.sync) {
    const int replicas = std::max(o.workers, 1);
    const int aggregate = o.replicas_to_aggregate > 0 ? o.replicas_to_aggregate : replicas;
    if (aggregate > replicas) {
      return errors::InvalidArgument("--replicas-to-aggregate ", aggregate,
                                     " exceeds --workers ", replicas);
    }
  } else if (o.replicas_to_aggregate > 0) {
    return errors::InvalidArgument("--replicas-to-aggregate needs --sync");
  }
  return OkStatus();
}

Status BuildMnist(const Scope& scope, const MnistOptions& options) {
  TFD_RETURN_IF_ERROR(CheckMnistOptions(options));
  const MnistOptions o = WithModelDefaults(options);
  const Scope root = scope.WithDeviceFunction(train::ReplicaDeviceSetter(
      {.ps_tasks = o.ps_tasks,
       .worker_device = o.gpu ? "/job:worker/device:GPU:0" : "/job:worker",
       .strategy = train::PsStrategy::kGreedyBytes}));
  // Readers and their bookkeeping: host work, whatever the model runs on.
  const Scope input = o.gpu ? root.WithDevice("/device:CPU:0") : root;
  const Variable global_step = ops::GlobalStep(root);
  const Layers params = MakeParameters(root, o);

  // Training input: this worker's shard, reshuffled every epoch.
  const Output train_data = ops::IdxDataset(
      input.WithOpName("train_data"),
      {.images_path = o.train_images,
       .labels_path = o.train_labels,
       .seed = o.seed,
       .epochs = o.sync ? -1 : o.epochs,  // sync ends at train/max_steps instead
       .num_shards = o.shard && o.workers > 1 ? o.workers : 0});
  const ops::IdxBatch batch = ops::IdxNextBatch(
      input.WithOpName("next_batch"), train_data,
      {.batch_size = o.batch_size, .one_hot = true, .prefetch = o.prefetch});
  const Output logits = Logits(root.WithName("model"), params, batch.images, o, /*training=*/true);
  const Output xent = ops::SoftmaxCrossEntropyWithLogits(root, logits, batch.labels).loss;
  const Output loss = ops::Mean(root.WithOpName("loss"), xent, 0);
  ops::ScalarSummary(root, "loss", loss);
  // Read after this step's batch is taken, so the last step shows the end.
  ops::ScalarSummary(root, "epoch",
                     ops::IdxDatasetProgress(
                         input.WithControlDependencies({ops::AsOperation(batch.labels)}),
                         train_data));
  ops::Const(root.WithOpName(sig::kEpochs), ops::Input(o.epochs));
  ops::IdxDatasetReset(input.WithOpName(sig::kResetInput), train_data);

  AddUpdate(root, o, loss, global_step);
  ops::GlobalVariablesInitializer(root.WithOpName(sig::kInit));
  AddEvaluation(root, o, params);
  return root.status();
}

}  // namespace tfd::examples
