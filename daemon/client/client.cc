#include "daemon/client/client.h"

#include <capnp/common.h>

#include <algorithm>
#include <thread>

#include "common/graph_io.h"
#include "common/tensor_proto.h"
#include "daemon/rpc/checkpoint_wire.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/rpc/spin_wait.h"
#include "daemon/rpc/tensor_wire.h"
#include "daemon/rpc/trace_wire.h"

namespace tfd {
namespace {

// What a call may take beyond the deadline the server enforces itself, so
// the server's more specific error arrives before ours.
constexpr std::chrono::milliseconds kMargin{2000};
// What a close waits for beyond kMargin: a task answers a close within 2 s,
// its steps' cancellations given up by then (kCloseGrace,
// daemon/distributed/master_session.cc); one that has not by 4 s does not
// answer at all (stopped, hung), and its session ends when the connection
// goes.
constexpr std::chrono::milliseconds kCloseAnswered{2000};

VariableDescription FromProto(proto::VariableInfo::Reader v) {
  VariableDescription d;
  d.name = v.getName();
  d.dtype = DTypeFromProto(v.getDtype()).ok() ? *DTypeFromProto(v.getDtype()) : DType::kInvalid;
  d.shape = ShapeFromProto(v.getShape());
  d.initialized = v.getInitialized();
  d.device = v.getDevice();
  d.slice = v.getSlice();
  return d;
}

TaskStatusInfo FromProto(proto::TaskStatus::Reader s) {
  auto d = s.getDataPlane();
  std::vector<std::string> devices;
  for (auto device : s.getDevices()) devices.emplace_back(device);
  return TaskStatusInfo{
      s.getTask(), s.getAddress(), s.getUptimeSeconds(), s.getSessions(),
      s.getRegisteredGraphs(), s.getVariables(), s.getPid(), s.getIncarnation(),
      s.getRestoredAlone(), std::move(devices),
      DataPlaneInfo{d.getTransports(), d.getPushesSent(), d.getBytesSent(),
                    d.getPushesReceived(), d.getBytesReceived(), d.getPushesRefused(),
                    d.getHeldBack(), d.getPushesAbandoned(), d.getBytesHeld(), d.getStepsHeld(),
                    d.getStepsServed()}};
}

// One Cap'n Proto Data field (a tensor's raw content, or one string) holds
// at most 2^29 - 1 bytes, and a list (a string tensor's elements) at most
// 2^29 - 1 entries. Building a request past them throws "integer overflow"
// from inside Cap'n Proto; a feed that large is refused before, saying so.
constexpr uint64_t kMaxWireBytes = kj::maxValueForBits<capnp::BLOB_SIZE_BITS>();
constexpr uint64_t kMaxWireElements = kj::maxValueForBits<capnp::LIST_ELEMENT_COUNT_BITS>();

// `what` names the feed: "feed 'x'".
Status CheckFeedFits(const std::string& what, const Tensor& t) {
  uint64_t largest = t.total_bytes();
  if (t.dtype() == DType::kString) {
    if (static_cast<uint64_t>(t.num_elements()) > kMaxWireElements) {
      return errors::InvalidArgument(what, ": ", t.Describe(), " has ", t.num_elements(),
                                     " strings; a tensor sent to a task holds at most ",
                                     kMaxWireElements, " (Cap'n Proto's limit on a list): feed "
                                     "it in pieces");
    }
    largest = 0;
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      largest = std::max<uint64_t>(largest, t.data<std::string>()[i].size());
    }
  }
  if (largest <= kMaxWireBytes) return OkStatus();
  return errors::InvalidArgument(
      what, ": ", t.Describe(), " is ", largest, " bytes",
      t.dtype() == DType::kString ? " in one string" : "", "; a tensor sent to a task holds at most ",
      kMaxWireBytes, " bytes (Cap'n Proto's limit on one Data field, below the task's "
      "--max-tensor-bytes): feed it in pieces of at most that size, or let the graph read it on the "
      "task (a reader op over the task's --data-dir)");
}

Status CheckFeedsFit(const Client::Feeds& feeds) {
  for (const auto& [name, tensor] : feeds) {
    TFD_RETURN_IF_ERROR(CheckFeedFits("feed '" + name + "'", tensor));
  }
  return OkStatus();
}

template <typename Response>
std::vector<TaskCheckpoints> ReportsFrom(const Response& r) {
  std::vector<TaskCheckpoints> out;
  for (auto t : r.getTasks()) out.push_back(TaskCheckpointsFromProto(t));
  return out;
}

}  // namespace

