// The size arithmetic behind the limits: overflow-safe byte counts and the
// way messages print them.
#include "common/size_limits.h"

#include <catch2/catch.hpp>

#include <limits>

#include "common/shape.h"

namespace tfd {
namespace {

TEST_CASE("TensorBytes counts elements times the dtype's size, saturating") {
  CHECK(TensorBytes(DType::kFloat32, 250000000) == 1000000000);
  CHECK(TensorBytes(DType::kFloat64, 0) == 0);
  CHECK(TensorBytes(DType::kString, 2) == 2 * sizeof(std::string));
  // A count whose bytes do not fit in 64 bits passes every limit.
  CHECK(TensorBytes(DType::kFloat64, std::numeric_limits<int64_t>::max()) ==
        std::numeric_limits<uint64_t>::max());
}

TEST_CASE("FormatBytes prints binary units") {
  CHECK(FormatBytes(512) == "512 bytes");
  CHECK(FormatBytes(1048575) == "1048575 bytes");
  CHECK(FormatBytes(uint64_t{64} << 20) == "64 MiB");
  CHECK(FormatBytes(1000000000) == "953.7 MiB");
  CHECK(FormatBytes(16000000000) == "14.9 GiB");
  CHECK(FormatBytes(std::numeric_limits<uint64_t>::max()) == "16 EiB");
}

TEST_CASE("shapes whose element count overflows saturate instead of wrapping") {
  const TensorShape s({int64_t{1} << 40, int64_t{1} << 40});
  CHECK(s.num_elements() == std::numeric_limits<int64_t>::max());
  CHECK(TensorShape({int64_t{1} << 40, int64_t{1} << 40, 0}).num_elements() == 0);
  CHECK(TensorShape::Make({int64_t{1} << 40, int64_t{1} << 40}).status().code() ==
        Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd
