# Dataflow graphs: the file format `tfctl` and `tfd` accept.
#
# A node's inputs are written as in TensorFlow: "name" (output 0 of node
# `name`), "name:port", or "^name" for a control edge. Control edges come after
# data inputs. A node's device is a partial device spec such as "/job:ps" or
# "/job:worker/task:1/cpu:0"; empty means "let placement decide".
@0xcdc05ed431652144;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("tfd::proto");

using Tensor = import "tensor.capnp";

struct GraphDef {
  nodes @0 :List(NodeDef);
  version @1 :Int32;        # unused: always 0; `versions` says who wrote the graph
  versions @2 :VersionDef;  # absent in graphs from before it: producer 0, minConsumer 0
}

# Which tfd wrote a graph and which may run it, as TensorFlow's VersionDef.
# The numbers are tfd's graph versions (common/graph_versions.h), not
# release numbers: a tfd of graph version V runs a graph when
# producer >= its oldest accepted producer, minConsumer <= V and V is not
# in badConsumers, and refuses it otherwise, naming both versions.
struct VersionDef {
  producer @0 :Int32;            # the graph version of the tfd that wrote it
  minConsumer @1 :Int32;         # the oldest graph version that may run it
  badConsumers @2 :List(Int32);  # graph versions that may not run it
}

struct NodeDef {
  name @0 :Text;
  op @1 :Text;
  inputs @2 :List(Text);
  device @3 :Text;
  attrs @4 :List(Attr);
}

struct Attr {
  name @0 :Text;
  value @1 :AttrValue;
}

struct AttrValue {
  union {
    s @0 :Text;
    i @1 :Int64;
    f @2 :Float64;
    b @3 :Bool;
    type @4 :Tensor.DType;
    shape @5 :Tensor.TensorShape;
    tensor @6 :Tensor.Tensor;
    list @7 :ListValue;
  }

  # A list attr holds one kind of element; the others stay empty.
  struct ListValue {
    s @0 :List(Text);
    i @1 :List(Int64);
    f @2 :List(Float64);
    b @3 :List(Bool);
    type @4 :List(Tensor.DType);
    shape @5 :List(Tensor.TensorShape);
    tensor @6 :List(Tensor.Tensor);
  }
}
