// Typed op wrappers: the C++ graph API model code is written in, shaped like
// TensorFlow's (tensorflow::ops in C++, tf.* in Python). Each wrapper adds a
// node through a Scope (common/scope.h) and returns its outputs; an
// argument may be an Output, a Variable, or a literal that becomes a Const.
//
//   Scope root = Scope::NewRootScope(registry);
//   Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32, {-1, 784});
//   Output h = ops::Relu(root, ops::Add(root, ops::MatMul(root, x, w), b));
//   Output loss = ops::Mean(root, ops::Square(root, ops::Sub(root, h, 1.0f)), {0, 1});
//
// Naming: a node is named after its op ("MatMul", "MatMul_1", ...) under the
// scope's prefix, or as scope.WithOpName("name") says. A literal becomes a
// Const node named "Const"; a scalar literal beside a tensor operand takes the
// operand's dtype (Mul(x, 2) with float32 x multiplies by 2.0f), otherwise
// the C++ type decides: int -> int32, int64_t -> int64, float -> float32,
// double -> float64, bool -> bool.
//
// Errors stay in the scope (scope.status()); a failed wrapper returns an
// invalid Output, which makes every later wrapper that uses it a no-op.
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/scope.h"

namespace tfd::ops {

class Variable;

// An op argument: a graph tensor or a literal.
class Input {
 public:
  Input(const Output& o) : output_(o) {}   // NOLINT: implicit by design, as in TensorFlow
  Input(const Variable& v);                // NOLINT: the variable's value
  Input(const Tensor& t) : literal_(t) {}  // NOLINT
  Input(float v) : literal_(Tensor::Scalar(v)) {}                  // NOLINT
  Input(double v) : literal_(Tensor::Scalar(v)) {}                 // NOLINT
  Input(int v) : literal_(Tensor::Scalar<int32_t>(v)) {}           // NOLINT
  Input(int64_t v) : literal_(Tensor::Scalar(v)) {}                // NOLINT
  Input(bool v) : literal_(Tensor::Scalar(v)) {}                   // NOLINT
  Input(std::initializer_list<int> v);                             // NOLINT: int32 vector
  Input(std::initializer_list<int64_t> v);                         // NOLINT
  Input(std::initializer_list<float> v);                           // NOLINT
  Input(std::initializer_list<double> v);                          // NOLINT
  // A matrix of int (as int32), float or double. One template rather than an
  // overload per type: clang 14 finds {{1, 0}, {2, 1}} ambiguous between
  // nested initializer_list overloads, while deduction picks T alone.
  template <typename T, typename = std::enable_if_t<std::is_same_v<T, int> ||
                                                    std::is_same_v<T, float> ||
                                                    std::is_same_v<T, double>>>
  Input(std::initializer_list<std::initializer_list<T>> rows)  // NOLINT
      : literal_(MatrixLiteral(rows)) {}

  bool is_literal() const { return literal_.initialized(); }
  static Tensor MatrixLiteral(std::initializer_list<std::initializer_list<int>> rows);
  static Tensor MatrixLiteral(std::initializer_list<std::initializer_list<float>> rows);
  static Tensor MatrixLiteral(std::initializer_list<std::initializer_list<double>> rows);

  const Output& output() const { return output_; }
  const Tensor& literal() const { return literal_; }

