#include "python/src/remote_runner.h"

#include <algorithm>
#include <atomic>
#include <future>

#include "daemon/checkpoint/checkpoint_info.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/signals.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

// What a call that waited its deadline out for a lane answers.
Status NoLaneFree(size_t max_lanes) {
  return errors::DeadlineExceeded(
      "every connection of this session stayed busy with another thread's call until the "
      "deadline (a session opens at most ",
      max_lanes, ")");
}

// What is left of a step's timeout once it has a lane; 0 (none) stays so.
std::chrono::milliseconds Remaining(std::chrono::milliseconds timeout,
                                    std::chrono::steady_clock::time_point deadline) {
  if (timeout.count() <= 0) return timeout;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return std::max(left, std::chrono::milliseconds(1));
}

}  // namespace

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
    : target_(target),
      token_file_(token_file),
      tls_(tls),
      timeout_(Millis(timeout_s > 0 ? timeout_s : 30)) {
  // The first lane now: a target that cannot be reached fails here.
  StatusOr<std::unique_ptr<Lane>> first = Status();
  {
    py::gil_scoped_release release;
    first = OpenLane();
  }
  ThrowIfError(first.status());
  task_ = (*first)->client->task();
  MutexLock lock(lanes_mu_);
  idle_.push_back(first->get());
  lanes_.push_back(std::move(first).value());
}

RemoteRunner::~RemoteRunner() {
  py::gil_scoped_release release;
  MutexLock lock(lanes_mu_);  // no call holds a lane: Python holds the runner for each
  for (auto& lane : lanes_) Release(*lane);
}

StatusOr<std::unique_ptr<RemoteRunner::Lane>> RemoteRunner::OpenLane() {
  auto lane = std::make_unique<Lane>();
  lane->loop = std::make_unique<LoopThread>();
  Status s;
  lane->loop->Call([&](kj::AsyncIoContext& io) {
    auto client = ConnectClient(io, target_, token_file_, tls_, timeout_);
    s = client.status();
    if (client.ok()) lane->client = std::move(client).value();
  });
  if (!s.ok()) {
    Release(*lane);
    return s;
  }
  return lane;
}

void RemoteRunner::Release(Lane& lane) {
  if (lane.loop == nullptr) return;
  lane.loop->Call([&lane](kj::AsyncIoContext&) { lane.client.reset(); });
  lane.loop.reset();
}

