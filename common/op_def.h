// OpDef: what an op is — its inputs, outputs and attrs — written in the
// TensorFlow op-spec mini-language, parsed once at registration.
//
//   OpDefBuilder("MatMul")
//       .Input("a: T").Input("b: T").Output("product: T")
//       .Attr("T: {float32, float64, int32, int64}")
//       .Attr("transpose_a: bool = false")
//       .Doc("Matrix product of a and b.");
//
// Arg specs:  "name: float32" (fixed dtype), "name: T" (a type attr),
//             "name: N * T" (N inputs of type T; N an int attr),
//             "name: Ttypes" (a list(type) attr: one input per entry),
//             "name: Ref(T)" (a reference: a variable or queue, not a value).
// Attr specs: "name: TYPE [= DEFAULT]" with TYPE one of string, int, float,
//             bool, type, shape, tensor, list(X), or a dtype set "{a, b}"
//             (a type attr restricted to those); "N: int >= 1" sets a minimum.
//             Defaults use the text forms: 0, 1.5, true, "s", float32, [2, 3],
//             [?, 3], [], [float32, int32].
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/attr_value.h"
#include "common/status.h"

namespace tfd {

struct ArgDef {
  std::string name;
  DType type = DType::kInvalid;  // fixed dtype, or kInvalid when from an attr
  std::string type_attr;         // "T" in "x: T"
  std::string number_attr;       // "N" in "x: N * T"
  std::string type_list_attr;    // "Tcomponents" in "x: Tcomponents"
  bool is_ref = false;
};

struct AttrDef {
  std::string name;
  std::string type;                    // "int", "type", "list(shape)", ...
  std::optional<AttrValue> default_value;
  std::vector<DType> allowed_types;    // empty: any
  std::optional<int64_t> minimum;      // for int attrs and list lengths
};

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  bool stateful = false;  // never pruned as a duplicate, never constant-folded
  std::string doc;

  const AttrDef* FindAttr(const std::string& name) const;
};

// Builds an OpDef; errors in the specs surface from Finalize().
class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name);
  OpDefBuilder& Input(const std::string& spec);
  OpDefBuilder& Output(const std::string& spec);
  OpDefBuilder& Attr(const std::string& spec);
  OpDefBuilder& SetIsStateful();
  OpDefBuilder& Doc(std::string doc);
  StatusOr<OpDef> Finalize() const;

 private:
  OpDef def_;
  std::vector<std::string> input_specs_, output_specs_, attr_specs_;
};

// Parses one attr value in the default-value text form, for an attr of type
// `type` ("int", "list(type)", ...). Also used by `tfctl run --feed`.
StatusOr<AttrValue> ParseAttrValue(const std::string& type, const std::string& text);

// The dtypes an op's inputs or outputs take for a node with these attrs
// (expanding "N * T" and type lists); INVALID_ARGUMENT names a missing attr.
StatusOr<std::vector<DType>> ArgTypes(const std::vector<ArgDef>& args, const AttrMap& attrs);
// Fills in defaults for absent attrs, then checks every attr is present, of
// its declared type, within its allowed dtypes and minimum, and that no
// unknown attr is given. Messages name the attr; callers prefix the node.
Status CompleteAndCheckAttrs(const OpDef& def, AttrMap& attrs);
// The reverse for a graph about to be written or sent: removes every attr
// equal to its default in `def`, as TensorFlow does when it writes graphs,
// so that a graph which sets no attr an op gained since still loads in an
// older tfd (whose op lacks the attr). Tensor-valued attrs are kept; attrs
// `def` does not declare are left for CompleteAndCheckAttrs to refuse.
void StripDefaultAttrs(const OpDef& def, AttrMap& attrs);

// Which of those are references, in the same expanded order.
StatusOr<std::vector<bool>> ArgRefs(const std::vector<ArgDef>& args, const AttrMap& attrs);

}  // namespace tfd
