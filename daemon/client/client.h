// Client: a synchronous handle on one tfd task, for tfctl and tests.
//
// Every call waits on the caller's event loop with a deadline and returns a
// Status whose code came across the wire (DEADLINE_EXCEEDED when the
// deadline passed first).
//
//   auto io = kj::setupAsyncIo();
//   TFD_ASSIGN_OR_RETURN(auto c, Client::Connect(io, "localhost:2222", token, 10s));
//   TFD_RETURN_IF_ERROR(c->CreateSession(graph));
//   TFD_ASSIGN_OR_RETURN(auto out, c->Run({}, {"c"}, {}, {}));
//
// Thread-safety: one thread, the one that owns `io`.
#pragma once

#include <kj/async-io.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_spec.h"
#include "common/graph_def.h"
#include "common/step_stats.h"
#include "common/tensor.h"
#include "daemon/checkpoint/checkpoint_info.h"
#include "daemon/rpc/connection.h"
#include "daemon/rpc/tls.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

// What a task's data plane did since it started, and holds now.
struct DataPlaneInfo {
  std::string transports;
  uint64_t pushes_sent = 0, bytes_sent = 0, pushes_received = 0, bytes_received = 0;
  uint64_t pushes_refused = 0, held_back = 0, pushes_abandoned = 0;
  uint64_t bytes_held = 0;  // received tensors alive now
  uint32_t steps_held = 0;  // steps with tensors or waiters in the rendezvous
  uint64_t steps_served = 0;  // partitions run for masters over the step channel
};

struct TaskStatusInfo {
  std::string task, address;
  double uptime_seconds = 0;
  uint32_t sessions = 0, registered_graphs = 0, variables = 0;
  int64_t pid = 0;
  // Random at the task's start: another value means it restarted. 0 from a
  // tfd that predates incarnations.
  uint64_t incarnation = 0;
  // Its variables came from its own checkpoint at start and the cluster has
  // not been restored with it since (schemas/rpc.capnp, TaskStatus).
  bool restored_alone = false;
  // "/job:../device:CPU:0", then "/job:../device:GPU:i: description" per GPU.
  std::vector<std::string> devices;
  DataPlaneInfo data_plane;
};

struct VariableDescription {
  std::string name;
  DType dtype = DType::kInvalid;
  PartialShape shape;
  bool initialized = false;
  std::string device;
  // A shard of a partitioned variable: its SaveSliceInfo text
  // (common/save_slice_info.h); "" for any other.
  std::string slice;
};

class Client {
 public:
  using Feeds = std::vector<std::pair<std::string, Tensor>>;
  struct RunOptions {
    std::chrono::milliseconds timeout{0};  // 0: the session's default
    bool trace = false;
    bool input_pipeline = false;  // schemas/rpc.capnp, RunOptions.inputPipeline
  };
  struct RunOutput {
    // Large ones view the frame they came in without a copy and keep only
    // its memory: they may outlive this client and go on any thread.
    std::vector<Tensor> fetches;
    StepStats stats;
    // Tasks of the step that restarted since the session last ran there
    // (schemas/rpc.capnp, Session.run): their state may have gone back.
    std::vector<std::string> restarted;
  };

  // Connects and logs in, retrying while the task is not up. `timeout`
  // bounds all of it — resolving, connecting, logging in, every retry — so a
  // task that accepts and never answers costs `timeout`, then UNAVAILABLE
  // saying how far the last attempt got. A refused token is UNAUTHENTICATED
  // at once.
  //
  // With `tls` the connection is a TLS client (daemon/rpc/tls.h) that shows
  // its certificate and checks the task's against the CA and `target`'s
  // host; a refused handshake is UNAUTHENTICATED at once, naming TLS.
  // A login answered with a cluster spec that does not parse is INTERNAL.
  static StatusOr<std::unique_ptr<Client>> Connect(kj::AsyncIoContext& io, const std::string& target,
                                                   const std::string& token,
                                                   std::chrono::milliseconds timeout,
                                                   std::shared_ptr<Tls> tls = nullptr);
  Client(kj::AsyncIoContext& io, kj::Own<RpcConnection> connection, proto::Master::Client master,
         proto::Worker::Client worker, std::string task, ClusterSpec cluster);
  ~Client();

  const std::string& task() const { return task_; }
  // The cluster the task runs in, as it told us at login.
  const ClusterSpec& cluster() const { return cluster_; }
  // Each wait for an answer polls for up to `budget` after its last event
  // before it sleeps (daemon/rpc/spin_wait.h): the waits of a task's own
  // event loop, when this client runs in that task's process
  // (TaskHost::LocalClient, with the task's --spin-wait-us). 0, the default,
  // sleeps at once.
  void set_spin_wait(std::chrono::microseconds budget) { spin_wait_ = budget; }

  Status CreateSession(const GraphDef& graph, std::chrono::milliseconds step_timeout = {});
  // A feed larger than one Cap'n Proto message field holds (2^29 - 1 bytes,
  // or as many strings) is INVALID_ARGUMENT naming it and the limit, before
  // anything is sent.
  StatusOr<RunOutput> Run(const Feeds& feeds, const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets, const RunOptions& options);
  // Closes the session (TF1's Session.close): its steps still running end
  // CANCELLED, on every task, before it answers, which a task that answers
  // at all does within 2 s; DEADLINE_EXCEEDED after 4 s (a task stopped or
  // hung: its session ends when this client's connection goes).
  Status CloseSession();
  // Only sends the close, for a caller already waiting on this client's
  // loop for another call of the session (a run it means to cancel): the
  // promise resolves when the task has closed it.
  kj::Promise<void> SendClose();