template <typename T>
StatusOr<T> Client::Wait(kj::Promise<T> p, std::chrono::milliseconds timeout, const char* what) {
  auto& timer = io_.provider->getTimer();
  io_.waitScope.poll();  // a fresh clock for the timeout, as in Connect
  auto limited = p.then([](T&& v) -> kj::Maybe<T> { return kj::mv(v); })
                     .exclusiveJoin(timer.afterDelay((timeout + kMargin).count() * kj::MILLISECONDS)
                                        .then([]() -> kj::Maybe<T> { return nullptr; }));
  try {
    auto result = WaitSpinning(limited, io_, spin_wait_);
    KJ_IF_MAYBE(v, result) { return kj::mv(*v); }
    return errors::DeadlineExceeded(what, " on ", task_, " did not finish within ",
                                    (timeout + kMargin).count() / 1000.0, " s");
  } catch (const kj::Exception& e) {
    return StatusFromKj(e);
  }
}

Status Client::WaitVoid(kj::Promise<void> p, std::chrono::milliseconds timeout, const char* what) {
  auto r = Wait(p.then([]() { return true; }), timeout, what);
  return r.status();
}

namespace {

// What one connection attempt yields once logged in.
struct LoggedIn {
  kj::Own<RpcConnection> connection;
  proto::Master::Client master;
  proto::Worker::Client worker;
  std::string task;
  std::string cluster;  // JSON; empty from a tfd that does not send it
};

// Parses `target`, connects and logs in. `phase` says how far it got, for
// the error when the deadline cuts it short.
kj::Promise<LoggedIn> Attempt(kj::AsyncIoContext& io, const std::string& target,
                              const std::string& token, const std::shared_ptr<Tls>& tls,
                              const char*& phase) {
  phase = "resolving the address";
  return io.provider->getNetwork()
      .parseAddress(target.c_str())
      .then([&phase](kj::Own<kj::NetworkAddress> addr) {
        phase = "connecting";
        return addr->connect().attach(kj::mv(addr));
      })
      .then([&phase, tls, target](kj::Own<kj::AsyncIoStream> stream) {
        if (!tls) return kj::Promise<kj::Own<kj::AsyncIoStream>>(kj::mv(stream));
        phase = "in the TLS handshake (connected, but no answer yet)";
        return tls->WrapClient(kj::mv(stream), target);
      })
      .then([&phase, token](kj::Own<kj::AsyncIoStream> stream) {
        phase = "logging in (connected, but no answer yet)";
        auto connection = RpcConnection::Client(kj::mv(stream));
        auto request = connection->Bootstrap().castAs<proto::Gate>().loginRequest();
        request.setToken(
            kj::arrayPtr(reinterpret_cast<const capnp::byte*>(token.data()), token.size()));
        return request.send().then([connection = kj::mv(connection)](
                                       capnp::Response<proto::Gate::LoginResults>&& r) mutable {
          auto services = r.getServices();
          return LoggedIn{kj::mv(connection), services.getMaster(), services.getWorker(),
                          services.getTask(), services.getCluster()};
        });
      });
}

}  // namespace

