#include "common/op_def.h"

#include <cctype>
#include <algorithm>
#include <charconv>
#include <type_traits>
#include <variant>

namespace tfd {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits "a, [b, c], d" at top-level commas.
std::vector<std::string> SplitTopLevel(std::string_view s) {
  std::vector<std::string> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '[' || c == '(' || c == '{') ++depth;
    if (c == ']' || c == ')' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::string last = Trim(s.substr(start));
  if (!last.empty() || !parts.empty()) parts.push_back(last);
  return parts;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

StatusOr<int64_t> ParseInt(const std::string& text) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return errors::InvalidArgument("'", text, "' is not an integer");
  }
  return v;
}

StatusOr<PartialShape> ParseShape(const std::string& text) {
  if (text == "?" || text == "<unknown>") return PartialShape::Unknown();
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return errors::InvalidArgument("'", text, "' is not a shape like [2, ?, 3]");
  }
  std::vector<int64_t> dims;
  for (const std::string& d : SplitTopLevel(std::string_view(text).substr(1, text.size() - 2))) {
    if (d == "?" || d == "-1") {
      dims.push_back(-1);
      continue;
    }
    TFD_ASSIGN_OR_RETURN(int64_t v, ParseInt(d));
    if (v < 0) return errors::InvalidArgument("shape '", text, "' has a negative dimension");
    dims.push_back(v);
  }
  return PartialShape(std::move(dims));
}

template <typename T>
StatusOr<AttrValue> ParseList(const std::string& elem_type, const std::string& text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return errors::InvalidArgument("'", text, "' is not a list like [a, b]");
  }
  std::vector<T> out;
  for (const std::string& part : SplitTopLevel(std::string_view(text).substr(1, text.size() - 2))) {
    TFD_ASSIGN_OR_RETURN(AttrValue v, ParseAttrValue(elem_type, part));
    out.push_back(std::get<T>(v));
  }
  return AttrValue(std::move(out));
}

StatusOr<ArgDef> ParseArg(const std::string& spec, const std::vector<AttrDef>& attrs) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return errors::Internal("arg spec '", spec, "' has no ':'");
  ArgDef a;
  a.name = Trim(spec.substr(0, colon));
  std::string type = Trim(spec.substr(colon + 1));
  if (type.rfind("Ref(", 0) == 0 && type.back() == ')') {
    a.is_ref = true;
    type = Trim(type.substr(4, type.size() - 5));
  }
  if (const size_t star = type.find('*'); star != std::string::npos) {
    a.number_attr = Trim(type.substr(0, star));
    type = Trim(type.substr(star + 1));
  }
  if (!IsIdentifier(a.name)) return errors::Internal("arg spec '", spec, "': bad name");
  if (auto d = DTypeFromName(type)) {
    a.type = *d;
  } else {
    const AttrDef* found = nullptr;
    for (const AttrDef& ad : attrs) {
      if (ad.name == type) found = &ad;
    }
    if (found == nullptr) {
      return errors::Internal("arg spec '", spec, "' names no dtype and no attr '", type, "'");
    }
    if (found->type == "type") {
      a.type_attr = type;
    } else if (found->type == "list(type)" && a.number_attr.empty()) {
      a.type_list_attr = type;
    } else {
      return errors::Internal("arg spec '", spec, "': attr '", type, "' is a ", found->type);
    }
  }
  return a;
}

StatusOr<AttrDef> ParseAttr(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return errors::Internal("attr spec '", spec, "' has no ':'");
  AttrDef a;
  a.name = Trim(spec.substr(0, colon));
  std::string rest = Trim(spec.substr(colon + 1));
  std::string default_text;
  bool has_default = false;
  size_t eq = rest.find('=');
  while (eq != std::string::npos && eq > 0 && rest[eq - 1] == '>') eq = rest.find('=', eq + 1);
  if (eq != std::string::npos) {
    default_text = Trim(rest.substr(eq + 1));
    rest = Trim(rest.substr(0, eq));
    has_default = true;
  }
  if (const size_t ge = rest.find(">="); ge != std::string::npos) {
    TFD_ASSIGN_OR_RETURN(int64_t m, ParseInt(Trim(rest.substr(ge + 2))));
    a.minimum = m;
    rest = Trim(rest.substr(0, ge));
  }
  if (!rest.empty() && rest.front() == '{') {
    if (rest.back() != '}') return errors::Internal("attr spec '", spec, "': unclosed '{'");
    for (const std::string& t : SplitTopLevel(std::string_view(rest).substr(1, rest.size() - 2))) {
      auto d = DTypeFromName(t);
      if (!d) return errors::Internal("attr spec '", spec, "': unknown dtype '", t, "'");
      a.allowed_types.push_back(*d);
    }
    rest = "type";
  }
  static const char* kTypes[] = {"string", "int", "float", "bool", "type", "shape", "tensor"};
  bool known = false;
  for (const char* t : kTypes) {
    known = known || rest == t || rest == std::string("list(") + t + ")";
  }
  if (!known || !IsIdentifier(a.name)) {
    return errors::Internal("attr spec '", spec, "': unknown attr type '", rest, "'");
  }
  a.type = rest;
  if (has_default) {
    auto v = ParseAttrValue(a.type, default_text);
    if (!v.ok()) return v.status().WithContext("attr spec '" + spec + "'");
    a.default_value = std::move(v).value();
  }
  return a;
}

}  // namespace

