// Reading NumPy .npy files, for `tfctl run --feed NAME=@file.npy`.
//
// Accepts format versions 1.0, 2.0 and 3.0, C order, little-endian
// float32/float64/int32/int64 ('<f4' '<f8' '<i4' '<i8'), uint8 ('|u1') and
// bool ('|b1'). Anything else — Fortran order, another dtype, a truncated or
// over-long body, a malformed header — is INVALID_ARGUMENT naming the file
// and what is wrong; nothing is allocated before the body's length has been
// checked against the header's shape.
//
//   TFD_ASSIGN_OR_RETURN(Tensor t, ReadNpy("x.npy"));
//
// Thread-safety: plain functions.
#pragma once

#include <string>
#include <string_view>

#include "common/tensor.h"

namespace tfd::cli {

// Files larger than this are refused before being read.
inline constexpr size_t kMaxNpyFileBytes = size_t{1} << 32;

// `source` names the input in messages.
StatusOr<Tensor> ParseNpy(std::string_view bytes, const std::string& source);
StatusOr<Tensor> ReadNpy(const std::string& path);

}  // namespace tfd::cli
