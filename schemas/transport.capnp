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
# It matters only to a peer that shares memory with the receiver (UCX's
# shared-memory transports); any other peer opens a stream instead.
struct DataPlaneInvitation {
  address @0 :Data;   # the receiver's UCX worker address; empty without UCX
  ticket @1 :Data;    # every push over shared memory carries it; the
                      # receiver drops pushes whose ticket it did not give out
  host @2 :Text;      # the receiver's kernel and IPC namespace: a peer with
                      # the same may reach it through shared memory
}

# The header of one pushed tensor. Over shared memory it is UCX's
# active-message header; on a stream, the meta part of a push or offer frame
# (ticket unset: the stream was authenticated when it opened).
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
  # A dead value (the untaken side of a cond): no elements, and the
  # receiver's _Recv outputs a dead value in turn. dtype and shape then say
  # bool [0], so that the payload is checked as any other (empty).
  dead @7 :Bool;
}

# The step channel (daemon/distributed/step_channel.h): a master runs a
# partition it registered on a task, and hears that it ended, with one
# data-plane message each way (daemon/transport/step_messages.h encodes and
# decodes them). `ticket` is the one pushes carry; `graph` is the handle
# registerGraph answered with; each message concerns one step of one
# partition.
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
    # the nodes it ran when the run asked for a trace. `details`: the
    # error's typed details as common/status_details.h encodes them (empty
    # for none, and from a tfd that predates them).
    done :group {
      code @4 :Text;
      message @5 :Text;
      trace @8 :List(Trace.NodeTrace);
      details @9 :Text;
    }
    # Master to task: the master gave up on the step; stop the partition.
    cancel @6 :Void;
  }
}

# A data-plane stream (daemon/transport/stream_frames.h): a connection to a
# task's own listening port, TLS when the task runs TLS, that starts with
# the stream magic and a hello instead of Cap'n Proto RPC. The opener sends
# pushes and step messages; the task answers with the welcome and with
# grants of room for large tensors.
struct StreamHello {
  version @0 :UInt32;   # the stream protocol's (stream_frames.h, kStreamVersion)
  token @1 :Data;       # the cluster's auth token, as at login
  task @2 :Text;        # "/job:J/replica:0/task:T" of the opener
}

# The task's answer to a hello: code "OK", or why the stream is refused
# (UNAUTHENTICATED, FAILED_PRECONDITION for another protocol version, ...).
struct StreamWelcome {
  code @0 :Text;
  message @1 :Text;
  version @2 :UInt32;
  eagerBytes @3 :UInt64;  # pushes up to this size go inline; larger ones are offered
}

# The task's answer to an offered tensor: room for it (code "OK"; the
# opener then sends the bytes), or why there is none.
struct StreamGrant {
  code @0 :Text;
  message @1 :Text;
}