 private:
  Output output_;
  Tensor literal_;
};

// The Output for `in`: itself, or a new Const. A numeric literal is converted
// to `dtype_hint` when one is given (kInvalid: keep its own dtype).
Output AsOutput(const Scope& scope, const Input& in, DType dtype_hint = DType::kInvalid);

// --- Constants, feeds, identities. ---
Output Const(const Scope& scope, const Input& value);
Output Placeholder(const Scope& scope, DType dtype, PartialShape shape = PartialShape::Unknown());
Output PlaceholderWithDefault(const Scope& scope, const Input& value, PartialShape shape);
Output Identity(const Scope& scope, const Input& x);
Output StopGradient(const Scope& scope, const Input& x);
Output PreventGradient(const Scope& scope, const Input& x, const std::string& message = "");
// A NoOp: a node to run as a target, or to hang control dependencies on.
Operation NoOp(const Scope& scope);
// A NoOp that runs after every one of `ops` (tf.group).
Operation Group(const Scope& scope, const std::vector<Operation>& ops);
// The node producing `o`, as an Operation (to run as a target or depend on).
Operation AsOperation(const Output& o);

// --- Element-wise math (binary ops broadcast as numpy does). ---
Output Add(const Scope& scope, const Input& x, const Input& y);
Output Sub(const Scope& scope, const Input& x, const Input& y);
Output Mul(const Scope& scope, const Input& x, const Input& y);
Output Div(const Scope& scope, const Input& x, const Input& y);
Output Maximum(const Scope& scope, const Input& x, const Input& y);
Output Minimum(const Scope& scope, const Input& x, const Input& y);
Output Pow(const Scope& scope, const Input& x, const Input& y);
Output SquaredDifference(const Scope& scope, const Input& x, const Input& y);
Output Equal(const Scope& scope, const Input& x, const Input& y);
Output NotEqual(const Scope& scope, const Input& x, const Input& y);
Output Less(const Scope& scope, const Input& x, const Input& y);
Output LessEqual(const Scope& scope, const Input& x, const Input& y);
Output Greater(const Scope& scope, const Input& x, const Input& y);
Output GreaterEqual(const Scope& scope, const Input& x, const Input& y);
Output Neg(const Scope& scope, const Input& x);
Output Square(const Scope& scope, const Input& x);
Output Sqrt(const Scope& scope, const Input& x);
Output Rsqrt(const Scope& scope, const Input& x);
Output Reciprocal(const Scope& scope, const Input& x);
Output Exp(const Scope& scope, const Input& x);
Output Log(const Scope& scope, const Input& x);
Output Abs(const Scope& scope, const Input& x);
Output Sign(const Scope& scope, const Input& x);
Output Floor(const Scope& scope, const Input& x);
Output Ceil(const Scope& scope, const Input& x);
Output Round(const Scope& scope, const Input& x);
Output Erf(const Scope& scope, const Input& x);
Output IsInf(const Scope& scope, const Input& x);
Output IsNan(const Scope& scope, const Input& x);
Output IsFinite(const Scope& scope, const Input& x);
Output Sin(const Scope& scope, const Input& x);
Output Cos(const Scope& scope, const Input& x);
Output Tan(const Scope& scope, const Input& x);
Output Asin(const Scope& scope, const Input& x);
Output Acos(const Scope& scope, const Input& x);
Output Atan(const Scope& scope, const Input& x);
Output Sinh(const Scope& scope, const Input& x);
Output Cosh(const Scope& scope, const Input& x);
Output Asinh(const Scope& scope, const Input& x);
Output Acosh(const Scope& scope, const Input& x);
Output Atanh(const Scope& scope, const Input& x);
Output Mod(const Scope& scope, const Input& x, const Input& y);
Output FloorMod(const Scope& scope, const Input& x, const Input& y);
Output FloorDiv(const Scope& scope, const Input& x, const Input& y);
Output AddN(const Scope& scope, const std::vector<Output>& inputs);
Output Select(const Scope& scope, const Input& condition, const Input& t, const Input& e);
Output Cast(const Scope& scope, const Input& x, DType dtype);
Output Range(const Scope& scope, const Input& start, const Input& limit, const Input& delta);
struct CumsumAttrs {
  bool exclusive = false;
  bool reverse = false;
};
Output Cumsum(const Scope& scope, const Input& x, const Input& axis, CumsumAttrs attrs = {});

struct MatMulAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
};
Output MatMul(const Scope& scope, const Input& a, const Input& b, MatMulAttrs attrs = {});
struct BatchMatMulAttrs {
  bool adj_x = false;
  bool adj_y = false;
};
// Products over the last two dimensions; V2 broadcasts the batch dimensions.
Output BatchMatMul(const Scope& scope, const Input& x, const Input& y, BatchMatMulAttrs attrs = {});
Output BatchMatMulV2(const Scope& scope, const Input& x, const Input& y,
                     BatchMatMulAttrs attrs = {});

