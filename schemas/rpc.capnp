# The services a tfd task offers its peers and clients.
#
# A connection's bootstrap capability is a Gate: it offers nothing but
# `login`. With an auth token configured the token must match; without one
# any token (or none) is accepted. Sessions and registered graphs are
# capabilities, so a client or master that disappears releases what it held.
#
# Errors cross the wire as exceptions whose description starts with
# "CODE: ", after the error's details when it has any (daemon/rpc/
# kj_status.h converts both ways).
@0x94381dfc15e7e6c1;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("tfd::proto");

using Graph = import "graph.capnp";
using T = import "tensor.capnp";
using Transport = import "transport.capnp";
using Trace = import "trace.capnp";

interface Gate {
  # `peer` is the task logging in ("/job:J/replica:0/task:T"), empty for a
  # client. A task is given a data-plane invitation with its services, so it
  # can push tensors to the task answering (daemon/transport/data_plane.h).
  # `protocol` is the peer protocol the task speaks (kPeerProtocol,
  # daemon/distributed/peers.h; 0 from a tfd older than the field): a task
  # of another one is refused with FAILED_PRECONDITION. Clients send none.
  login @0 (token :Data, peer :Text, protocol :UInt32) -> (services :Services);
}

struct Services {
  master @0 :Master;
  worker @1 :Worker;
  task @2 :Text;   # "/job:J/replica:0/task:T" of the task answering
  dataPlane @3 :Transport.DataPlaneInvitation;   # for a peer task; unset for clients
  cluster @4 :Text;   # the cluster spec the task runs in, as JSON (common/cluster_spec.h)
  # Drawn at random when the task starts: another value means it restarted
  # (and its variables, queues and input are what it restored, if anything).
  incarnation @5 :UInt64;
  # The peer protocol of the task answering (as in login): a task logging
  # in refuses one of another protocol with FAILED_PRECONDITION.
  protocol @6 :UInt32;
}

# Runs sessions; lives on every task (the task a client talks to is its master).
interface Master {
  createSession @0 (graph :Graph.GraphDef, options :SessionOptions) -> (session :Session);
  # Every task in the cluster reachable, or DEADLINE_EXCEEDED naming those
  # that are not (at once a refusal's code, UNAUTHENTICATED or NOT_FOUND,
  # when every task that is not refused for good). Answers with each task's
  # status, in cluster order: its incarnation tells a caller which tasks
  # restarted since it last asked.
  waitCluster @1 (timeoutMs :Int64) -> (tasks :List(TaskStatus));
  # All variables named (or, when `names` is empty, all variables on every
  # task) initialized, or DEADLINE_EXCEEDED naming those that are not.
  waitInitialized @2 (names :List(Text), timeoutMs :Int64) -> ();

  # Checkpoints of the cluster: each call fans out to every task and answers
  # for each; a task without a --checkpoint-dir answers with an empty
  # `directory` (skipped). FAILED_PRECONDITION when no task has one; any
  # task's failure fails the call naming it. docs/checkpoint_format.md.
  # save: at `step`, or (hasStep false) at the value of the variable
  # `global_step` on whichever task holds it, else 0.
  saveCheckpoint @3 (step :Int64, hasStep :Bool, timeoutMs :Int64) -> (tasks :List(TaskCheckpoints));
  # restore: `step`, or (-1) the newest step that verifies on every task with a dir.
  restoreCheckpoint @4 (step :Int64, timeoutMs :Int64) -> (tasks :List(TaskCheckpoints));
  # list: every task's checkpoints, oldest first, each verified unless
  # `verify` is false (then only named: a cheap look at who keeps checkpoints).
  listCheckpoints @5 (timeoutMs :Int64, verify :Bool = true) -> (tasks :List(TaskCheckpoints));

  # Which of the variables named no task holds initialized (TF1's
  # report_uninitialized_variables, across the cluster): each is either
  # uninitialized or nowhere yet. Every task is asked once; a task that does
  # not answer by the deadline may hold one of them initialized, so the
  # call then fails (UNAVAILABLE naming it) rather than call it uninitialized.
  reportUninitialized @6 (names :List(Text), timeoutMs :Int64) -> (names :List(Text));
}

struct SessionOptions {
  stepTimeoutMs @0 :Int64;   # 0: the daemon's default
}