  // TensorFlow's callable: a signature of runs the master prepares once.
  // Each RunCallable sends only the feeds' values, in MakeCallable's order,
  // and returns the fetches in its order. A handle lives until
  // ReleaseCallable or the next CreateSession; after CloseSession its runs
  // are FAILED_PRECONDITION.
  //
  //   TFD_ASSIGN_OR_RETURN(auto step, c->MakeCallable({"x:0"}, {"loss:0"}, {"train"}));
  //   for (...) TFD_ASSIGN_OR_RETURN(auto out, c->RunCallable(step, {batch}, {}));
  using CallableHandle = int64_t;
  StatusOr<CallableHandle> MakeCallable(const std::vector<std::string>& feeds,
                                        const std::vector<std::string>& fetches,
                                        const std::vector<std::string>& targets);
  StatusOr<RunOutput> RunCallable(CallableHandle callable, const std::vector<Tensor>& feeds,
                                  const RunOptions& options);
  // INVALID_ARGUMENT for a handle this client did not make or already released.
  Status ReleaseCallable(CallableHandle callable);

  // Every task of the cluster answering, each task's status in cluster
  // order; DEADLINE_EXCEEDED naming those that did not answer in time, or,
  // at once, the code of a refusal (UNAUTHENTICATED: another token) when
  // every task that did not answer refused for good.
  StatusOr<std::vector<TaskStatusInfo>> WaitCluster(std::chrono::milliseconds timeout);
  Status WaitInitialized(const std::vector<std::string>& names, std::chrono::milliseconds timeout);
  // Which of `names` (with none, every variable) no task of the cluster
  // holds initialized, asking each task once; UNAVAILABLE naming the tasks
  // that did not answer within `timeout`, which may hold one initialized.
  StatusOr<std::vector<std::string>> ReportUninitialized(const std::vector<std::string>& names,
                                                         std::chrono::milliseconds timeout);
  StatusOr<TaskStatusInfo> GetStatus(std::chrono::milliseconds timeout);
  StatusOr<std::vector<VariableDescription>> ListVariables(std::chrono::milliseconds timeout);
  StatusOr<std::pair<VariableDescription, Tensor>> ReadVariable(const std::string& name,
                                                                std::chrono::milliseconds timeout);

  // Cluster checkpoints, through this task's master, which asks every task of
  // the cluster: one entry per task, in cluster order; a task without a
  // --checkpoint-dir has an empty `directory` and was skipped. Fails naming
  // each task that failed; FAILED_PRECONDITION when no task has a checkpoint
  // dir. `timeout` bounds the whole fan-out.
  //
  //   TFD_RETURN_IF_ERROR(client.SaveCheckpoint(global_step, 60s).status());
  //
  // Saves every task's initialized variables at `step` (>= 0), or without one
  // at the value of the variable `global_step` (0 when no task holds it).
  StatusOr<std::vector<TaskCheckpoints>> SaveCheckpoint(std::optional<int64_t> step,
                                                        std::chrono::milliseconds timeout);
  // Restores `step` on every task, or with kLatestCheckpoint the newest step
  // that verifies on all of them. A damaged file is DATA_LOSS naming it,
  // and so is a latest restore where no step verifies on every task.
  static constexpr int64_t kLatestCheckpoint = -1;
  StatusOr<std::vector<TaskCheckpoints>> RestoreCheckpoint(int64_t step,
                                                           std::chrono::milliseconds timeout);
  // Every task's checkpoints, oldest first, each file verified unless
  // `verify` is false (then a cheap look: which tasks keep checkpoints).
  StatusOr<std::vector<TaskCheckpoints>> ListCheckpoints(std::chrono::milliseconds timeout,
                                                         bool verify = true);

 private:
  // A tensor of a reply: it views the reply's frame when it can, else it is
  // copied out; either way it holds nothing of the connection. A client in
  // the task's own process (no connection: TaskHost::LocalClient) has no
  // frames; its tensors view the reply itself, `reply`.
  StatusOr<Tensor> FetchedTensor(proto::Tensor::Reader t, std::shared_ptr<void> reply) const;
  // Waits for `p` at most `timeout` (plus a margin for the server's own deadline).
  template <typename T>
  StatusOr<T> Wait(kj::Promise<T> p, std::chrono::milliseconds timeout, const char* what);
  Status WaitVoid(kj::Promise<void> p, std::chrono::milliseconds timeout, const char* what);

  kj::AsyncIoContext& io_;
  std::chrono::microseconds spin_wait_{0};
  kj::Own<RpcConnection> connection_;
  proto::Master::Client master_;
  proto::Worker::Client worker_;
  kj::Maybe<proto::Session::Client> session_;
  std::map<CallableHandle, proto::Callable::Client> callables_;
  CallableHandle next_callable_ = 1;
  std::chrono::milliseconds step_timeout_{30000};
  std::string task_;
  ClusterSpec cluster_;
};

}  // namespace tfd
