#include "python/src/sessions.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <thread>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "common/allowed_cpus.h"
#include "common/token_file.h"
#include "daemon/checkpoint/checkpoint_info.h"
#include "daemon/rpc/tls.h"
#include "daemon/runtime/executor.h"
#include "kernels/gpu/gpu_device.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/signals.h"

namespace tfd::python {

namespace py = pybind11;

std::chrono::milliseconds Millis(double seconds) {
  if (seconds <= 0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000)));
}

Status OwnTensors(std::vector<Tensor>& tensors) {
  for (Tensor& t : tensors) {
    if (!t.initialized()) continue;
    TFD_ASSIGN_OR_RETURN(Tensor host, t.ToHost());
    TFD_ASSIGN_OR_RETURN(t, host.DeepCopy());
  }
  return OkStatus();
}

namespace {


// The nodes of `graph` from `first` on: what a session that has the rest
// needs to catch up.
GraphDef NodesFrom(const GraphDef& graph, int first) {
  GraphDef more;
  more.versions = graph.versions;
  more.nodes.assign(graph.nodes.begin() + first, graph.nodes.end());
  return more;
}

Status CheckSameGraph(const GraphBuilder* sent, const GraphBuilder& graph) {
  if (sent != nullptr && sent != &graph) {
    return errors::InvalidArgument(
        "this session runs another graph: a tfd.Session runs the graph it was made with (or the "
        "default graph of its first run)");
  }
  return OkStatus();
}

// Feeds as tensors. `alias` as TensorFromArray's; a local session aliases
// only arrays the caller cannot change (read-only ones), since a variable
// assigned from a feed keeps its buffer.
LocalSession::Feeds TensorFeeds(const PyFeeds& feeds, bool local) {
  LocalSession::Feeds out;
  for (const auto& [name, array] : feeds) {
    const bool alias = !local || !array.writeable();
    auto t = TensorFromArray(array, alias);
    if (!t.ok()) ThrowIfError(t.status().WithContext("feed '" + name + "'"));
    out.emplace_back(name, std::move(t).value());
  }
  return out;
}

py::list ToNumpy(std::vector<Tensor> tensors) {
  py::list out;
  for (Tensor& t : tensors) out.append(ValueOrThrow(TensorToNumpy(std::move(t))));
  return out;
}

// A large fetch views the frame it came in (Client::RunOutput), which only
// its memory keeps: its numpy array holds nothing of the connection or the
// loop thread, and the session may close and go before it. One under this
// size is copied out on the loop, which costs less than keeping its whole
// frame alive as long as the array.
constexpr size_t kViewedFetchBytes = size_t{1} << 20;

StatusOr<Client::RunOutput> OwnSmallFetches(Client::RunOutput out) {
  for (Tensor& t : out.fetches) {
    if (!t.initialized() || t.total_bytes() >= kViewedFetchBytes) continue;
    TFD_ASSIGN_OR_RETURN(Tensor host, t.ToHost());
    TFD_ASSIGN_OR_RETURN(t, host.DeepCopy());
  }
  return out;
}

std::shared_ptr<spdlog::logger> MakeLogger() {
  auto logger = std::make_shared<spdlog::logger>(
      "tfd-python", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_level(spdlog::level::warn);
  return logger;
}

}  // namespace

LocalRunner::LocalRunner(const OpRegistry& registry, const std::vector<std::string>& io_dirs)
    : registry_(registry), pool_(NumAllowedCpus()) {
  env_.resources = &resources_;
  env_.logger = MakeLogger();
  for (const std::string& d : io_dirs) env_.io_dirs.emplace_back(d);
  env_.gpus = gpu::GpuMemories();
  session_ = std::make_unique<LocalSession>(
      registry_, env_, pool_,
      LocalSession::Options{.allow_soft_placement = true, .inline_kernels = InlineKernelsFor(0)});
}

LocalRunner::~LocalRunner() {
  py::gil_scoped_release release;  // kernels may drop fed arrays, which takes the GIL
  session_.reset();
  pool_.join();
}

Status LocalRunner::Sync(const GraphBuilder& graph) {
  TFD_RETURN_IF_ERROR(CheckSameGraph(graph_, graph));
  if (graph_ != nullptr && synced_nodes_ == graph.num_nodes()) return OkStatus();
  GraphDef def = graph.ToGraphDef();
  const int n = static_cast<int>(def.nodes.size());
  TFD_RETURN_IF_ERROR(graph_ == nullptr ? session_->Create(std::move(def))
                                        : session_->Extend(NodesFrom(def, synced_nodes_)));
  graph_ = &graph;
  synced_nodes_ = n;
  return OkStatus();
}

py::list LocalRunner::Run(const GraphBuilder& graph, const PyFeeds& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets, double timeout_s) {
  ThrowIfError(Sync(graph));
  LocalSession::Feeds tensors = TensorFeeds(feeds, /*local=*/true);
  LocalSession::RunOptions options;
  options.deadline = Millis(timeout_s);
  // Ctrl-C cancels the step; the session goes on (RemoteRunner closes
  // its, having no other way to cancel one step).
  std::optional<py::error_already_set> raised;
  options.interrupted = [&raised] { return (raised = RaisedBySignalHandlers()).has_value(); };
  StatusOr<LocalSession::RunOutput> out = Status();
  {
    py::gil_scoped_release release;
    out = session_->Run(tensors, fetches, targets, options);
  }
  if (raised) throw std::move(*raised);
  ThrowIfError(out.status());
  return ToNumpy(std::move(out->fetches));
}

void LocalRunner::Close() {
  py::gil_scoped_release release;  // a woken step may end, dropping fed arrays
  session_->Close();
}

LoopThread::LoopThread() : thread_([this] { Loop(); }) {}

LoopThread::~LoopThread() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LoopThread::Loop() {
  auto io = kj::setupAsyncIo();
  for (;;) {
    std::function<void(kj::AsyncIoContext&)> job;
    // A loop of steps sends the next job soon after the last one ended:
    // look for it a little while before sleeping, sparing a wake-up.
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    while (std::chrono::steady_clock::now() < spin_until) {
      {
        MutexLock lock(mu_);
        if (stop_ || !jobs_.empty()) break;
      }
      std::this_thread::yield();
    }
    {
      MutexLock lock(mu_);
      lock.Wait(cv_, [this]() REQUIRES(mu_) { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job(io);
  }
}

void LoopThread::Call(std::function<void(kj::AsyncIoContext&)> job,
                      const std::function<bool()>& interrupted) {
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::atomic<bool> ran{false};
  {
    MutexLock lock(mu_);
    jobs_.push_back([&](kj::AsyncIoContext& io) {
      job(io);
      ran.store(true, std::memory_order_release);
      done.set_value();
    });
  }
  cv_.notify_all();
  // A step's answer often comes within a short while: look for it before
  // sleeping on the future, sparing the caller a wake-up (as Loop does for
  // the next job). The flag, not the future, is polled: polling a future
  // with a zero timeout may enter the kernel each time.
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  while (!ran.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < spin_until) {
    std::this_thread::yield();
  }
  bool asking = interrupted != nullptr;
  while (asking && finished.wait_for(kSignalPoll) != std::future_status::ready) {
    asking = !interrupted();
  }
  finished.wait();
}

RemoteRunner::RemoteRunner(const std::string& target, const std::string& token_file,
                           const TlsFiles& tls, double timeout_s)
    : timeout_(Millis(timeout_s > 0 ? timeout_s : 30)),
      loop_(std::make_unique<LoopThread>()) {
  Status s;
  Status ran = OnLoop([&](kj::AsyncIoContext& io) { s = Connect(io, target, token_file, tls); });
  if (!ran.ok()) s = ran;
  if (!s.ok()) Release();  // no destructor runs after a constructor throws
  ThrowIfError(s);
}

RemoteRunner::~RemoteRunner() { Release(); }

void RemoteRunner::Release() {
  py::gil_scoped_release release;
  MutexLock lock(calls_mu_);
  if (loop_ == nullptr) return;
  loop_->Call([this](kj::AsyncIoContext&) { client_.reset(); });
  loop_.reset();
}

Status RemoteRunner::OnLoop(const std::function<void(kj::AsyncIoContext&)>& job) {
  py::gil_scoped_release release;
  MutexLock lock(calls_mu_);
  if (loop_ == nullptr) return errors::FailedPrecondition("this session is closed");
  loop_->Call(job);
  return OkStatus();
}

// Python runs signal handlers on its main thread only, between bytecodes:
// without this, Ctrl-C during a step blocked on a queue or a lost task
// would wait for the step's deadline.
void RemoteRunner::OnLoopInterruptible(const std::function<void(kj::AsyncIoContext&)>& job) {
  Status ran;
  {
    py::gil_scoped_release release;
    MutexLock lock(calls_mu_);
    if (loop_ == nullptr) {
      ran = errors::FailedPrecondition("this session is closed");
    } else {
      loop_->Call(job, [this] { return RaisedBySignalHandler(); });
    }
  }
  if (raised_) {
    closed_ = true;
    py::error_already_set raised = std::move(*raised_);
    raised_.reset();
    throw raised;
  }
  ThrowIfError(ran);
}

bool RemoteRunner::RaisedBySignalHandler() {
  raised_ = RaisedBySignalHandlers();
  if (!raised_) return false;
  BeginClose();
  return true;
}

void RemoteRunner::BeginClose() {
  MutexLock lock(close_mu_);
  closing_ = true;
  if (close_signal_.get() != nullptr && close_signal_->isWaiting()) close_signal_->fulfill();
}

void RemoteRunner::CheckOpen() const {
  if (closed_) ThrowIfError(errors::FailedPrecondition("this session is closed"));
}

StatusOr<std::unique_ptr<Client>> ConnectClient(kj::AsyncIoContext& io, const std::string& target,
                                                const std::string& token_file, TlsFiles tls,
                                                std::chrono::milliseconds timeout) {
  std::string path = token_file;
  if (path.empty()) {
    if (const char* env = std::getenv("TFD_AUTH_TOKEN_FILE")) path = env;
  }
  std::string token;
  if (!path.empty()) {
    TFD_ASSIGN_OR_RETURN(TokenFile file, ReadTokenFile(path));
    token = std::move(file.token);
  }
  for (auto [value, env] : {std::pair{&tls.cert, "TFD_TLS_CERT"},
                            std::pair{&tls.key, "TFD_TLS_KEY"}, std::pair{&tls.ca, "TFD_TLS_CA"}}) {
    if (value->empty()) {
      if (const char* v = std::getenv(env)) *value = v;
    }
  }
  std::shared_ptr<Tls> client_tls;
  if (tls.enabled()) {
    TFD_ASSIGN_OR_RETURN(client_tls, Tls::Load(tls));
  }
  return Client::Connect(io, target, token, timeout, client_tls);
}

Status RemoteRunner::Connect(kj::AsyncIoContext& io, const std::string& target,
                             const std::string& token_file, TlsFiles tls) {
  TFD_ASSIGN_OR_RETURN(client_,
                       ConnectClient(io, target, token_file, std::move(tls), timeout_));
  task_ = client_->task();
  return OkStatus();
}

Status RemoteRunner::SendGraphIfGrown(const GraphDef& def, bool resend, bool* created) {
  if (!resend) return OkStatus();
  // A new session on the master: the tasks' variables and queues stay.
  TFD_RETURN_IF_ERROR(client_->CreateSession(def));
  *created = true;
  return OkStatus();
}

void RemoteRunner::MarkSent(const GraphBuilder& graph, int nodes, bool created) {
  if (!created) return;
  graph_ = &graph;
  synced_nodes_ = nodes;
}

py::list RemoteRunner::Run(const GraphBuilder& graph, const PyFeeds& feeds,
                           const std::vector<std::string>& fetches,
                           const std::vector<std::string>& targets, double timeout_s) {
  ThrowIfError(CheckSameGraph(graph_, graph));
  CheckOpen();
  const bool resend = graph_ == nullptr || synced_nodes_ != graph.num_nodes();
  const GraphDef def = resend ? graph.ToGraphDef() : GraphDef();
  Client::Feeds tensors = TensorFeeds(feeds, /*local=*/false);
  Client::RunOptions options;
  options.timeout = Millis(timeout_s);
  StatusOr<Client::RunOutput> out = Status();
  bool created = false;
  OnLoopInterruptible([&](kj::AsyncIoContext&) {
    Status s = SendGraphIfGrown(def, resend, &created);
    kj::Promise<void> watch = nullptr;
    if (s.ok()) s = WatchForClose(watch);
    out = s.ok() ? client_->Run(tensors, fetches, targets, options) : s;
    EndWatchForClose();
    tensors.clear();
    if (out.ok()) out = OwnSmallFetches(std::move(out).value());
  });
  MarkSent(graph, static_cast<int>(def.nodes.size()), created);
  ThrowIfError(out.status());
  return ToNumpy(std::move(out->fetches));
}

int64_t RemoteRunner::MakeCallable(const GraphBuilder& graph, const std::vector<std::string>& feeds,
                                   const std::vector<std::string>& fetches,
                                   const std::vector<std::string>& targets) {
  ThrowIfError(CheckSameGraph(graph_, graph));
  CheckOpen();
  const bool resend = graph_ == nullptr || synced_nodes_ != graph.num_nodes();
  const GraphDef def = resend ? graph.ToGraphDef() : GraphDef();
  StatusOr<Client::CallableHandle> handle = Status();
  bool created = false;
  ThrowIfError(OnLoop([&](kj::AsyncIoContext&) {
    Status s = SendGraphIfGrown(def, resend, &created);
    handle = s.ok() ? client_->MakeCallable(feeds, fetches, targets) : s;
  }));
  MarkSent(graph, static_cast<int>(def.nodes.size()), created);
  return ValueOrThrow(std::move(handle));
}

py::list RemoteRunner::RunCallable(int64_t handle, const std::vector<py::array>& feeds,
                                   double timeout_s) {
  CheckOpen();
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < feeds.size(); ++i) {
    auto t = TensorFromArray(feeds[i], /*alias=*/true);
    if (!t.ok()) ThrowIfError(t.status().WithContext("feed " + std::to_string(i)));
    tensors.push_back(std::move(t).value());
  }
  Client::RunOptions options;
  options.timeout = Millis(timeout_s);
  StatusOr<Client::RunOutput> out = Status();
  OnLoopInterruptible([&](kj::AsyncIoContext&) {
    kj::Promise<void> watch = nullptr;
    Status s = WatchForClose(watch);
    out = s.ok() ? client_->RunCallable(handle, tensors, options) : s;
    EndWatchForClose();
    tensors.clear();
    if (out.ok()) out = OwnSmallFetches(std::move(out).value());
  });
  ThrowIfError(out.status());
  return ToNumpy(std::move(out->fetches));
}

namespace {

py::list CheckpointsToPython(const std::vector<TaskCheckpoints>& tasks) {
  py::list out;
  for (const TaskCheckpoints& t : tasks) {
    py::list files;
    for (const CheckpointInfo& c : t.checkpoints) files.append(py::make_tuple(c.step, c.path));
    out.append(py::make_tuple(t.task, t.directory, files));
  }
  return out;
}

}  // namespace

py::list RemoteRunner::SaveCheckpoint(int64_t step) {
  CheckOpen();
  StatusOr<std::vector<TaskCheckpoints>> out = Status();
  ThrowIfError(OnLoop([&](kj::AsyncIoContext&) {
    out = client_->SaveCheckpoint(step < 0 ? std::nullopt : std::optional<int64_t>(step),
                                  timeout_);
  }));
  return CheckpointsToPython(ValueOrThrow(std::move(out)));
}

void RemoteRunner::WaitInitialized(const std::vector<std::string>& names, double timeout_s) {
  CheckOpen();
  Status out;
  ThrowIfError(OnLoop([&](kj::AsyncIoContext&) {
    out = client_->WaitInitialized(names, Millis(timeout_s));
  }));
  ThrowIfError(out);
}

py::list RemoteRunner::RestoreCheckpoint(int64_t step) {
  CheckOpen();
  StatusOr<std::vector<TaskCheckpoints>> out = Status();
  ThrowIfError(OnLoop([&](kj::AsyncIoContext&) {
    out = client_->RestoreCheckpoint(step < 0 ? Client::kLatestCheckpoint : step, timeout_);
  }));
  return CheckpointsToPython(ValueOrThrow(std::move(out)));
}

Status RemoteRunner::WatchForClose(kj::Promise<void>& watch) {
  auto signal = kj::newPromiseAndCrossThreadFulfiller<void>();
  {
    MutexLock lock(close_mu_);
    // Queued behind the step that Close cancelled: refused, as after Close.
    if (closing_) return errors::FailedPrecondition("this session is closed");
    close_signal_ = kj::mv(signal.fulfiller);
  }
  // Sent while the step's own call waits on this loop: the master cancels
  // the step, whose run then answers CANCELLED.
  watch = signal.promise.then([this]() { return client_->SendClose(); })
              .eagerlyEvaluate([](kj::Exception&&) {});
  return OkStatus();
}

void RemoteRunner::EndWatchForClose() {
  MutexLock lock(close_mu_);
  close_signal_ = nullptr;
}

void RemoteRunner::Close() {
  if (closed_) {  // closed before, or by an interrupted step's close
    Release();
    return;
  }
  closed_ = true;
  // A step running for another thread holds the loop: have the loop send
  // the close meanwhile (TF1's Session.close cancels the running steps).
  BeginClose();
  Status s;
  Status ran = OnLoop([&](kj::AsyncIoContext&) { s = client_->CloseSession(); });
  Release();
  ThrowIfError(ran.ok() ? s : ran);
}

}  // namespace tfd::python
