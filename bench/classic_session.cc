#include "bench/classic_session.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/asio/thread_pool.hpp>

#include "api/train_signature.h"
#include "daemon/runtime/local_session.h"
#include "examples/mnist/mnist_model.h"
#include "kernels/register_all.h"

namespace tfd::bench {
namespace {

namespace sig = train::signature;

// The input must outlast every step; a dataset repeats lazily, so a large
// count costs nothing.
constexpr int64_t kEpochs = 100000;

StatusOr<double> LossOf(const LocalSession::RunOutput& out) {
  if (out.fetches.size() == 1 && out.fetches[0].dtype() == DType::kFloat32 &&
      out.fetches[0].num_elements() == 1) {
    return out.fetches[0].scalar<float>();
  }
  return errors::Internal("expected the scalar float32 '", sig::kLoss, "' back, got ",
                          out.fetches.size(), " fetches");
}

}  // namespace

// Members in destruction order: the session goes before the pool, the env
// and the registry it borrows.
struct ClassicSession::State {
  explicit State(int threads) : pool(threads) {}
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
  boost::asio::thread_pool pool;
  std::unique_ptr<LocalSession> session;
};

ClassicSession::ClassicSession(PrivateKey, std::unique_ptr<State> state)
    : state_(std::move(state)) {}

ClassicSession::~ClassicSession() {
  if (state_ == nullptr) return;
  state_->session.reset();
  state_->pool.join();
}

StatusOr<std::unique_ptr<ClassicSession>> ClassicSession::Create(const std::string& data_dir,
                                                                 int threads) {
  auto s = std::make_unique<State>(threads);
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(s->registry));
  examples::MnistOptions o;
  o.model = examples::MnistModel::kClassic;
  o.epochs = kEpochs;
  Scope root = Scope::NewRootScope(s->registry);
  TFD_RETURN_IF_ERROR(examples::BuildMnist(root, o));
  GraphDef graph = root.ToGraphDef();
  s->env.resources = &s->resources;
  s->env.logger = std::make_shared<spdlog::logger>(
      "kernel_bench", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  s->env.logger->set_level(spdlog::level::warn);  // not the "every node runs here" note
  s->env.io_dirs = {data_dir};
  s->session = std::make_unique<LocalSession>(s->registry, s->env, s->pool);
  TFD_RETURN_IF_ERROR(s->session->Create(std::move(graph)));
  TFD_RETURN_IF_ERROR(s->session->Run({}, {}, {sig::kInit}).status());
  return std::make_unique<ClassicSession>(PrivateKey{}, std::move(s));
}

StatusOr<double> ClassicSession::Step() {
  TFD_ASSIGN_OR_RETURN(auto out, state_->session->Run({}, {sig::kLoss}, {sig::kTrain}));
  return LossOf(out);
}

StatusOr<double> ClassicSession::TracedStep(OpTimes* by_op) {
  LocalSession::RunOptions options;
  options.trace = true;
  TFD_ASSIGN_OR_RETURN(auto out, state_->session->Run({}, {sig::kLoss}, {sig::kTrain}, options));
  for (const NodeExecStats& n : out.stats.nodes) {
    OpTime& t = (*by_op)[n.op];
    t.micros += static_cast<double>(n.end_micros - n.start_micros);
    ++t.runs;
  }
  return LossOf(out);
}

}  // namespace tfd::bench
