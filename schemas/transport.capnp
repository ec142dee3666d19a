# The data plane's wire format (daemon/transport/): what a task tells a peer
# so that the peer may push tensors to it, and the header that travels with
# each pushed tensor. The tensor's bytes are the message's payload, sent from
# the sender's buffer and received into the buffer that becomes the
# receiver's tensor; this header says what they are.
@0xd3c5a1f0b7e94c21;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("tfd::proto");

using T = import "tensor.capnp";
using Trace = import "trace.capnp";

# Given to a peer that logged in over the (authenticated) control plane.
struct DataPlaneInvitation {
  address @0 :Data;   # the receiver's UCX worker address
  ticket @1 :Data;    # every push from this peer carries it; the receiver
                      # drops pushes whose ticket it did not give out
  host @2 :Text;      # the receiver's kernel and IPC namespace: a peer with
                      # the same may reach it through shared memory
}

struct TensorPush {
  ticket @0 :Data;
  stepId @1 :Int64;
  key @2 :Text;       # the rendezvous key: "send device;recv device;edge"
  dtype @3 :T.DType;
  shape @4 :List(Int64);
  # How the payload holds the elements: raw little-endian bytes, or (for
  # strings) a serialized T.Tensor message.
  encoding @5 :Encoding;
  enum Encoding {
    raw @0;
    tensorMessage @1;
  }
  sentMicros @6 :Int64;   # wall clock at the sender, for traces
}

# The step channel (daemon/distributed/step_channel.h): a master runs a
# partition it registered on a task, and hears that it ended, with one
# data-plane message each way instead of a Cap'n Proto call. `ticket` is the
# one pushes carry; `graph` is the handle registerGraph answered with; each
# message concerns one step of one partition.
struct StepMessage {
  ticket @0 :Data;
  graph @1 :UInt64;
  stepId @2 :Int64;
  union {
    # Master to task: run it (timeoutMs 0: the task's --step-timeout),
    # tracing its nodes when `trace`.
    run :group {
      timeoutMs @3 :Int64;
      trace @7 :Bool;
    }
    # Task to master: it ended; code "OK", or the error's code and message;
    # the nodes it ran when the run asked for a trace.
    done :group {
      code @4 :Text;
      message @5 :Text;
      trace @8 :List(Trace.NodeTrace);
    }
    # Master to task: the master gave up on the step; stop the partition.
    cancel @6 :Void;
  }
}
