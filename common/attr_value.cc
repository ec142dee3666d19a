#include "common/attr_value.h"

#include <sstream>

namespace tfd {
namespace {

template <typename T>
struct Names;
template <> struct Names<std::string> { static constexpr const char* kName = "string"; };
template <> struct Names<int64_t> { static constexpr const char* kName = "int"; };
template <> struct Names<double> { static constexpr const char* kName = "float"; };
template <> struct Names<bool> { static constexpr const char* kName = "bool"; };
template <> struct Names<DType> { static constexpr const char* kName = "type"; };
template <> struct Names<PartialShape> { static constexpr const char* kName = "shape"; };
template <> struct Names<Tensor> { static constexpr const char* kName = "tensor"; };

template <typename T>
void Show(std::ostringstream& out, const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    out << '"' << v << '"';
  } else if constexpr (std::is_same_v<T, bool>) {
    out << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, DType>) {
    out << DTypeName(v);
  } else if constexpr (std::is_same_v<T, PartialShape>) {
    out << v.ToString();
  } else if constexpr (std::is_same_v<T, Tensor>) {
    out << v.Describe() << ' ' << v.DebugString(8);
  } else {
    out << v;
  }
}

}  // namespace

std::string AttrTypeName(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, EmptyList>) {
          return "list(?)";
        } else if constexpr (requires { typename T::value_type; } &&
                             !std::is_same_v<T, std::string>) {
          return std::string("list(") + Names<typename T::value_type>::kName + ")";
        } else {
          return Names<T>::kName;
        }
      },
      v);
}

std::string AttrValueToString(const AttrValue& v) {
  std::ostringstream out;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, EmptyList>) {
          out << "[]";
        } else if constexpr (requires { typename T::value_type; } &&
                             !std::is_same_v<T, std::string>) {
          out << '[';
          bool first = true;
          for (const auto& e : x) {
            if (!first) out << ", ";
            first = false;
            Show(out, static_cast<typename T::value_type>(e));
          }
          out << ']';
        } else {
          Show(out, x);
        }
      },
      v);
  return out.str();
}

}  // namespace tfd
