// A PNG file of 8-bit pixels, as TensorBoard's image tab shows a summary
// image: grayscale, grayscale with alpha, RGB or RGBA by the number of
// channels (1 to 4), rows unfiltered and deflated by zlib.
//
//   TFD_ASSIGN_OR_RETURN(std::string png, EncodePng(pixels, height, width, 3));
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace tfd::kernels::summary {

// `pixels` holds height rows of width * channels bytes. INVALID_ARGUMENT for
// a size PNG cannot hold (no rows or columns, more than 2^31 - 1 of
// either) or channels outside 1-4; INTERNAL when zlib fails.
StatusOr<std::string> EncodePng(const uint8_t* pixels, int64_t height, int64_t width, int channels);

}  // namespace tfd::kernels::summary
