#include "bench/tfd_runs.h"

#include <algorithm>
#include <cstring>

#include "bench/stats.h"

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kWarmupRuns = 50;
// Long enough for 256 MB on a busy machine, short enough not to look hung.
constexpr std::chrono::milliseconds kStepTimeout = 60s;

NodeDef Node(std::string name, std::string op, std::vector<std::string> inputs, std::string device,
             AttrMap attrs = {}) {
  return NodeDef{std::move(name), std::move(op), std::move(inputs), std::move(device),
                 std::move(attrs)};
}


// The transfer window of a cross-task run, from its trace (see TransferSample).
StatusOr<double> TraceTransfer(const StepStats& stats) {
  const NodeExecStats* send = nullptr;
  const NodeExecStats* recv = nullptr;
  for (const NodeExecStats& n : stats.nodes) {
    if (n.op == "_Send") send = &n;
    if (n.op == "_Recv") recv = &n;
  }
  if (send == nullptr || recv == nullptr) {
    return errors::Internal("the trace of a cross-task step has no ",
                            send == nullptr ? "_Send" : "_Recv", " node (", stats.nodes.size(),
                            " nodes traced)");
  }
  // The _Send starts when the tensor exists and ends when the data plane
  // has handed every byte to the consumer's task (UCX completed the push).
  return static_cast<double>(send->end_micros - send->start_micros) * 1e-6;
}

StatusOr<float> ScalarOf(const Client::RunOutput& out) {
  if (out.fetches.size() != 1 || out.fetches[0].dtype() != DType::kFloat32 ||
      out.fetches[0].shape().num_elements() != 1) {
    return errors::Internal("expected one float32 scalar back, got ", out.fetches.size(),
                            " fetches");
  }
  return out.fetches[0].scalar<float>();
}

}  // namespace

StatusOr<std::vector<double>> EmptyRuns(Client& client, const std::string& device, int iterations,
                                        const TimedSection& section, RunKind kind) {
  GraphDef g;
  g.nodes = {Node("noop", "NoOp", {}, device)};
  TFD_RETURN_IF_ERROR(client.CreateSession(g, kStepTimeout));
  const Client::RunOptions options{.timeout = kStepTimeout, .trace = false};
  Client::CallableHandle callable = 0;
  if (kind == RunKind::kCallable) {
    TFD_ASSIGN_OR_RETURN(callable, client.MakeCallable({}, {}, {"noop"}));
  }
  auto run = [&]() -> Status {
    if (kind == RunKind::kCallable) return client.RunCallable(callable, {}, options).status();
    return client.Run({}, {}, {"noop"}, options).status();
  };
  for (int i = 0; i < kWarmupRuns; ++i) TFD_RETURN_IF_ERROR(run());
  std::vector<double> micros;
  micros.reserve(static_cast<size_t>(iterations));
  if (section) section(true);
  for (int i = 0; i < iterations; ++i) {
    const auto start = Clock::now();
    TFD_RETURN_IF_ERROR(run());
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  if (section) section(false);
  TFD_RETURN_IF_ERROR(client.CloseSession());
  return micros;
}

StatusOr<std::vector<TransferSample>> Transfers(Client& client, size_t bytes,
                                                const std::string& producer,
                                                const std::string& consumer, int reps,
                                                const TimedSection& section) {
  const auto elements = static_cast<int64_t>(bytes / sizeof(float));
  // A name per size: variables outlive sessions on their task.
  const std::string var = "bench_v" + std::to_string(bytes);
  GraphDef g;
  g.nodes = {
      Node(var, "VariableV2", {}, producer,
           {{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{elements})}}),
      Node("dims", "Const", {}, producer,
           {{"value", Tensor::FromVector<int64_t>({elements})}, {"dtype", DType::kInt64}}),
      Node("one", "Const", {}, producer,
           {{"value", Tensor::Scalar(1.0f)}, {"dtype", DType::kFloat32}}),
      Node("fill", "Fill", {"dims", "one"}, producer, {{"index_type", DType::kInt64}}),
      Node("init", "Assign", {var, "fill"}, producer),
      // Separate axes per task, so neither sum needs anything from the other task.
      Node("axes_c", "Const", {}, consumer,
           {{"value", Tensor::FromVector<int32_t>({0})}, {"dtype", DType::kInt32}}),
      Node("axes_p", "Const", {}, producer,
           {{"value", Tensor::FromVector<int32_t>({0})}, {"dtype", DType::kInt32}}),
      Node("remote_sum", "Sum", {var, "axes_c"}, consumer),
      Node("local_sum", "Sum", {var, "axes_p"}, producer),
  };
  TFD_RETURN_IF_ERROR(client.CreateSession(g, kStepTimeout));
  const Client::RunOptions traced{.timeout = kStepTimeout, .trace = true};
  TFD_RETURN_IF_ERROR(client.Run({}, {}, {"init"}, traced).status());

  auto run = [&](const char* fetch, Client::RunOutput* out) -> StatusOr<double> {
    const auto start = Clock::now();
    auto result = client.Run({}, {fetch}, {}, traced);
    const double seconds = Seconds(Clock::now() - start);
    if (!result.ok()) return result.status().WithContext(std::string("fetching ") + fetch);
    *out = std::move(result).value();
    return seconds;
  };
  Client::RunOutput remote, local;
  TFD_RETURN_IF_ERROR(run("remote_sum", &remote).status());  // warm-up: registers partitions
  TFD_RETURN_IF_ERROR(run("local_sum", &local).status());
  // All cross-task runs first, then all local ones, so `section` sees only
  // the former.
  std::vector<TransferSample> samples(static_cast<size_t>(reps));
  std::vector<float> remote_sums;
  if (section) section(true);
  for (TransferSample& s : samples) {
    TFD_ASSIGN_OR_RETURN(s.remote_step_seconds, run("remote_sum", &remote));
    TFD_ASSIGN_OR_RETURN(s.trace_seconds, TraceTransfer(remote.stats));
    TFD_ASSIGN_OR_RETURN(float sum, ScalarOf(remote));
    remote_sums.push_back(sum);
  }
  if (section) section(false);
  for (size_t i = 0; i < samples.size(); ++i) {
    TFD_ASSIGN_OR_RETURN(samples[i].local_step_seconds, run("local_sum", &local));
    // Same kernel, same bytes: the sums must agree bit for bit.
    TFD_ASSIGN_OR_RETURN(float b, ScalarOf(local));
    const float a = remote_sums[i];
    if (std::memcmp(&a, &b, sizeof(a)) != 0 || !(a > 0)) {
      return errors::Internal("the sum of the transferred tensor is ", a, " but ", b,
                              " on the producer");
    }
  }
  TFD_RETURN_IF_ERROR(client.CloseSession());
  return samples;
}

}  // namespace tfd::bench