interface Session {
  extend @0 (graph :Graph.GraphDef) -> ();
  # `restarted`: tasks this session found restarted (a new incarnation) when
  # it registered a graph there again, named once, by the first run to
  # succeed after; the runs went on on the new task, whose state may have
  # gone back to a checkpoint, or to nothing.
  run @1 (feeds :List(NamedTensor), fetches :List(Text), targets :List(Text),
          options :RunOptions)
      -> (fetches :List(NamedTensor), trace :List(Trace.NodeTrace), restarted :List(Text));
  close @2 () -> ();
  # TensorFlow's callable: one signature of runs, checked and prepared once,
  # then run with only the feeds' values. NOT_FOUND names a feed, fetch or
  # target that is not in the graph; INVALID_ARGUMENT a malformed name or a
  # feed named twice.
  makeCallable @3 (feeds :List(Text), fetches :List(Text), targets :List(Text))
      -> (callable :Callable);
}

# A prepared signature of its session's runs. Each run sends the feeds'
# values in makeCallable's order and gets the fetches back in its order; the
# first run places and registers the partitions, later ones reuse them.
# Dropping the capability releases it; after the session's close a run is
# FAILED_PRECONDITION. It keeps its session alive while held.
interface Callable {
  # `restarted` as in Session.run.
  run @0 (feeds :List(T.Tensor), options :RunOptions)
      -> (fetches :List(T.Tensor), trace :List(Trace.NodeTrace), restarted :List(Text));
}

struct RunOptions {
  timeoutMs @0 :Int64;   # 0: the session's default
  trace @1 :Bool;
  # A step of the input pipeline (a queue runner's enqueue): a checkpoint of
  # the cluster neither holds it nor waits for it to end, as it may wait on
  # a full queue while training pauses (daemon/distributed/step_gate.h).
  inputPipeline @2 :Bool;
}

struct NamedTensor {
  name @0 :Text;
  tensor @1 :T.Tensor;
}

# Runs partitions of steps; lives on every task.
interface Worker {
  # Tensors between tasks do not travel here: a _Send pushes its tensor to
  # the consumer's task over the data plane (daemon/transport/).
  # `master`: the task whose master session registers the graph; its steps
  # belong to that replica (a sync accumulator counts one gradient per
  # replica and update). `session`: that session, unique across tasks and
  # their incarnations; the graphs one session registers here share one
  # presence, alive until the last is released (a dataset's cursor is read
  # by one session at a time). Both are required: `master` is another task
  # of the cluster, which this task then reaches over the data plane to
  # answer its runs (UNAVAILABLE naming it when it cannot).
  # `stepChannel` is the partition's handle on the step channel
  # (daemon/distributed/step_channel.h): `master` runs it with a data-plane
  # message, never with a call here.
  registerGraph @0 (graph :Graph.GraphDef, master :Text, session :Text)
      -> (graph :RegisteredGraph, stepChannel :UInt64);
  # Cancels the step's waits and partitions on this task with the given
  # error, and drops the tensors pushed to it for the step. `details`: the
  # error's typed details, encoded as common/status_details.h says.
  abortStep @1 (stepId :Int64, code :Text, message :Text, details :Text) -> ();
  status @2 () -> (status :TaskStatus);
  listVariables @3 () -> (variables :List(VariableInfo));
  readVariable @4 (name :Text) -> (info :VariableInfo, value :T.Tensor);
  # This task's checkpoints (daemon/checkpoint/checkpoint_manager.h). Without
  # a --checkpoint-dir the answer has an empty `directory` and nothing is done.
  # save: with `pending`, this task's part of a cluster checkpoint, which no
  # restore takes until finishCheckpoint commits it; without, a checkpoint of
  # this task alone (written, committed and pruned at once).
  saveCheckpoint @5 (step :Int64, pending :Bool) -> (result :TaskCheckpoints);
  # step -1: the newest that verifies.
  restoreCheckpoint @6 (step :Int64) -> (result :TaskCheckpoints);
  listCheckpoints @7 (verify :Bool) -> (result :TaskCheckpoints);
  # The next phase of a cluster checkpoint whose pending parts were saved
  # (docs/checkpoint_format.md): commit once every task wrote its part;
  # prune once every task committed it; discard when some task failed to
  # write its part; revert, then discard, when some task failed to commit.
  finishCheckpoint @10 (step :Int64, action :CheckpointAction) -> (result :TaskCheckpoints);
  # A cluster checkpoint's cut (daemon/distributed/step_gate.h): this task's
  # master starts no new step while the hold lasts, and answers once the
  # steps it runs have ended, or after `drainMs` with how many still run.
  # The hold is its caller's: it lasts until the caller drops `hold` (its
  # connection ending drops it too), calls releaseSteps(holdId), or cancels
  # the call before the answer, and never past `holdMs`. Both at most 10
  # minutes. (A task older than `hold` leaves it null.)
  holdSteps @8 (drainMs :Int64, holdMs :Int64)
      -> (holdId :UInt64, running :UInt32, hold :StepHold);
  releaseSteps @9 (holdId :UInt64) -> ();
}

