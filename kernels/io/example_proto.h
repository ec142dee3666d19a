// A tf.train.Example (or SequenceExample) read straight from its protobuf
// wire bytes, for ParseExample (parse_example_op.cc) and the feature lists
// of parse_single_sequence_example (parse_sequence_op.cc): TF1's record
// formats for features, written by TFRecordWriter and read by
// TFRecordReader. Only the schema's own fields are understood
// (Example.features, Features.feature, a Feature's bytes_list / float_list
// / int64_list, packed or not; SequenceExample.feature_lists,
// FeatureLists.feature_list, FeatureList.feature); unknown fields are
// skipped as protobuf skips them. A SequenceExample's context is its field
// 1, a Features as an Example's is: ParseExampleProto reads it.
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
#include "common/tensor.h"

namespace tfd::kernels::io {

struct ExampleFeature {
  enum class Kind { kNone, kBytes, kFloat, kInt64 };
  Kind kind = Kind::kNone;  // kNone: a Feature with no list set
  std::vector<std::string> bytes;
  std::vector<float> floats;
  std::vector<int64_t> ints;
};

// The kind of feature a tensor of `dtype` is parsed from: float32 from a
// float_list, int64 from an int64_list, anything else from a bytes_list.
ExampleFeature::Kind FeatureKindOf(DType dtype);
// How many values `f` holds (none for kNone).
int64_t ValueCount(const ExampleFeature& f);
// f's values into `out`, of the dtype f's kind is parsed to, from element
// `at`; `out` must have room for them.
void CopyFeatureValues(const ExampleFeature& f, Tensor* out, int64_t at);

// The features of one serialized Example, by name (a name given twice: the
// last, as protobuf's maps). INVALID_ARGUMENT for bytes that are not an
// Example: a truncated field, a length past the end, a bad varint, a group.
StatusOr<std::map<std::string, ExampleFeature>> ParseExampleProto(std::string_view bytes);

// The feature lists of one serialized SequenceExample, by name, each its
// Features in order (a name given twice: the last). INVALID_ARGUMENT as
// above.
StatusOr<std::map<std::string, std::vector<ExampleFeature>>> ParseFeatureListsProto(
    std::string_view bytes);

}  // namespace tfd::kernels::io