const AttrDef* OpDef::FindAttr(const std::string& attr) const {
  for (const AttrDef& a : attrs) {
    if (a.name == attr) return &a;
  }
  return nullptr;
}

StatusOr<AttrValue> ParseAttrValue(const std::string& type, const std::string& raw) {
  const std::string text = Trim(raw);
  if (type == "string") {
    if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
        text.back() == text.front()) {
      return AttrValue(text.substr(1, text.size() - 2));
    }
    return AttrValue(text);
  }
  if (type == "int") {
    TFD_ASSIGN_OR_RETURN(int64_t v, ParseInt(text));
    return AttrValue(v);
  }
  if (type == "float") {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      return errors::InvalidArgument("'", text, "' is not a number");
    }
    return AttrValue(v);
  }
  if (type == "bool") {
    if (text == "true") return AttrValue(true);
    if (text == "false") return AttrValue(false);
    return errors::InvalidArgument("'", text, "' is not true or false");
  }
  if (type == "type") {
    auto d = DTypeFromName(text);
    if (!d) return errors::InvalidArgument("'", text, "' is not a dtype");
    return AttrValue(*d);
  }
  if (type == "shape") {
    TFD_ASSIGN_OR_RETURN(PartialShape s, ParseShape(text));
    return AttrValue(std::move(s));
  }
  if (type == "list(string)") return ParseList<std::string>("string", text);
  if (type == "list(int)") return ParseList<int64_t>("int", text);
  if (type == "list(float)") return ParseList<double>("float", text);
  if (type == "list(bool)") return ParseList<bool>("bool", text);
  if (type == "list(type)") return ParseList<DType>("type", text);
  if (type == "list(shape)") return ParseList<PartialShape>("shape", text);
  return errors::InvalidArgument("values of attr type '", type, "' cannot be written as text");
}