// --- Reductions over `axis` (a scalar or vector; empty reduces nothing). ---
struct ReduceAttrs {
  bool keep_dims = false;
};
Output Sum(const Scope& scope, const Input& x, const Input& axis, ReduceAttrs attrs = {});
Output Mean(const Scope& scope, const Input& x, const Input& axis, ReduceAttrs attrs = {});
Output Max(const Scope& scope, const Input& x, const Input& axis, ReduceAttrs attrs = {});
Output Min(const Scope& scope, const Input& x, const Input& axis, ReduceAttrs attrs = {});
Output Prod(const Scope& scope, const Input& x, const Input& axis, ReduceAttrs attrs = {});
Output ArgMax(const Scope& scope, const Input& x, const Input& axis);
struct TopKOutputs {
  Output values;   // the k largest of each row, largest first
  Output indices;  // int32: their positions in the row
};
TopKOutputs TopKV2(const Scope& scope, const Input& x, const Input& k, bool sorted = true);

// --- Neural-network ops. ---
Output Sigmoid(const Scope& scope, const Input& x);
Output Tanh(const Scope& scope, const Input& x);
Output Relu(const Scope& scope, const Input& x);
Output Relu6(const Scope& scope, const Input& x);
Output Elu(const Scope& scope, const Input& x);
Output Softplus(const Scope& scope, const Input& x);
Output LeakyRelu(const Scope& scope, const Input& x, double alpha = 0.2);
Output Selu(const Scope& scope, const Input& x);
Output Softmax(const Scope& scope, const Input& logits);
Output LogSoftmax(const Scope& scope, const Input& logits);
Output BiasAdd(const Scope& scope, const Input& value, const Input& bias);
Output L2Loss(const Scope& scope, const Input& t);
struct XentOutputs {
  Output loss;      // [batch]
  Output backprop;  // [batch, classes]
};
XentOutputs SoftmaxCrossEntropyWithLogits(const Scope& scope, const Input& features,
                                          const Input& labels);
XentOutputs SparseSoftmaxCrossEntropyWithLogits(const Scope& scope, const Input& features,
                                                const Input& labels);
// Whether each row's target class is among its k largest predictions.
Output InTopK(const Scope& scope, const Input& predictions, const Input& targets, int64_t k);

// --- Convolutions, pooling and normalization (NHWC, as TensorFlow's CPU
// kernels). strides, ksize and dilations are [1, rows, cols, 1]; padding is
// "SAME" or "VALID". ---
struct Conv2DAttrs {
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  std::string data_format = "NHWC";  // the only one implemented
};
// input [batch, rows, cols, depth], filter [rows, cols, depth, out_depth].
Output Conv2D(const Scope& scope, const Input& input, const Input& filter,
              const std::vector<int64_t>& strides, const std::string& padding,
              const Conv2DAttrs& attrs = {});
// Conv2D's gradients for its input (of shape input_sizes) and its filter (of
// shape filter_sizes), from the gradient of its output.
Output Conv2DBackpropInput(const Scope& scope, const Input& input_sizes, const Input& filter,
                           const Input& out_backprop, const std::vector<int64_t>& strides,
                           const std::string& padding, const Conv2DAttrs& attrs = {});
Output Conv2DBackpropFilter(const Scope& scope, const Input& input, const Input& filter_sizes,
                            const Input& out_backprop, const std::vector<int64_t>& strides,
                            const std::string& padding, const Conv2DAttrs& attrs = {});
// filter [rows, cols, depth, multiplier]: output channels depth * multiplier.
Output DepthwiseConv2dNative(const Scope& scope, const Input& input, const Input& filter,
                             const std::vector<int64_t>& strides, const std::string& padding,
                             const Conv2DAttrs& attrs = {});
Output MaxPool(const Scope& scope, const Input& input, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, const std::string& padding);
Output AvgPool(const Scope& scope, const Input& input, const std::vector<int64_t>& ksize,
               const std::vector<int64_t>& strides, const std::string& padding);

