// A tf.train.Example read straight from its protobuf wire bytes, for
// ParseExample (parsing_ops.cc): TF1's record format for features, written
// by TFRecordWriter and read by TFRecordReader. Only the schema's own
// fields are understood (Example.features, Features.feature, a Feature's
// bytes_list / float_list / int64_list, packed or not); unknown fields are
// skipped as protobuf skips them.
//
//   TFD_ASSIGN_OR_RETURN(auto features, ParseExampleProto(bytes));
//   const ExampleFeature& age = features["age"];   // age.ints
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tfd::kernels::io {

struct ExampleFeature {
  enum class Kind { kNone, kBytes, kFloat, kInt64 };
  Kind kind = Kind::kNone;  // kNone: a Feature with no list set
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

// The features of one serialized Example, by name (a name given twice: the
// last, as protobuf's maps). INVALID_ARGUMENT for bytes that are not an
// Example: a truncated field, a length past the end, a bad varint, a group.
StatusOr<std::map<std::string, ExampleFeature>> ParseExampleProto(std::string_view bytes);

}  // namespace tfd::kernels::io
