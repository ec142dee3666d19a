#include "common/dtype.h"

#include <array>

namespace tfd {
namespace {

struct DTypeInfo {
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, kNumDTypes> kDTypes = {{
    {"invalid", 0},
    {"float32", sizeof(float)},
    {"float64", sizeof(double)},
    {"int32", sizeof(int32_t)},
    {"int64", sizeof(int64_t)},
    {"uint8", sizeof(uint8_t)},
    {"bool", sizeof(bool)},
    {"string", sizeof(std::string)},
}};
static_assert(static_cast<int>(DType::kString) + 1 == kNumDTypes,
              "kDTypes must list every DType");
static_assert(sizeof(bool) == 1, "bool tensors are stored one byte per element");

}  // namespace

std::string_view DTypeName(DType d) {
  const auto i = static_cast<size_t>(d);
  return i < kDTypes.size() ? kDTypes[i].name : "invalid";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (size_t i = 1; i < kDTypes.size(); ++i) {
    if (kDTypes[i].name == name) return static_cast<DType>(i);
  }
  // TensorFlow spellings, so graphs written by its users read naturally.
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  return std::nullopt;
}

size_t DTypeSize(DType d) {
  const auto i = static_cast<size_t>(d);
  return i < kDTypes.size() ? kDTypes[i].size : 0;
}

bool IsFloating(DType d) { return d == DType::kFloat32 || d == DType::kFloat64; }
bool IsInteger(DType d) {
  return d == DType::kInt32 || d == DType::kInt64 || d == DType::kUInt8;
}
bool IsNumeric(DType d) { return IsFloating(d) || IsInteger(d); }

}  // namespace tfd