struct FusedBatchNormAttrs {
  double epsilon = 1e-4;
  // batch_mean = (1 - f) * mean + f * the batch's (likewise the variance);
  // with 1, mean and variance are not read in training (pass empty vectors).
  double exponential_avg_factor = 1;
  bool is_training = true;
};
struct FusedBatchNormOutputs {
  Output y;
  Output batch_mean, batch_variance;         // [channels]: the running estimates to keep
  Output reserve_space_1, reserve_space_2;  // what the gradient reads back
};
FusedBatchNormOutputs FusedBatchNorm(const Scope& scope, const Input& x, const Input& scale,
                                     const Input& offset, const Input& mean,
                                     const Input& variance,
                                     const FusedBatchNormAttrs& attrs = {});

struct LRNAttrs {
  int64_t depth_radius = 5;
  double bias = 1, alpha = 1, beta = 0.5;
};
Output LRN(const Scope& scope, const Input& input, const LRNAttrs& attrs = {});

// TensorFlow 1's dropout: x / keep_prob * floor(keep_prob + U[0, 1)), with
// keep_prob = 1 - rate: each element kept with probability keep_prob (and
// scaled up by 1 / keep_prob, so the expectation is x) or zeroed. The mask
// comes from a RandomUniform node seeded as every random op is (below): with
// an op seed or a graph seed, the same sequence of masks in every session of
// the graph (a new mask each run); with neither, a different one each time.
// rate 0 returns x itself; a rate outside [0, 1) is an error of the scope. x
// must be float32 or float64. Under WithOpName("y") the output node is "y"
// and its helper nodes are "y/..." (tf.nn.dropout(name="y")); unnamed,
// they are all under "dropout/".
Output Dropout(const Scope& scope, const Input& x, double rate,
               std::optional<int64_t> seed = std::nullopt);

// --- Shapes and arrays. ---
Output Shape(const Scope& scope, const Input& x);
Output Size(const Scope& scope, const Input& x);
Output Rank(const Scope& scope, const Input& x);
Output Reshape(const Scope& scope, const Input& x, const Input& shape);
Output ExpandDims(const Scope& scope, const Input& x, const Input& axis);
Output Squeeze(const Scope& scope, const Input& x, std::vector<int64_t> axes = {});
Output Transpose(const Scope& scope, const Input& x, const Input& perm);
Output Tile(const Scope& scope, const Input& x, const Input& multiples);
// Joins along axis (ConcatV2).
Output Concat(const Scope& scope, const std::vector<Output>& values, const Input& axis);
Output Stack(const Scope& scope, const std::vector<Output>& values, int64_t axis = 0);
std::vector<Output> Unstack(const Scope& scope, const Input& value, int64_t num,
                            int64_t axis = 0);
std::vector<Output> Split(const Scope& scope, const Input& axis, const Input& value,
                          int64_t num_split);
Output Slice(const Scope& scope, const Input& x, const Input& begin, const Input& size);
Output GatherNd(const Scope& scope, const Input& params, const Input& indices);
Output ScatterNd(const Scope& scope, const Input& indices, const Input& updates,
                 const Input& shape);
// x[begin:end:strides] with TensorFlow's masks (bit i applies to entry i).
struct StridedSliceAttrs {
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
          shrink_axis_mask = 0;
};
Output StridedSlice(const Scope& scope, const Input& x, const Input& begin, const Input& end,
                    const Input& strides, StridedSliceAttrs attrs = {});
Output Pad(const Scope& scope, const Input& x, const Input& paddings);
Output Gather(const Scope& scope, const Input& params, const Input& indices);
Output GatherV2(const Scope& scope, const Input& params, const Input& indices,
                const Input& axis);
Output UnsortedSegmentSum(const Scope& scope, const Input& data, const Input& segment_ids,
                          const Input& num_segments);
Output Fill(const Scope& scope, const Input& dims, const Input& value);
Output ZerosLike(const Scope& scope, const Input& x);
Output OnesLike(const Scope& scope, const Input& x);
Output OneHot(const Scope& scope, const Input& indices, const Input& depth,
              const Input& on_value, const Input& off_value);