# A hold on a task's steps (Worker.holdSteps): dropping it lets the hold go.
interface StepHold {}

# A partition registered on a task (Worker.registerGraph): held while the
# master holds the capability. It has no methods: the master runs it over
# the step channel by its registration's `stepChannel` handle.
interface RegisteredGraph {}

struct TaskStatus {
  task @0 :Text;
  address @1 :Text;
  uptimeSeconds @2 :Float64;
  sessions @3 :UInt32;
  registeredGraphs @4 :UInt32;
  variables @5 :UInt32;
  pid @6 :Int64;
  dataPlane @7 :DataPlaneStatus;
  incarnation @8 :UInt64;   # as in Services
  # Its variables came from its own newest checkpoint when it started, and
  # no restore of the cluster has put the other tasks (and every worker's
  # input) back to that checkpoint since: until one does, the cluster's
  # state is not one step's. A trainer's chief restores; the others wait.
  restoredAlone @9 :Bool;
  # Its devices, "/job:J/replica:0/task:T/device:CPU:0" first, then each
  # usable GPU as "...device:GPU:i: what it is" (name, compute capability,
  # memory, the matrix library).
  devices @10 :List(Text);
}

# The data plane's counters since the task started, and what it holds now.
struct DataPlaneStatus {
  transports @0 :Text;        # what UCX may use ("all", or UCX_TLS)
  pushesSent @1 :UInt64;
  bytesSent @2 :UInt64;
  pushesReceived @3 :UInt64;
  bytesReceived @4 :UInt64;
  pushesRefused @5 :UInt64;
  heldBack @6 :UInt64;        # pushes that waited for room
  bytesHeld @7 :UInt64;       # received tensors alive now
  stepsHeld @8 :UInt32;       # steps with tensors or waiters in the rendezvous
  pushesAbandoned @9 :UInt64; # to a same-host peer that went mid-push
  stepsServed @10 :UInt64;    # partitions run for a master over the step channel
}

struct VariableInfo {
  name @0 :Text;        # "container/name", or just the name in the default container
  dtype @1 :T.DType;
  shape @2 :T.TensorShape;
  initialized @3 :Bool;
  device @4 :Text;
  # A shard of a partitioned variable: FULL_NAME;D0,D1,...;FIRST_ROW,ROWS,
  # its rows of the whole (common/save_slice_info.h); "" for any other.
  slice @5 :Text;
}

struct CheckpointInfo {
  step @0 :Int64;
  path @1 :Text;
  bytes @2 :UInt64;
  mtimeUnixMs @3 :Int64;
  verified @4 :Bool;     # every checksum checked and right
  problem @5 :Text;      # why it does not verify, when checked and damaged
  variables @6 :UInt32;  # tensors in it
}

enum CheckpointAction {
  commit @0;   # the pending part becomes the checkpoint of its step
  prune @1;    # retention, keeping the step's checkpoint (complete everywhere)
  discard @2;  # the pending part is deleted
  revert @3;   # the checkpoint of the step, just committed here, goes back to pending
}

struct TaskCheckpoints {
  task @0 :Text;
  directory @1 :Text;                    # empty: no --checkpoint-dir, skipped
  checkpoints @2 :List(CheckpointInfo);  # save: written; restore: restored; list: all, oldest first
  skipped @3 :List(Text);                # restore of the latest: newer files passed over, "PATH: why"
  variables @4 :List(Text);              # restore: the variables assigned
  leftOut @5 :Text;                      # save, restore: why the task took no part, else empty
}
