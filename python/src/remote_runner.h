// RemoteRunner: a tfd.Session that drives a tfd task's master over Cap'n
// Proto, as `tfctl submit` does, and LoopThread, the event-loop thread each
// of its connections lives on. It sends the graph of a GraphBuilder again
// (a new session on the master) when the graph has grown since the last
// run, so a Python program may add ops between runs as TF1's do.
//
//   RemoteRunner s("localhost:2222", "", TlsFiles{}, /*timeout_s=*/30);
//   py::list out = s.Run(graph, {{"x", array}}, {"y"}, {}, /*timeout_s=*/0);
//
// Thread-safety: Python threads may share one, as TF1's sessions: each
// releases the GIL while its step runs, and the steps of several threads
// run at once, on connections of their own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <kj/async-io.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "common/mutex.h"
#include "common/thread_annotations.h"
#include "daemon/client/client.h"
#include "daemon/rpc/tls.h"
#include "python/src/graph_builder.h"
#include "python/src/session_common.h"

namespace tfd::python {

// A thread that owns a KJ event loop and runs jobs on it, one at a time: a
// Client must be used from the thread that made its loop, and a Python
// program may hold several sessions (KJ allows one loop per thread).
class LoopThread {
 public:
  LoopThread();
  ~LoopThread();  // runs the jobs queued, then joins
  // Runs `job` on the loop thread and waits for it. The caller waits
  // without the GIL; every job's own calls have deadlines (Client's).
  // With `interrupted`, the wait asks it every kSignalPoll until it
  // answers true (once): it is how the waiting thread learns of a signal.
  void Call(std::function<void(kj::AsyncIoContext&)> job,
            const std::function<bool()>& interrupted = nullptr);

 private:
  void Loop();

  Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void(kj::AsyncIoContext&)>> jobs_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// A tfd.Session on a task: the calls of several Python threads at once,
// each on a connection of its own (a Lane, below) while the others are
// busy, as TF1's sessions run the steps of several threads at once.
class RemoteRunner {
 public:
  // Connects to `target` ("host:port"), logging in with the token in
  // `token_file` ("" for none; else TFD_AUTH_TOKEN_FILE) and TLS from the
  // three files (all or none; else TFD_TLS_*). `timeout_s` bounds the
  // connection and each call but a step's. A step's own timeout bounds the
  // whole call, its wait for a free connection too (when threads hold all
  // kMaxLanes); a step given none waits `timeout_s` at most for one.
  RemoteRunner(const std::string& target, const std::string& token_file, const TlsFiles& tls,
               double timeout_s);
  ~RemoteRunner();

  pybind11::list Run(const GraphBuilder& graph, const PyFeeds& feeds,
                     const std::vector<std::string>& fetches,
                     const std::vector<std::string>& targets, double timeout_s);
  // Run, traced on every task of the step: (the fetches, what each node
  // ran: StatsToPython).
  pybind11::tuple RunTraced(const GraphBuilder& graph, const PyFeeds& feeds,
                            const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets, double timeout_s);
  // TF's callable: the master prepares the step once per connection, and
  // each RunCallable sends only the feeds' values (in `feeds`' order). It
  // runs on a free connection, preferring one where it is prepared; on
  // another (its own busy with another thread's step, or the graph sent
  // again there after ops were added) it is prepared again first, so a
  // callable, as TF1's, outlives the graph's growth and never waits for an
  // unrelated step. An `input_pipeline` callable's steps are the input
  // pipeline's (a queue runner's enqueue): checkpoints do not wait for them
  // (schemas/rpc.capnp, RunOptions.inputPipeline).
  int64_t MakeCallable(const GraphBuilder& graph, const std::vector<std::string>& feeds,
                       const std::vector<std::string>& fetches,
                       const std::vector<std::string>& targets, bool input_pipeline);
  pybind11::list RunCallable(int64_t handle, const std::vector<pybind11::array>& feeds,
                             double timeout_s);
  // Cluster checkpoints through the master (Client::SaveCheckpoint,
  // RestoreCheckpoint): save at `step`, or at global_step's value when
  // negative; restore `step`, or the newest that verifies on every task when
  // negative. One (task, directory, [(step, path)]) per task.
  pybind11::list SaveCheckpoint(int64_t step);
  pybind11::list RestoreCheckpoint(int64_t step);
  // Waits until every variable of `names` (VariableV2 node names) is
  // initialized on the cluster (Client::WaitInitialized, what `tfctl wait
  // init` does); DEADLINE_EXCEEDED naming them after `timeout_s`.
  void WaitInitialized(const std::vector<std::string>& names, double timeout_s);
  // Closes the session on the master (its state stays on the tasks), then
  // drops the connection and ends the loop thread, even when the master
  // did not answer. A step running meanwhile for another thread is
  // cancelled: its Run raises CANCELLED. Arrays fetched before stay valid:
  // they hold only the frames they came in (Client::RunOutput).
  //
  // A signal whose Python handler raises (Ctrl-C's KeyboardInterrupt)
  // while Run or RunCallable waits on the main thread closes the session
  // the same way: the step is cancelled on the tasks, and once it has
  // ended the run raises the handler's exception. Later calls find the
  // session closed.
  void Close();
  const std::string& task() const { return task_; }