// --- Random ops. Seeded as TensorFlow 1 seeds them (api/random_seed.h): the
// op's `seed` and the graph's seed (Scope::SetRandomSeed) give the node's
// seed attrs. With either set, successive runs draw one reproducible
// sequence, the same in every session of the graph and of a graph built the
// same way; with neither (seed 0 is a seed), a different one each session. ---
// Tensors of shape `shape`: N(0, 1); N(0, 1) redrawn beyond 2 standard
// deviations; U[0, 1).
Output RandomNormal(const Scope& scope, const Input& shape, DType dtype,
                    std::optional<int64_t> seed = std::nullopt);
Output TruncatedNormal(const Scope& scope, const Input& shape, DType dtype,
                       std::optional<int64_t> seed = std::nullopt);
Output RandomUniform(const Scope& scope, const Input& shape, DType dtype,
                     std::optional<int64_t> seed = std::nullopt);
// Integers uniform in [minval, maxval) of their dtype (int32 or int64), in
// a tensor of shape `shape` (tf.random_uniform with an integer dtype).
Output RandomUniformInt(const Scope& scope, const Input& shape, const Input& minval,
                        const Input& maxval, std::optional<int64_t> seed = std::nullopt);
// `value` with its first dimension in a random order (tf.random_shuffle).
Output RandomShuffle(const Scope& scope, const Input& value,
                     std::optional<int64_t> seed = std::nullopt);

// --- Variables by reference (see api/variables.h for Variable). ---
Output Assign(const Scope& scope, const Output& ref, const Input& value);
Output AssignAdd(const Scope& scope, const Output& ref, const Input& value);
Output AssignSub(const Scope& scope, const Output& ref, const Input& value);

// --- Queues and gradient accumulators (resources of their task). ---
// Shared by shared_name (the node name when empty) across graphs, as variables
// are; the Output of FIFOQueue or ConditionalAccumulator is a handle (a reference).
// A FIFOQueue of tuples of `component_types`; `shapes` empty allows any shape;
// capacity -1 is unbounded, any other must be positive.
Output FIFOQueue(const Scope& scope, std::vector<DType> component_types,
                 std::vector<PartialShape> shapes = {}, int64_t capacity = -1,
                 const std::string& shared_name = "");
// One element (a tuple, one tensor per component); waits while the queue is full.
Operation QueueEnqueue(const Scope& scope, const Output& queue,
                       const std::vector<Output>& components);
// The rows (dimension 0) of the components, as elements, in order.
Operation QueueEnqueueMany(const Scope& scope, const Output& queue,
                           const std::vector<Output>& components);
// The oldest element, one Output per component; waits while the queue is empty.
std::vector<Output> QueueDequeue(const Scope& scope, const Output& queue,
                                 std::vector<DType> component_types);
// Averages gradients of `shape` for synchronous replicas, with a global step.
Output ConditionalAccumulator(const Scope& scope, DType dtype, PartialShape shape,
                              const std::string& shared_name = "");
// Adds `gradient` unless local_step (int64) is below the global step (stale).
Operation AccumulatorApplyGradient(const Scope& scope, const Output& handle,
                                   const Input& local_step, const Input& gradient);
// Waits for num_required (int32) gradients, returns their average and advances
// the global step. The average's shape is the accumulator's when `handle` is a
// ConditionalAccumulator node of this graph, else unknown.
Output AccumulatorTakeGradient(const Scope& scope, const Output& handle,
                               const Input& num_required, DType dtype);
Output AccumulatorNumAccumulated(const Scope& scope, const Output& handle);
// Sets the global step (int64); drops gradients it makes stale.
Operation AccumulatorSetGlobalStep(const Scope& scope, const Output& handle,
                                   const Input& new_global_step);