StatusOr<std::unique_ptr<Client>> Client::Connect(kj::AsyncIoContext& io, const std::string& target,
                                                  const std::string& token,
                                                  std::chrono::milliseconds timeout,
                                                  std::shared_ptr<Tls> tls) {
  // One deadline for everything: resolving, connecting and logging in, over
  // every retry. A task that accepts and never answers (hung, or out of file
  // descriptors with the connection stuck in its backlog) costs `timeout`.
  kj::Timer& timer = io.provider->getTimer();
  // The loop's clock moves only when the loop runs; after the caller spent
  // a while elsewhere it would put the deadline in the past.
  io.waitScope.poll();
  const kj::TimePoint deadline = timer.now() + timeout.count() * kj::MILLISECONDS;
  Status last = errors::Unavailable("no attempt made");
  for (auto delay = std::chrono::milliseconds(50);; delay = std::min(delay * 2, std::chrono::milliseconds(1000))) {
    const kj::Duration left = deadline - timer.now();
    if (left <= 0 * kj::SECONDS) break;
    const char* phase = "";
    auto attempt = Attempt(io, target, token, tls, phase)
                       .then([](LoggedIn&& l) -> kj::Maybe<LoggedIn> { return kj::mv(l); })
                       .exclusiveJoin(timer.afterDelay(left).then(
                           []() -> kj::Maybe<LoggedIn> { return nullptr; }));
    try {
      auto result = attempt.wait(io.waitScope);
      KJ_IF_MAYBE(l, result) {
        // No spec at all comes from a tfd older than the field; a spec that
        // does not parse is an answer this client cannot act on (whether it
        // is the chief, where the tasks are): not to be taken for none.
        auto cluster = l->cluster.empty() ? ClusterSpec() : ClusterSpec::FromJson(l->cluster);
        if (!cluster.ok()) {
          return errors::Internal("the task at ", target,
                                  " logged us in with a cluster spec that does not parse: ",
                                  cluster.status().message());
        }
        return std::make_unique<Client>(io, kj::mv(l->connection), kj::mv(l->master),
                                        kj::mv(l->worker), std::move(l->task),
                                        std::move(cluster).value());
      }
      last = errors::Unavailable("the deadline passed while ", phase);
      break;
    } catch (const kj::Exception& e) {
      last = StatusFromKj(e);
      if (last.code() == Code::kUnauthenticated) return last;
    }
    if (timer.now() + delay.count() * kj::MILLISECONDS >= deadline) break;
    timer.afterDelay(delay.count() * kj::MILLISECONDS).wait(io.waitScope);
  }
  // A task with TLS on drops a plain client as soon as its first bytes are
  // not a TLS handshake, which looks like any other lost connection here.
  const char* tls_hint = !tls && last.code() == Code::kUnavailable &&
                                 last.reason() == ErrorReason::kConnectionLost
                             ? " (if the task runs with TLS, give --tls-cert, --tls-key and --tls-ca)"
                             : "";
  return errors::Unavailable("cannot reach ", target, " within ", timeout.count() / 1000.0, " s: ",
                             last.message(), tls_hint);
}

Client::Client(kj::AsyncIoContext& io, kj::Own<RpcConnection> connection,
               proto::Master::Client master, proto::Worker::Client worker, std::string task,
               ClusterSpec cluster)
    : io_(io),
      connection_(kj::mv(connection)),
      master_(kj::mv(master)),
      worker_(kj::mv(worker)),
      task_(std::move(task)),
      cluster_(std::move(cluster)) {}

Client::~Client() = default;

StatusOr<Tensor> Client::FetchedTensor(proto::Tensor::Reader t,
                                       std::shared_ptr<void> reply) const {
  if (connection_.get() == nullptr) return TensorFromWire(t, std::move(reply));
  if (t.which() == proto::Tensor::CONTENT && t.getContent().size() > 0) {
    // The tensor keeps the frame it came in, not the reply: nothing of the
    // connection or its loop, so it may go on any thread, after the client.
    if (std::shared_ptr<void> frame = connection_->FrameHolding(t.getContent().begin())) {
      return TensorFromWire(t, std::move(frame));
    }
  }
  return TensorFromProto(t);  // a copy, owing nothing to the message
}

Status Client::CreateSession(const GraphDef& graph, std::chrono::milliseconds step_timeout) {
  auto request = master_.createSessionRequest();
  GraphToProto(graph, request.initGraph());
  request.initOptions().setStepTimeoutMs(step_timeout.count());
  if (step_timeout.count() > 0) step_timeout_ = step_timeout;
  auto session = Wait(request.send().then([](capnp::Response<proto::Master::CreateSessionResults>&& r) {
    return r.getSession();
  }), std::chrono::milliseconds(30000), "createSession");
  if (!session.ok()) return session.status();
  session_ = kj::mv(session).value();
  callables_.clear();  // they belonged to the session replaced
  return OkStatus();
}

StatusOr<Client::RunOutput> Client::Run(const Feeds& feeds, const std::vector<std::string>& fetches,
                                        const std::vector<std::string>& targets,
                                        const RunOptions& options) {
  KJ_IF_MAYBE(session, session_) {
    TFD_RETURN_IF_ERROR(CheckFeedsFit(feeds));
    auto request = session->runRequest();
    auto feed_list = request.initFeeds(static_cast<unsigned>(feeds.size()));
    for (unsigned i = 0; i < feeds.size(); ++i) {
      feed_list[i].setName(feeds[i].first);
      TensorToWire(feeds[i].second, feed_list[i].initTensor());
    }
    auto fetch_list = request.initFetches(static_cast<unsigned>(fetches.size()));
    for (unsigned i = 0; i < fetches.size(); ++i) fetch_list.set(i, fetches[i]);
    auto target_list = request.initTargets(static_cast<unsigned>(targets.size()));
    for (unsigned i = 0; i < targets.size(); ++i) target_list.set(i, targets[i]);
    request.initOptions().setTimeoutMs(options.timeout.count());
    request.getOptions().setTrace(options.trace);
    request.getOptions().setInputPipeline(options.input_pipeline);
    using Response = capnp::Response<proto::Session::RunResults>;
    auto response = Wait(request.send().then([](Response&& r) { return std::make_shared<Response>(kj::mv(r)); }),
                         options.timeout.count() > 0 ? options.timeout : step_timeout_, "run");
    if (!response.ok()) return response.status();
    RunOutput out;
    auto held = *response;
    for (auto f : held->getFetches()) {
      auto t = FetchedTensor(f.getTensor(), held);
      if (!t.ok()) return t.status();
      out.fetches.push_back(std::move(t).value());
    }
    TraceFromProto(held->getTrace(), out.stats);
    for (auto t : held->getRestarted()) out.restarted.emplace_back(t.cStr());
    return out;
  }
  return errors::FailedPrecondition("no session: call CreateSession first");
}