 private:
  // One connection to the master, with a session of its own there and a
  // loop thread: the calls of one Python thread at a time. A call that
  // finds every lane held by another thread's call (a step blocked in a
  // dequeue, say) opens another, up to kMaxLanes, so threads that share a
  // session step at once, as TF1's sessions let them; past that it waits
  // for one. Only the thread holding a lane touches its fields but the
  // close watch.
  struct Lane {
    std::unique_ptr<LoopThread> loop;  // null once released
    std::unique_ptr<Client> client;    // made, used and dropped on loop only
    int synced_nodes = -1;             // the graph its session holds; -1: no session
    Mutex close_mu;
    // Set while a step's call waits on the loop (WatchForClose).
    kj::Own<kj::CrossThreadPromiseFulfiller<void>> close_signal GUARDED_BY(close_mu);
    bool closing GUARDED_BY(close_mu) = false;
  };
  static constexpr size_t kMaxLanes = 16;

  // A lane no other call holds: an idle one (one `prefer` says yes to if
  // any; null: any), else a new one, else the first to come free. Without
  // the GIL; `prefer` is asked holding lanes_mu_.
  // With `interruptible`, Python's signal handlers run every kSignalPoll
  // while it waits: null, the session closing and the exception kept in
  // `raised`, when one raised. FAILED_PRECONDITION once closed;
  // DEADLINE_EXCEEDED when none came free by `deadline`.
  using LanePreference = std::function<bool(const Lane*)>;
  StatusOr<Lane*> Acquire(const LanePreference& prefer,
                          std::chrono::steady_clock::time_point deadline,
                          std::optional<pybind11::error_already_set>* raised);
  void Return(Lane* lane);
  StatusOr<std::unique_ptr<Lane>> OpenLane();
  // Runs `job` on a lane held (the Client of its loop), waiting without the
  // GIL, for a lane until `deadline`; the step's calls (`interruptible`) as
  // Close describes for signals.
  void OnLane(const LanePreference& prefer, std::chrono::steady_clock::time_point deadline,
              bool interruptible, const std::function<void(Lane&, kj::AsyncIoContext&)>& job);
  // When a call given `timeout` (0: none, the session's timeout bounds its
  // wait for a lane) must have a lane.
  std::chrono::steady_clock::time_point LaneDeadline(std::chrono::milliseconds timeout) const;
  // Drops a lane's client on its loop, then ends the thread; once.
  static void Release(Lane& lane);
  // Has every lane's loop send its session's close for a step waiting on
  // it (Close, a signal); every later call is refused.
  void BeginCloseAll();
  static void BeginClose(Lane& lane);
  // On the loop thread, around a step's call: until EndWatchForClose, a
  // BeginClose on another thread has the loop send the session's close
  // while the call waits. Keep `watch` until the call has returned.
  // FAILED_PRECONDITION once the close has begun: the step is not sent.
  static Status WatchForClose(Lane& lane, kj::Promise<void>& watch);
  static void EndWatchForClose(Lane& lane);
  // On the loop thread, holding `lane`: a new session on its master when
  // `graph` (`nodes` long, read by the caller with the GIL) grew since the
  // lane last sent it, the GIL taken only then. Whether it sent one; the
  // lane's synced_nodes follow.
  static StatusOr<bool> SyncGraph(Lane& lane, const GraphBuilder& graph, int nodes);

  Client::RunOutput Step(const GraphBuilder& graph, const PyFeeds& feeds,
                         const std::vector<std::string>& fetches,
                         const std::vector<std::string>& targets, double timeout_s, bool trace);
  // Raises FAILED_PRECONDITION once Close has run.
  void CheckOpen() const;

  const std::string target_, token_file_;
  const TlsFiles tls_;
  std::chrono::milliseconds timeout_;
  Mutex lanes_mu_;
  std::condition_variable lane_free_;
  std::vector<std::unique_ptr<Lane>> lanes_ GUARDED_BY(lanes_mu_);
  std::vector<Lane*> idle_ GUARDED_BY(lanes_mu_);
  size_t opening_ GUARDED_BY(lanes_mu_) = 0;
  bool lanes_closed_ GUARDED_BY(lanes_mu_) = false;
  // A callable: what it runs, and its handle on each lane it was prepared
  // on, with the graph that lane's session held then (its synced_nodes).
  struct Callable {
    std::vector<std::string> feeds, fetches, targets;
    bool input_pipeline = false;
    Mutex mu;
    std::map<const Lane*, std::pair<int, Client::CallableHandle>> on GUARDED_BY(mu);
  };
  // On the loop thread, holding `lane`: `c`'s handle there, preparing it
  // (sending the graph, `nodes` long, first) when the lane has none for its
  // session.
  static StatusOr<Client::CallableHandle> PreparedOn(Lane& lane, Callable& c,
                                                     const GraphBuilder& graph, int nodes);
  std::map<int64_t, std::shared_ptr<Callable>> callables_;  // with the GIL
  int64_t next_callable_ = 0;
  bool closed_ = false;  // with the GIL
  std::string task_;
  const GraphBuilder* graph_ = nullptr;  // the graph sent, to refuse another
};

}  // namespace tfd::python
