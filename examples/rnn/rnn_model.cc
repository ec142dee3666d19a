#include "examples/rnn/rnn_model.h"

#include <cmath>
#include <string>
#include <vector>

#include "api/control_flow.h"
#include "api/ops.h"
#include "api/optimizers.h"
#include "api/placement.h"
#include "api/train_signature.h"
#include "api/variables.h"

namespace tfd::examples {
namespace {

namespace sig = train::signature;
using ops::Initializer;
using ops::Variable;

constexpr int64_t kFeatures = 2;  // the value and the marker

// One gate's weights: from the input, from the state, and a bias.
struct Gate {
  Variable w, u, b;
};

struct Parameters {
  Gate update, reset, candidate;  // z, r and n of the GRU
  Variable w_out, b_out;          // the final state to the prediction
};

// Glorot-uniform weights, biases zero; the update gate's bias at 1, so the
// state is mostly carried over until training says otherwise.
Gate MakeGate(const Scope& s, const std::string& name, const RnnOptions& o, int64_t seed,
              float bias) {
  auto glorot = [](int64_t in, int64_t out, int64_t seed) {
    const double bound = std::sqrt(6.0 / static_cast<double>(in + out));
    return Initializer::RandomUniform(-bound, bound, seed);
  };
  const DType f32 = DType::kFloat32;
  return {Variable(s.WithOpName("w_" + name), {kFeatures, o.hidden}, f32,
                   glorot(kFeatures, o.hidden, seed)),
          Variable(s.WithOpName("u_" + name), {o.hidden, o.hidden}, f32,
                   glorot(o.hidden, o.hidden, seed + 1)),
          Variable(s.WithOpName("b_" + name), {o.hidden}, f32, Initializer::Constant(bias))};
}

Parameters MakeParameters(const Scope& root, const RnnOptions& o) {
  const Scope s = root.WithName("gru");
  const double bound = std::sqrt(6.0 / static_cast<double>(o.hidden + 1));
  return {MakeGate(s, "z", o, o.seed * 10, 1.0f), MakeGate(s, "r", o, o.seed * 10 + 2, 0.0f),
          MakeGate(s, "n", o, o.seed * 10 + 4, 0.0f),
          Variable(s.WithOpName("w_out"), {o.hidden, 1}, DType::kFloat32,
                   Initializer::RandomUniform(-bound, bound, o.seed * 10 + 6)),
          Variable(s.WithOpName("b_out"), {1}, DType::kFloat32, Initializer::Zeros())};
}

struct Batch {
  Output inputs;   // [batch, time, 2]
  Output target;   // [batch, 1]
  Output lengths;  // [batch] int32; invalid when every sequence has every step
};

// `b` integers drawn from [from, to), anew at every run.
Output RandomInts(const Scope& s, int b, int from, int to, int64_t seed) {
  // Seeded as every random op (api/random_seed.h), so the graph's seed counts.
  return ops::RandomUniformInt(s, {b}, from, to, seed);
}

// A batch of the adding problem, drawn anew at every run of the graph. With
// min_length > 0, sequence i has lengths[i] steps, from [min_length, time]:
// its second marker lies before its end, and the steps after it are
// padding (values, no marker) that the GRU must not read.
Batch AddingProblem(const Scope& s, int64_t batch, int64_t time, int64_t min_length,
                    int64_t seed) {
  const auto b = static_cast<int>(batch), t = static_cast<int>(time);
  const Output values = ops::RandomUniform(s, {b, t}, DType::kFloat32, seed);
  // One marked step in each half of the sequence.
  const Output first = RandomInts(s, b, 0, t / 2, seed + 1);
  Output second, lengths;
  if (min_length > 0) {
    lengths = RandomInts(s, b, static_cast<int>(min_length), t + 1, seed + 3);
    const Output second_half = ops::Cast(s, ops::Sub(s, lengths, t / 2), DType::kFloat32);
    const Output u = ops::RandomUniform(s, {b}, DType::kFloat32, seed + 2);
    second = ops::Add(s, ops::Cast(s, ops::Floor(s, ops::Mul(s, u, second_half)), DType::kInt32),
                      t / 2);
  } else {
    second = RandomInts(s, b, t / 2, t, seed + 2);
  }
  const Output markers =
      ops::Add(s, ops::OneHot(s, first, t, 1.0f, 0.0f), ops::OneHot(s, second, t, 1.0f, 0.0f));
  return {ops::Stack(s, {values, markers}, 2),
          ops::Sum(s, ops::Mul(s, values, markers), 1, {.keep_dims = true}), lengths};
}

// Whether `weights` are the GRU's nine; else an error in the scope.
bool HasGruWeights(const Scope& s, const std::vector<Output>& weights) {
  if (weights.size() == 9) return true;
  s.UpdateStatus(errors::InvalidArgument(
      "a GRU takes 9 weights (W, U and b of the update gate, the reset gate and the candidate), "
      "not ", weights.size()));
  return false;
}

}  // namespace

Output GruCell(const Scope& s, const std::vector<Output>& p, const Output& x, const Output& h) {
  if (!HasGruWeights(s, p)) return Output();
  auto affine = [&](int gate, const Output& state) {
    const Output from_x = ops::MatMul(s, x, p[3 * gate]);
    return ops::Add(s, ops::Add(s, from_x, ops::MatMul(s, state, p[3 * gate + 1])), p[3 * gate + 2]);
  };
  const Output z = ops::Sigmoid(s, affine(0, h));
  const Output r = ops::Sigmoid(s, affine(1, h));
  const Output n = ops::Tanh(s, affine(2, ops::Mul(s, r, h)));
  return ops::Add(s, n, ops::Mul(s, z, ops::Sub(s, h, n)));
}

namespace {

// One step of the GRU over sequences of `lengths`, as dynamic_rnn's
// _rnn_step: a sequence past its end keeps its state, and once every
// sequence has ended the cell is skipped, through a cond.
Output MaskedStep(const Scope& b, const std::vector<Output>& weights, const Output& x,
                  const Output& h, const Output& t, const Output& lengths,
                  const Output& max_length) {
  // [batch, 1]: 1 for the sequences still running at step t, else 0.
  const Output running = ops::ExpandDims(b, ops::Cast(b, ops::Less(b, t, lengths), h.dtype), 1);
  std::vector<Output> in{h, x, running};
  in.insert(in.end(), weights.begin(), weights.end());
  return ops::Cond(
      b, ops::Less(b, t, max_length), in,
      [](const Scope& c, const std::vector<Output>& a) {
        const Output cell = GruCell(c, std::vector<Output>(a.begin() + 3, a.end()), a[1], a[0]);
        return std::vector<Output>{ops::Add(c, a[0], ops::Mul(c, a[2], ops::Sub(c, cell, a[0])))};
      },
      [](const Scope&, const std::vector<Output>& a) { return std::vector<Output>{a[0]}; })[0];
}

}  // namespace

Output DynamicGru(const Scope& s, const std::vector<Output>& weights, const Output& inputs,
                  const Output& sequence_length) {
  if (!HasGruWeights(s, weights)) return Output();
  const Output time_major = ops::Transpose(s, inputs, {1, 0, 2});
  const Output shape = ops::Shape(s, time_major);
  const Output steps = ops::Gather(s, shape, 0);
  const Output hidden = ops::Gather(s, ops::Shape(s, weights[1]), 0);
  const Output zero = ops::Cast(s, 0.0f, weights[0].dtype);
  const Output h0 = ops::Fill(s, ops::Stack(s, {ops::Gather(s, shape, 1), hidden}), zero);
  const bool masked = sequence_length.valid();
  const Output max_length = masked ? ops::Max(s, sequence_length, 0) : Output();
  return ops::WhileLoop(
      s,
      [steps](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], steps); },
      [&](const Scope& b, const std::vector<Output>& v) {
        const Output x = ops::Gather(b, time_major, v[0]);
        const Output next = masked ? MaskedStep(b, weights, x, v[1], v[0], sequence_length,
                                                max_length)
                                   : GruCell(b, weights, x, v[1]);
        return std::vector<Output>{ops::Add(b, v[0], 1), next};
      },
      {ops::Const(s, 0), h0})[1];
}