StatusOr<Client::CallableHandle> Client::MakeCallable(const std::vector<std::string>& feeds,
                                                      const std::vector<std::string>& fetches,
                                                      const std::vector<std::string>& targets) {
  KJ_IF_MAYBE(session, session_) {
    auto request = session->makeCallableRequest();
    auto set = [](auto list, const std::vector<std::string>& names) {
      for (unsigned i = 0; i < names.size(); ++i) list.set(i, names[i]);
    };
    set(request.initFeeds(static_cast<unsigned>(feeds.size())), feeds);
    set(request.initFetches(static_cast<unsigned>(fetches.size())), fetches);
    set(request.initTargets(static_cast<unsigned>(targets.size())), targets);
    auto callable = Wait(request.send().then([](capnp::Response<proto::Session::MakeCallableResults>&& r) {
                           return r.getCallable();
                         }),
                         std::chrono::milliseconds(10000), "makeCallable");
    if (!callable.ok()) return callable.status();
    const CallableHandle handle = next_callable_++;
    callables_.emplace(handle, std::move(callable).value());
    return handle;
  }
  return errors::FailedPrecondition("no session: call CreateSession first");
}

StatusOr<Client::RunOutput> Client::RunCallable(CallableHandle callable,
                                                const std::vector<Tensor>& feeds,
                                                const RunOptions& options) {
  auto it = callables_.find(callable);
  if (it == callables_.end()) {
    return errors::InvalidArgument("no callable ", callable, " in this session");
  }
  for (size_t i = 0; i < feeds.size(); ++i) {
    TFD_RETURN_IF_ERROR(CheckFeedFits("the callable's feed " + std::to_string(i), feeds[i]));
  }
  auto request = it->second.runRequest();
  auto feed_list = request.initFeeds(static_cast<unsigned>(feeds.size()));
  for (unsigned i = 0; i < feeds.size(); ++i) TensorToWire(feeds[i], feed_list[i]);
  request.initOptions().setTimeoutMs(options.timeout.count());
  request.getOptions().setTrace(options.trace);
  request.getOptions().setInputPipeline(options.input_pipeline);
  using Response = capnp::Response<proto::Callable::RunResults>;
  auto response = Wait(request.send().then([](Response&& r) { return std::make_shared<Response>(kj::mv(r)); }),
                       options.timeout.count() > 0 ? options.timeout : step_timeout_, "run");
  if (!response.ok()) return response.status();
  RunOutput out;
  auto held = *response;
  for (auto f : held->getFetches()) {
    auto t = FetchedTensor(f, held);
    if (!t.ok()) return t.status();
    out.fetches.push_back(std::move(t).value());
  }
  TraceFromProto(held->getTrace(), out.stats);
  for (auto t : held->getRestarted()) out.restarted.emplace_back(t.cStr());
  return out;
}

Status Client::ReleaseCallable(CallableHandle callable) {
  if (callables_.erase(callable) == 0) {
    return errors::InvalidArgument("no callable ", callable, " in this session");
  }
  return OkStatus();
}

Status Client::CloseSession() {
  if (session_ == nullptr) return OkStatus();
  Status s = WaitVoid(SendClose(), kCloseAnswered, "close");
  session_ = nullptr;
  return s;
}

kj::Promise<void> Client::SendClose() {
  KJ_IF_MAYBE(session, session_) {
    return session->closeRequest().send().ignoreResult();
  }
  return kj::READY_NOW;
}

