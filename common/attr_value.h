// Typed node attributes, as held in memory (the file form is
// proto::AttrValue in schemas/graph.capnp; common/graph_io converts).
//
//   AttrValue v = int64_t{3};
//   const int64_t* i = std::get_if<int64_t>(&v);
//
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "common/dtype.h"
#include "common/shape.h"
#include "common/tensor.h"

namespace tfd {

// An empty list in a file carries no element kind; it converts to any list.
struct EmptyList {
  bool operator==(const EmptyList&) const { return true; }
};

using AttrValue = std::variant<std::string, int64_t, double, bool, DType, PartialShape, Tensor,
                               std::vector<std::string>, std::vector<int64_t>,
                               std::vector<double>, std::vector<bool>, std::vector<DType>,
                               std::vector<PartialShape>, std::vector<Tensor>, EmptyList>;

using AttrMap = std::map<std::string, AttrValue>;

// The attr-type name of a value as op definitions spell it: "string", "int",
// "float", "bool", "type", "shape", "tensor", "list(int)", ..., "list(?)".
std::string AttrTypeName(const AttrValue& v);

// Short human form for `tfctl graph show` and error messages.
std::string AttrValueToString(const AttrValue& v);

}  // namespace tfd