// Where synchronous replicas wait for the update their gradients went into
// (kernels/data_flow/sync_round.h), kept beside global_step.
Output SyncRound(const Scope& scope, const std::string& shared_name = "");
// A replica whose gradients were tagged pushed_at (int64) waits until an
// update past it is applied; the round's step (int64 scalar).
Output SyncRoundWait(const Scope& scope, const Output& round, const Input& pushed_at);
// The chief applied the update that made `step`: the replicas behind it go on.
Operation SyncRoundAdvance(const Scope& scope, const Output& round, const Input& step);
// The chief starts at `step` (after a restore too): every waiting replica goes on.
Operation SyncRoundReset(const Scope& scope, const Output& round, const Input& step);
// The chief stops at `step`: the waiting replicas and the next waits, `passes`
// in all, go on with it.
Operation SyncRoundRelease(const Scope& scope, const Output& round, const Input& step,
                           const Input& passes);
// The sparse accumulator: sums gradients given as rows and their indices
// (an embedding's), keeping them sparse, for a variable of `shape`. Its
// global step is set with AccumulatorSetGlobalStep. reduction_type "MEAN"
// divides the rows taken by the number of gradients, "SUM" does not.
Output SparseConditionalAccumulator(const Scope& scope, DType dtype, PartialShape shape,
                                    const std::string& shared_name = "",
                                    const std::string& reduction_type = "MEAN");
// Adds the rows `values` at `indices` (int64) of a gradient of dense shape
// `dense_shape` (int64) unless local_step (int64) is stale. The rows' dtype
// is the accumulator's.
Operation SparseAccumulatorApplyGradient(const Scope& scope, const Output& handle,
                                         const Input& local_step, const Input& indices,
                                         const Input& values, const Input& dense_shape);
// What SparseAccumulatorTakeGradient returns: the rows touched, sorted by
// index, their reduced values, and the dense shape.
struct SparseAccumulated {
  Output indices;
  Output values;
  Output dense_shape;
};
// Waits for num_required (int32) gradients and returns their rows reduced,
// advancing the global step. The values' shape is the accumulator's (rows
// unknown) when `handle` is a SparseConditionalAccumulator node of this
// graph, else unknown.
SparseAccumulated SparseAccumulatorTakeGradient(const Scope& scope, const Output& handle,
                                                const Input& num_required, DType dtype);

// --- Metrics. ---
// The exact area under the ROC curve (float64 scalar) of `predictions`
// (float32 or float64 scores) for `labels` (float32, each 0 or 1, both
// present), as sklearn's roc_auc_score. For a whole held-out set at once.
Output Auc(const Scope& scope, const Input& labels, const Input& predictions);

// --- Collectives: synchronous data parallelism without a ps. ---
// TensorFlow's CollectiveReduce: every worker of tasks 0..group_size-1 of
// the node's job gets the inputs of all of them merged element-wise
// (merge_op: "Add", "Mul", "Min", "Max"), then final_op ("Id", or "Div" by
// group_size). Each worker runs it in its own session; the n-th run of
// (group_key, instance_key) on one worker meets the n-th on the others.
// group_size 1 is the identity; more needs a cluster (docs/ops.md).
struct CollectiveReduceAttrs {
  int64_t group_size = 1;
  int64_t group_key = 0;
  int64_t instance_key = 0;
  std::string merge_op = "Add";
  std::string final_op = "Id";
};
Output CollectiveReduce(const Scope& scope, const Input& x, CollectiveReduceAttrs attrs);

// Summaries, as tf.summary's: each returns its summary op's output, a
// string scalar holding a serialized tensorflow.Summary, which
// MergeSummary joins and an event file holds. ScalarSummary and
// HistogramSummary also make the node a trainer fetches to write the value
// itself, an Identity of it named "summaries/<tag>" or
// "histogram_summaries/<tag>" (below the scope's prefix): `tfctl train
// --logdir` writes every one of them to TensorBoard's event files
// (daemon/client/training/event_file.h), and `tfctl submit --fetch
// summaries/loss` logs one. The summary op is "<tag>/ScalarSummary" (or
// HistogramSummary).
Output ScalarSummary(const Scope& scope, const std::string& tag, const Input& value);
Output HistogramSummary(const Scope& scope, const std::string& tag, const Input& values);
Output MergeSummary(const Scope& scope, const std::vector<Output>& summaries);

}  // namespace tfd::ops
