# What a traced step says about each node it ran: the answer of Session.run
# (rpc.capnp), and of the step channel (transport.capnp).
@0x8e6c412101550731;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("tfd::proto");

struct NodeTrace {
  node @0 :Text;
  op @1 :Text;
  device @2 :Text;
  startMicros @3 :Int64;
  endMicros @4 :Int64;
  thread @5 :UInt64;
  label @6 :Text;       # what the kernel noted: a transfer's bytes and peer
  threadName @7 :Text;  # "compute 2", "event loop": where `thread` ran
}
