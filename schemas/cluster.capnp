# The cluster: job name -> ordered task addresses ("host:port").
# Users write it as JSON or TF_CONFIG; this is its form between processes.
@0x8c28e97761fb96f2;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("tfd::proto");

struct ClusterSpec {
  jobs @0 :List(Job);

  struct Job {
    name @0 :Text;
    tasks @1 :List(Text);   # index = task id
  }
}