StatusOr<std::vector<TaskStatusInfo>> Client::WaitCluster(std::chrono::milliseconds timeout) {
  auto request = master_.waitClusterRequest();
  request.setTimeoutMs(timeout.count());
  return Wait(request.send().then([](capnp::Response<proto::Master::WaitClusterResults>&& r) {
                std::vector<TaskStatusInfo> tasks;
                for (auto t : r.getTasks()) tasks.push_back(FromProto(t));
                return tasks;
              }),
              timeout, "waitCluster");
}

Status Client::WaitInitialized(const std::vector<std::string>& names, std::chrono::milliseconds timeout) {
  auto request = master_.waitInitializedRequest();
  auto list = request.initNames(static_cast<unsigned>(names.size()));
  for (unsigned i = 0; i < names.size(); ++i) list.set(i, names[i]);
  request.setTimeoutMs(timeout.count());
  return WaitVoid(request.send().ignoreResult(), timeout, "waitInitialized");
}

StatusOr<std::vector<std::string>> Client::ReportUninitialized(
    const std::vector<std::string>& names, std::chrono::milliseconds timeout) {
  auto request = master_.reportUninitializedRequest();
  auto list = request.initNames(static_cast<unsigned>(names.size()));
  for (unsigned i = 0; i < names.size(); ++i) list.set(i, names[i]);
  request.setTimeoutMs(timeout.count());
  using Results = capnp::Response<proto::Master::ReportUninitializedResults>;
  return Wait(request.send().then([](Results&& r) {
                std::vector<std::string> missing;
                for (auto n : r.getNames()) missing.emplace_back(n.cStr());
                return missing;
              }),
              timeout, "reportUninitialized");
}

StatusOr<TaskStatusInfo> Client::GetStatus(std::chrono::milliseconds timeout) {
  return Wait(worker_.statusRequest().send().then(
                  [](capnp::Response<proto::Worker::StatusResults>&& r) {
                    return FromProto(r.getStatus());
                  }),
              timeout, "status");
}

StatusOr<std::vector<VariableDescription>> Client::ListVariables(std::chrono::milliseconds timeout) {
  return Wait(worker_.listVariablesRequest().send().then(
                  [](capnp::Response<proto::Worker::ListVariablesResults>&& r) {
                    std::vector<VariableDescription> out;
                    for (auto v : r.getVariables()) out.push_back(FromProto(v));
                    return out;
                  }),
              timeout, "listVariables");
}

StatusOr<std::pair<VariableDescription, Tensor>> Client::ReadVariable(
    const std::string& name, std::chrono::milliseconds timeout) {
  auto request = worker_.readVariableRequest();
  request.setName(name);
  using Response = capnp::Response<proto::Worker::ReadVariableResults>;
  auto response = Wait(request.send().then([](Response&& r) { return std::make_shared<Response>(kj::mv(r)); }),
                       timeout, "readVariable");
  if (!response.ok()) return response.status();
  auto held = *response;
  VariableDescription d = FromProto(held->getInfo());
  Tensor value;
  if (d.initialized && held->hasValue()) {
    auto t = FetchedTensor(held->getValue(), held);
    if (!t.ok()) return t.status();
    value = std::move(t).value();
  }
  return std::make_pair(d, value);
}

StatusOr<std::vector<TaskCheckpoints>> Client::SaveCheckpoint(std::optional<int64_t> step,
                                                              std::chrono::milliseconds timeout) {
  auto request = master_.saveCheckpointRequest();
  request.setHasStep(step.has_value());
  request.setStep(step.value_or(0));
  request.setTimeoutMs(timeout.count());
  return Wait(request.send().then([](capnp::Response<proto::Master::SaveCheckpointResults>&& r) {
    return ReportsFrom(r);
  }), timeout, "saveCheckpoint");
}

StatusOr<std::vector<TaskCheckpoints>> Client::RestoreCheckpoint(int64_t step,
                                                                 std::chrono::milliseconds timeout) {
  auto request = master_.restoreCheckpointRequest();
  request.setStep(step);
  request.setTimeoutMs(timeout.count());
  return Wait(request.send().then([](capnp::Response<proto::Master::RestoreCheckpointResults>&& r) {
    return ReportsFrom(r);
  }), timeout, "restoreCheckpoint");
}

StatusOr<std::vector<TaskCheckpoints>> Client::ListCheckpoints(std::chrono::milliseconds timeout,
                                                               bool verify) {
  auto request = master_.listCheckpointsRequest();
  request.setTimeoutMs(timeout.count());
  request.setVerify(verify);
  return Wait(request.send().then([](capnp::Response<proto::Master::ListCheckpointsResults>&& r) {
    return ReportsFrom(r);
  }), timeout, "listCheckpoints");
}

}  // namespace tfd
