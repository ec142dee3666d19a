// Values written on the command line, for `tfctl run --feed NAME=VALUE`.
//
// VALUE is a scalar (3, 2.5, true, "text"), a nested list ([[1, 2], [3, 4]],
// its shape inferred; ragged lists are refused), or either with a dtype
// prefix (float64:[1, 2]). Without a prefix the dtype is the one the fed node
// declares when that is known, else inferred: string for quoted text, bool
// for true/false, float32 when any number has a '.' or an exponent, int32
// otherwise. The non-finite floats are inf, infinity and nan in any case,
// signed or not, bare or quoted: so the "inf", "-inf" and "nan" of tfctl's
// JSON output (cli/output.h) read back, in a list beside numbers or into a
// float dtype (quoted and alone, without a float dtype, they are text).
// `NAME=@path.npy` reads a NumPy file instead (cli/npy.h).
//
//   TFD_ASSIGN_OR_RETURN(FeedArg f, SplitFeed("x=[1, 2]"));
//   TFD_ASSIGN_OR_RETURN(Tensor t, ParseFeedValue(f.value, DType::kFloat32));
//
// Thread-safety: plain functions.
#pragma once

#include <string>

#include "common/tensor.h"

namespace tfd::cli {

struct FeedArg {
  std::string name;   // "x" or "x:1"
  std::string value;  // the text after '=', or the path after "=@"
  bool from_file = false;
};

// Splits at the first '='; INVALID_ARGUMENT when there is none or either side is empty.
StatusOr<FeedArg> SplitFeed(const std::string& arg);

// The tensor `text` denotes; `declared` is the dtype the fed node declares, or
// kInvalid when unknown. INVALID_ARGUMENT says what is wrong and where.
StatusOr<Tensor> ParseFeedValue(const std::string& text, DType declared);

}  // namespace tfd::cli