StatusOr<RemoteRunner::Lane*> RemoteRunner::Acquire(const LanePreference& prefer,
                                                    std::chrono::steady_clock::time_point deadline,
                                                    std::optional<py::error_already_set>* raised) {
  MutexLock lock(lanes_mu_);
  for (;;) {
    if (lanes_closed_) return errors::FailedPrecondition("this session is closed");
    if (!idle_.empty()) {
      // The most recently returned lane is the likeliest to be warm.
      auto idle = idle_.end() - 1;
      if (prefer != nullptr) {
        auto liked = std::find_if(idle_.rbegin(), idle_.rend(), prefer);
        if (liked != idle_.rend()) idle = std::prev(liked.base());
      }
      Lane* lane = *idle;
      idle_.erase(idle);
      return lane;
    }
    if (lanes_.size() + opening_ < kMaxLanes) {
      ++opening_;
      lock.Unlock();
      auto opened = OpenLane();
      lock.Lock();
      --opening_;
      lane_free_.notify_all();  // a Close may wait for it
      if (!opened.ok()) return opened.status();
      lanes_.push_back(std::move(opened).value());
      if (!lanes_closed_) return lanes_.back().get();
      idle_.push_back(lanes_.back().get());  // for Close to release
      return errors::FailedPrecondition("this session is closed");
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return NoLaneFree(kMaxLanes);
    lock.WaitUntil(lane_free_, std::min(deadline, now + kSignalPoll));
    if (raised == nullptr) continue;
    lock.Unlock();
    *raised = RaisedBySignalHandlers();
    if (*raised) BeginCloseAll();
    lock.Lock();
    if (*raised) return nullptr;
  }
}

std::chrono::steady_clock::time_point RemoteRunner::LaneDeadline(
    std::chrono::milliseconds timeout) const {
  return std::chrono::steady_clock::now() + (timeout.count() > 0 ? timeout : timeout_);
}

void RemoteRunner::Return(Lane* lane) {
  {
    MutexLock lock(lanes_mu_);
    idle_.push_back(lane);
  }
  lane_free_.notify_all();
}

// Python runs signal handlers on its main thread only, between bytecodes:
// without the polls, Ctrl-C during a step blocked on a queue or a lost task
// (or waiting for another thread's) would wait for the step's deadline.
void RemoteRunner::OnLane(const LanePreference& prefer,
                          std::chrono::steady_clock::time_point deadline, bool interruptible,
                          const std::function<void(Lane&, kj::AsyncIoContext&)>& job) {
  std::optional<py::error_already_set> raised;
  Status ran;
  {
    py::gil_scoped_release release;
    auto lane = Acquire(prefer, deadline, interruptible ? &raised : nullptr);
    if (!lane.ok()) {
      ran = lane.status();
    } else if (*lane != nullptr) {
      if ((*lane)->loop == nullptr) {
        ran = errors::FailedPrecondition("this session is closed");
      } else if (!interruptible) {
        (*lane)->loop->Call([&](kj::AsyncIoContext& io) { job(**lane, io); });
      } else {
        (*lane)->loop->Call([&](kj::AsyncIoContext& io) { job(**lane, io); },
                            [this, &raised] {
                              raised = RaisedBySignalHandlers();
                              if (raised) BeginCloseAll();
                              return raised.has_value();
                            });
      }
      Return(*lane);
    }
  }
  if (raised) {
    closed_ = true;
    py::error_already_set e = std::move(*raised);
    raised.reset();
    throw e;
  }
  ThrowIfError(ran);
}

void RemoteRunner::BeginCloseAll() {
  MutexLock lock(lanes_mu_);
  lanes_closed_ = true;  // no lane is lent or opened from now on
  for (auto& lane : lanes_) BeginClose(*lane);
}

void RemoteRunner::BeginClose(Lane& lane) {
  MutexLock lock(lane.close_mu);
  lane.closing = true;
  if (lane.close_signal.get() != nullptr && lane.close_signal->isWaiting()) {
    lane.close_signal->fulfill();
  }
}

void RemoteRunner::CheckOpen() const {
  if (closed_) ThrowIfError(errors::FailedPrecondition("this session is closed"));
}

StatusOr<bool> RemoteRunner::SyncGraph(Lane& lane, const GraphBuilder& graph, int nodes) {
  if (lane.synced_nodes == nodes) return false;  // the common case: no GIL on the step's path
  GraphDef def;
  {
    py::gil_scoped_acquire gil;
    def = graph.ToGraphDef();
  }
  // A new session on the master: the tasks' variables and queues stay.
  TFD_RETURN_IF_ERROR(lane.client->CreateSession(def));
  lane.synced_nodes = static_cast<int>(def.nodes.size());
  return true;
}

py::list RemoteRunner::Run(const GraphBuilder& graph, const PyFeeds& feeds,
                           const std::vector<std::string>& fetches,
                           const std::vector<std::string>& targets, double timeout_s) {
  return ToNumpy(Step(graph, feeds, fetches, targets, timeout_s, /*trace=*/false).fetches);
}

py::tuple RemoteRunner::RunTraced(const GraphBuilder& graph, const PyFeeds& feeds,
                                  const std::vector<std::string>& fetches,
                                  const std::vector<std::string>& targets, double timeout_s) {
  Client::RunOutput out = Step(graph, feeds, fetches, targets, timeout_s, /*trace=*/true);
  return py::make_tuple(ToNumpy(std::move(out.fetches)), StatsToPython(out.stats));
}

Client::RunOutput RemoteRunner::Step(const GraphBuilder& graph, const PyFeeds& feeds,
                                     const std::vector<std::string>& fetches,
                                     const std::vector<std::string>& targets, double timeout_s,
                                     bool trace) {
  ThrowIfError(CheckSameGraph(graph_, graph));
  CheckOpen();
  Client::Feeds tensors = TensorFeeds(feeds, /*local=*/false);
  Client::RunOptions options;
  options.timeout = Millis(timeout_s);
  options.trace = trace;
  StatusOr<Client::RunOutput> out = Status();
  const int nodes = graph.num_nodes();
  bool sent = false;
  const auto deadline = LaneDeadline(options.timeout);
  OnLane(nullptr, deadline, /*interruptible=*/true, [&](Lane& lane, kj::AsyncIoContext&) {
    auto synced = SyncGraph(lane, graph, nodes);
    sent = synced.ok() && *synced;
    Status s = synced.status();
    kj::Promise<void> watch = nullptr;
    if (s.ok()) s = WatchForClose(lane, watch);
    options.timeout = Remaining(options.timeout, deadline);
    out = s.ok() ? lane.client->Run(tensors, fetches, targets, options) : s;
    EndWatchForClose(lane);
    tensors.clear();
    if (out.ok()) out = OwnSmallFetches(std::move(out).value());
  });
  if (sent) graph_ = &graph;
  return ValueOrThrow(std::move(out));
}

int64_t RemoteRunner::MakeCallable(const GraphBuilder& graph, const std::vector<std::string>& feeds,
                                   const std::vector<std::string>& fetches,
                                   const std::vector<std::string>& targets, bool input_pipeline) {
  ThrowIfError(CheckSameGraph(graph_, graph));
  CheckOpen();
  auto callable = std::make_shared<Callable>();
  callable->feeds = feeds;
  callable->fetches = fetches;
  callable->targets = targets;
  callable->input_pipeline = input_pipeline;
  const int nodes = graph.num_nodes();
  bool sent = false;
  Status made;
  // Prepared once now, so that a step the master refuses fails here.
  OnLane(nullptr, LaneDeadline({}), /*interruptible=*/false, [&](Lane& lane, kj::AsyncIoContext&) {
    const int before = lane.synced_nodes;
    made = PreparedOn(lane, *callable, graph, nodes).status();
    sent = lane.synced_nodes != before;
  });
  if (sent) graph_ = &graph;
  ThrowIfError(made);
  const int64_t handle = next_callable_++;
  callables_.emplace(handle, std::move(callable));
  return handle;
}

StatusOr<Client::CallableHandle> RemoteRunner::PreparedOn(Lane& lane, Callable& c,
                                                          const GraphBuilder& graph, int nodes) {
  {
    MutexLock lock(c.mu);
    auto it = c.on.find(&lane);
    // A handle lasts as long as the lane's session, which a graph sent
    // again (grown) replaces.
    if (it != c.on.end() && it->second.first == lane.synced_nodes) return it->second.second;
  }
  TFD_RETURN_IF_ERROR(SyncGraph(lane, graph, nodes).status());
  TFD_ASSIGN_OR_RETURN(Client::CallableHandle handle,
                       lane.client->MakeCallable(c.feeds, c.fetches, c.targets));
  MutexLock lock(c.mu);
  c.on[&lane] = {lane.synced_nodes, handle};
  return handle;
}

// Another thread's step may hold the lane a callable was prepared on, and
// may wait for this very call (a dequeue for its enqueue): the callable
// runs on whichever lane is free, prepared there first when need be.
py::list RemoteRunner::RunCallable(int64_t handle, const std::vector<py::array>& feeds,
                                   double timeout_s) {
  CheckOpen();
  auto it = callables_.find(handle);
  if (it == callables_.end()) {
    ThrowIfError(errors::InvalidArgument("no callable ", handle, " in this session"));
  }
  const std::shared_ptr<Callable> callable = it->second;
  const GraphBuilder& graph = *graph_;  // sent when the callable was made
  const int nodes = graph.num_nodes();
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < feeds.size(); ++i) {
    auto t = TensorFromArray(feeds[i], /*alias=*/true);
    if (!t.ok()) ThrowIfError(t.status().WithContext("feed " + std::to_string(i)));
    tensors.push_back(std::move(t).value());
  }
  Client::RunOptions options;
  options.timeout = Millis(timeout_s);
  options.input_pipeline = callable->input_pipeline;
  StatusOr<Client::RunOutput> out = Status();
  const auto deadline = LaneDeadline(options.timeout);
  const auto prepared = [&callable](const Lane* lane) {
    MutexLock lock(callable->mu);
    return callable->on.count(lane) != 0;
  };
  OnLane(prepared, deadline, /*interruptible=*/true, [&](Lane& lane, kj::AsyncIoContext&) {
    auto on = PreparedOn(lane, *callable, graph, nodes);
    kj::Promise<void> watch = nullptr;
    Status s = on.status();
    if (s.ok()) s = WatchForClose(lane, watch);
    options.timeout = Remaining(options.timeout, deadline);
    out = s.ok() ? lane.client->RunCallable(*on, tensors, options) : s;
    EndWatchForClose(lane);
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
  OnLane(nullptr, LaneDeadline({}), /*interruptible=*/false, [&](Lane& lane, kj::AsyncIoContext&) {
    out = lane.client->SaveCheckpoint(step < 0 ? std::nullopt : std::optional<int64_t>(step),
                                      timeout_);
  });
  return CheckpointsToPython(ValueOrThrow(std::move(out)));
}

void RemoteRunner::WaitInitialized(const std::vector<std::string>& names, double timeout_s) {
  CheckOpen();
  Status out;
  const auto deadline = LaneDeadline(Millis(timeout_s));
  OnLane(nullptr, deadline, /*interruptible=*/false, [&](Lane& lane, kj::AsyncIoContext&) {
    out = lane.client->WaitInitialized(names, Remaining(Millis(timeout_s), deadline));
  });
  ThrowIfError(out);
}

py::list RemoteRunner::RestoreCheckpoint(int64_t step) {
  CheckOpen();
  StatusOr<std::vector<TaskCheckpoints>> out = Status();
  OnLane(nullptr, LaneDeadline({}), /*interruptible=*/false, [&](Lane& lane, kj::AsyncIoContext&) {
    out = lane.client->RestoreCheckpoint(step < 0 ? Client::kLatestCheckpoint : step, timeout_);
  });
  return CheckpointsToPython(ValueOrThrow(std::move(out)));
}

Status RemoteRunner::WatchForClose(Lane& lane, kj::Promise<void>& watch) {
  auto signal = kj::newPromiseAndCrossThreadFulfiller<void>();
  {
    MutexLock lock(lane.close_mu);
    // Queued behind the step that Close cancelled: refused, as after Close.
    if (lane.closing) return errors::FailedPrecondition("this session is closed");
    lane.close_signal = kj::mv(signal.fulfiller);
  }
  // Sent while the step's own call waits on this loop: the master cancels
  // the step, whose run then answers CANCELLED.
  watch = signal.promise.then([&lane]() { return lane.client->SendClose(); })
              .eagerlyEvaluate([](kj::Exception&&) {});
  return OkStatus();
}

void RemoteRunner::EndWatchForClose(Lane& lane) {
  MutexLock lock(lane.close_mu);
  lane.close_signal = nullptr;
}

// No lane is lent from the start of a close; every lane's session is then
// closed in turn, each once its step (cancelled by BeginCloseAll) has
// ended, and the first error is raised once all are. After a signal's
// close (the session closed already) the lanes are only released.
void RemoteRunner::Close() {
  const bool send_close = !closed_;
  closed_ = true;
  py::gil_scoped_release release;
  BeginCloseAll();
  lane_free_.notify_all();
  Status first;
  std::vector<Lane*> done;
  MutexLock lock(lanes_mu_);
  while (done.size() < lanes_.size() || opening_ > 0) {
    if (idle_.empty()) {
      lock.Wait(lane_free_);
      continue;
    }
    Lane* lane = idle_.back();
    idle_.pop_back();
    done.push_back(lane);
    lock.Unlock();
    Status s;
    if (lane->loop != nullptr && send_close) {
      lane->loop->Call([&](kj::AsyncIoContext&) { s = lane->client->CloseSession(); });
    }
    Release(*lane);
    if (first.ok()) first = s;
    lock.Lock();
  }
  idle_ = std::move(done);  // released: a later Close finds them so
  lock.Unlock();
  py::gil_scoped_acquire gil;
  ThrowIfError(first);
}

}  // namespace tfd::python
