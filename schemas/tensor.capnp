# Tensors on the wire and in files.
#
# A tensor is a dtype, a shape and its elements. Elements travel as raw
# little-endian bytes in `content` (the fast path: a receiver can alias them, a
# sender can reference its buffer), or, for hand-written graphs, as one of the
# typed value lists. As in TensorFlow, a value list shorter than the number of
# elements is padded by repeating its last value, so `floatVal = [0]` with shape
# [1000] is a thousand zeros.
@0xa52823c940931638;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("tfd::proto");

enum DType {
  invalid @0;
  float32 @1;
  float64 @2;
  int32 @3;
  int64 @4;
  uint8 @5;
  bool @6;
  string @7;
}

# A shape whose dimensions may be unknown (-1), or whose rank may be unknown.
struct TensorShape {
  dims @0 :List(Int64);
  unknownRank @1 :Bool;
}

struct Tensor {
  dtype @0 :DType;
  shape @1 :List(Int64);
  union {
    content @2 :Data;            # raw little-endian elements, numeric dtypes
    floatVal @3 :List(Float32);
    doubleVal @4 :List(Float64);
    int32Val @5 :List(Int32);
    int64Val @6 :List(Int64);
    uint8Val @7 :List(UInt8);
    boolVal @8 :List(Bool);
    stringVal @9 :List(Data);    # string dtype: one entry per element
  }
}