namespace {

Output Predict(const Scope& s, const Parameters& p, const Batch& batch) {
  std::vector<Output> weights;
  for (const Gate* g : {&p.update, &p.reset, &p.candidate}) {
    for (const Variable* v : {&g->w, &g->u, &g->b}) weights.push_back(v->value());
  }
  const Output h = DynamicGru(s, weights, batch.inputs, batch.lengths);
  return ops::Add(s, ops::MatMul(s, h, p.w_out), p.b_out);
}

// eval/accuracy: the fraction of held-out sequences predicted within 0.04.
void AddEvaluation(const Scope& root, const Parameters& p, const RnnOptions& o) {
  const Scope eval = root.WithName("eval");
  const Batch held_out = AddingProblem(eval.WithName("data"), o.eval_batch, o.time_steps,
                                      o.min_length, o.seed + 1000);
  const Output error =
      ops::Abs(eval, ops::Sub(eval, Predict(eval, p, held_out), held_out.target));
  ops::Mean(root.WithOpName(sig::kAccuracy),
            ops::Cast(eval, ops::Less(eval, error, 0.04f), DType::kFloat32), {0, 1});
}

}  // namespace

Status CheckRnnOptions(const RnnOptions& o) {
  if (o.ps_tasks < 0) return errors::InvalidArgument("--ps-tasks must not be negative");
  if (o.batch_size < 1) return errors::InvalidArgument("--batch-size must be at least 1");
  if (o.time_steps < 2) {
    return errors::InvalidArgument("--time-steps must be at least 2 (a marked step in each half), "
                                   "not ", o.time_steps);
  }
  if (o.hidden < 1) return errors::InvalidArgument("--hidden must be at least 1");
  if (o.min_length != 0 && (o.min_length <= o.time_steps / 2 || o.min_length > o.time_steps)) {
    return errors::InvalidArgument("--min-length must be 0 (every sequence full) or in (",
                                   o.time_steps / 2, ", ", o.time_steps,
                                   "] (the second marked step needs a step past half), not ",
                                   o.min_length);
  }
  if (!(o.learning_rate > 0)) return errors::InvalidArgument("--learning-rate must be positive");
  if (o.max_steps < 1) return errors::InvalidArgument("--steps must be at least 1");
  if (o.eval_batch < 1) return errors::InvalidArgument("--eval-batch must be at least 1");
  return OkStatus();
}

Status BuildRnn(const Scope& scope, const RnnOptions& o) {
  TFD_RETURN_IF_ERROR(CheckRnnOptions(o));
  const Scope root = scope.WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = o.ps_tasks}));
  const Variable global_step = ops::GlobalStep(root);
  const Parameters params = MakeParameters(root, o);

  const Batch batch =
      AddingProblem(root.WithName("data"), o.batch_size, o.time_steps, o.min_length, o.seed);
  const Output prediction = Predict(root.WithName("model"), params, batch);
  const Output loss = ops::Mean(root.WithOpName("loss"),
                                ops::Square(root, ops::Sub(root, prediction, batch.target)), {0, 1});
  ops::ScalarSummary(root, "loss", loss);

  const Operation train =
      train::Adam(o.learning_rate).Minimize(root.WithOpName(sig::kTrain), loss, global_step);
  ops::Identity(root.WithOpName(sig::kGlobalStep), train.output(0));
  ops::Const(root.WithOpName(sig::kMaxSteps), ops::Input(o.max_steps));
  ops::GlobalVariablesInitializer(root.WithOpName(sig::kInit));
  AddEvaluation(root, params, o);
  return root.status();
}

}  // namespace tfd::examples