OpDefBuilder::OpDefBuilder(std::string name) { def_.name = std::move(name); }
OpDefBuilder& OpDefBuilder::Input(const std::string& spec) {
  input_specs_.push_back(spec);
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(const std::string& spec) {
  output_specs_.push_back(spec);
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(const std::string& spec) {
  attr_specs_.push_back(spec);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  def_.stateful = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(std::string doc) {
  def_.doc = std::move(doc);
  return *this;
}

StatusOr<OpDef> OpDefBuilder::Finalize() const {
  OpDef def = def_;
  auto fail = [&](const Status& s) { return s.WithContext("op " + def.name); };
  for (const std::string& spec : attr_specs_) {
    auto a = ParseAttr(spec);
    if (!a.ok()) return fail(a.status());
    def.attrs.push_back(std::move(a).value());
  }
  for (const std::string& spec : input_specs_) {
    auto a = ParseArg(spec, def.attrs);
    if (!a.ok()) return fail(a.status());
    def.inputs.push_back(std::move(a).value());
  }
  for (const std::string& spec : output_specs_) {
    auto a = ParseArg(spec, def.attrs);
    if (!a.ok()) return fail(a.status());
    def.outputs.push_back(std::move(a).value());
  }
  return def;
}

namespace {

template <typename T>
StatusOr<T> AttrAs(const AttrMap& attrs, const std::string& name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return errors::InvalidArgument("missing attr '", name, "'");
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  if constexpr (!std::is_same_v<T, DType> && !std::is_same_v<T, int64_t>) {
    if (std::holds_alternative<EmptyList>(it->second)) return T{};
  }
  return errors::InvalidArgument("attr '", name, "' has type ", AttrTypeName(it->second));
}

// Calls fn(dtype, is_ref) for every expanded argument.
template <typename Fn>
Status ExpandArgs(const std::vector<ArgDef>& args, const AttrMap& attrs, Fn fn) {
  for (const ArgDef& a : args) {
    if (!a.type_list_attr.empty()) {
      TFD_ASSIGN_OR_RETURN(auto types, AttrAs<std::vector<DType>>(attrs, a.type_list_attr));
      for (DType d : types) fn(d, a.is_ref);
      continue;
    }
    DType d = a.type;
    if (!a.type_attr.empty()) {
      TFD_ASSIGN_OR_RETURN(d, AttrAs<DType>(attrs, a.type_attr));
    }
    int64_t n = 1;
    if (!a.number_attr.empty()) {
      TFD_ASSIGN_OR_RETURN(n, AttrAs<int64_t>(attrs, a.number_attr));
      if (n < 0) return errors::InvalidArgument("attr '", a.number_attr, "' is negative");
    }
    for (int64_t i = 0; i < n; ++i) fn(d, a.is_ref);
  }
  return OkStatus();
}

}  // namespace

Status CompleteAndCheckAttrs(const OpDef& def, AttrMap& attrs) {
  for (const auto& [name, value] : attrs) {
    if (def.FindAttr(name) == nullptr) {
      return errors::InvalidArgument("op ", def.name, " has no attr '", name, "'");
    }
  }
  for (const AttrDef& a : def.attrs) {
    auto it = attrs.find(a.name);
    if (it == attrs.end()) {
      if (!a.default_value) {
        return errors::InvalidArgument("missing attr '", a.name, "' (", a.type, ") required by op ",
                                       def.name);
      }
      it = attrs.emplace(a.name, *a.default_value).first;
    }
    AttrValue& v = it->second;
    if (std::holds_alternative<EmptyList>(v) && a.type.rfind("list(", 0) == 0) {
      TFD_ASSIGN_OR_RETURN(v, ParseAttrValue(a.type, "[]"));
    }
    const std::string got = AttrTypeName(v);
    // A whole number written where a float is expected is fine.
    if (a.type == "float" && std::holds_alternative<int64_t>(v)) {
      v = static_cast<double>(std::get<int64_t>(v));
    } else if (got != a.type && !(a.type == "list(tensor)" && got == "list(?)")) {
      return errors::InvalidArgument("attr '", a.name, "' of op ", def.name, " must be ", a.type,
                                     " but is ", got);
    }
    if (!a.allowed_types.empty()) {
      const DType d = std::get<DType>(v);
      if (std::find(a.allowed_types.begin(), a.allowed_types.end(), d) == a.allowed_types.end()) {
        std::string allowed;
        for (DType t : a.allowed_types) allowed += std::string(allowed.empty() ? "" : ", ") + std::string(DTypeName(t));
        return errors::InvalidArgument("attr '", a.name, "' of op ", def.name, " is ",
                                       DTypeName(d), ", not one of {", allowed, "}");
      }
    }
    if (a.minimum) {
      int64_t n = 0;
      if (const int64_t* i = std::get_if<int64_t>(&v)) {
        n = *i;
      } else {
        n = std::visit([](const auto& x) -> int64_t {
          if constexpr (requires { x.size(); }) return static_cast<int64_t>(x.size());
          return 0;
        }, v);
      }
      if (n < *a.minimum) {
        return errors::InvalidArgument("attr '", a.name, "' of op ", def.name, " is ", n,
                                       ", less than the minimum ", *a.minimum);
      }
    }
  }
  return OkStatus();
}

StatusOr<std::vector<DType>> ArgTypes(const std::vector<ArgDef>& args, const AttrMap& attrs) {
  std::vector<DType> out;
  TFD_RETURN_IF_ERROR(ExpandArgs(args, attrs, [&](DType d, bool) { out.push_back(d); }));
  return out;
}

StatusOr<std::vector<bool>> ArgRefs(const std::vector<ArgDef>& args, const AttrMap& attrs) {
  std::vector<bool> out;
  TFD_RETURN_IF_ERROR(ExpandArgs(args, attrs, [&](DType, bool r) { out.push_back(r); }));
  return out;
}

void StripDefaultAttrs(const OpDef& def, AttrMap& attrs) {
  for (const AttrDef& a : def.attrs) {
    auto it = attrs.find(a.name);
    if (it == attrs.end() || !a.default_value) continue;
    const AttrValue& value = it->second;
    const bool same = std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          // Tensors have no value equality; an empty list equals an empty
          // default of any element kind.
          if constexpr (std::is_same_v<V, Tensor> || std::is_same_v<V, std::vector<Tensor>>) {
            return false;
          } else if constexpr (std::is_same_v<V, EmptyList>) {
            return std::visit(
                [](const auto& d) {
                  using D = std::decay_t<decltype(d)>;
                  if constexpr (std::is_same_v<D, EmptyList>) return true;
                  else if constexpr (requires { d.empty(); } && !std::is_same_v<D, std::string>) {
                    return d.empty();
                  } else {
                    return false;
                  }
                },
                *a.default_value);
          } else {
            const V* d = std::get_if<V>(&*a.default_value);
            return d != nullptr && *d == v;
          }
        },
        value);
    if (same) attrs.erase(it);
  }
}

}  // namespace tfd
