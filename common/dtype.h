// Element types of tensors, and the compile-time table that names them.
//
//   DType d = DTypeFromName("float32").value();   // DType::kFloat32
//   size_t n = DTypeSize(d);                       // 4
//   TFD_SWITCH_NUMERIC(d, T, { sum += t.flat<T>().sum(); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tfd {

// Values match proto::DType in schemas/tensor.capnp.
enum class DType : uint8_t {
  kInvalid = 0,
  kFloat32,
  kFloat64,
  kInt32,
  kInt64,
  kUInt8,
  kBool,
  kString,
};
inline constexpr int kNumDTypes = 8;

// "float32", "int64", "string", ...
std::string_view DTypeName(DType d);
std::optional<DType> DTypeFromName(std::string_view name);
// Bytes per element; sizeof(std::string) for kString (held as objects).
size_t DTypeSize(DType d);
bool IsFloating(DType d);
bool IsInteger(DType d);  // int32, int64, uint8
bool IsNumeric(DType d);  // floating or integer

// Maps a C++ element type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<std::string> { static constexpr DType value = DType::kString; };

}  // namespace tfd

// Runs BODY with TYPE bound to the C++ type of dtype DT. The *_NUMERIC forms
// cover float32/float64/int32/int64/uint8, *_FLOAT float32/float64; for any
// other dtype they run DEFAULT (a statement, e.g. `return errors::...;`).
#define TFD_DTYPE_CASE(DT_ENUM, CTYPE, TYPE, BODY) \
  case ::tfd::DType::DT_ENUM: {                    \
    using TYPE = CTYPE;                            \
    BODY;                                          \
    break;                                         \
  }

#define TFD_SWITCH_FLOAT(DT, TYPE, BODY, DEFAULT)          \
  switch (DT) {                                            \
    TFD_DTYPE_CASE(kFloat32, float, TYPE, BODY)            \
    TFD_DTYPE_CASE(kFloat64, double, TYPE, BODY)           \
    default: { DEFAULT; }                                  \
  }

#define TFD_SWITCH_NUMERIC(DT, TYPE, BODY, DEFAULT)        \
  switch (DT) {                                            \
    TFD_DTYPE_CASE(kFloat32, float, TYPE, BODY)            \
    TFD_DTYPE_CASE(kFloat64, double, TYPE, BODY)           \
    TFD_DTYPE_CASE(kInt32, int32_t, TYPE, BODY)            \
    TFD_DTYPE_CASE(kInt64, int64_t, TYPE, BODY)            \
    TFD_DTYPE_CASE(kUInt8, uint8_t, TYPE, BODY)            \
    default: { DEFAULT; }                                  \
  }

// Numeric dtypes plus bool.
#define TFD_SWITCH_POD(DT, TYPE, BODY, DEFAULT)            \
  switch (DT) {                                            \
    TFD_DTYPE_CASE(kFloat32, float, TYPE, BODY)            \
    TFD_DTYPE_CASE(kFloat64, double, TYPE, BODY)           \
    TFD_DTYPE_CASE(kInt32, int32_t, TYPE, BODY)            \
    TFD_DTYPE_CASE(kInt64, int64_t, TYPE, BODY)            \
    TFD_DTYPE_CASE(kUInt8, uint8_t, TYPE, BODY)            \
    TFD_DTYPE_CASE(kBool, bool, TYPE, BODY)                \
    default: { DEFAULT; }                                  \
  }

// Every dtype but kInvalid.
#define TFD_SWITCH_ALL(DT, TYPE, BODY, DEFAULT)            \
  switch (DT) {                                            \
    TFD_DTYPE_CASE(kFloat32, float, TYPE, BODY)            \
    TFD_DTYPE_CASE(kFloat64, double, TYPE, BODY)           \
    TFD_DTYPE_CASE(kInt32, int32_t, TYPE, BODY)            \
    TFD_DTYPE_CASE(kInt64, int64_t, TYPE, BODY)            \
    TFD_DTYPE_CASE(kUInt8, uint8_t, TYPE, BODY)            \
    TFD_DTYPE_CASE(kBool, bool, TYPE, BODY)                \
    TFD_DTYPE_CASE(kString, std::string, TYPE, BODY)       \
    default: { DEFAULT; }                                  \
  }
