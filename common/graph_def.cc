#include "common/graph_def.h"

#include <charconv>

namespace tfd {

StatusOr<InputRef> ParseInput(const std::string& input) {
  InputRef ref;
  std::string_view s = input;
  if (!s.empty() && s.front() == '^') {
    ref.control = true;
    s.remove_prefix(1);
  }
  const size_t colon = s.rfind(':');
  if (colon != std::string_view::npos) {
    if (ref.control) {
      return errors::InvalidArgument("control input '", input, "' must not name a port");
    }
    std::string_view port = s.substr(colon + 1);
    int p = -1;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p < 0) {
      return errors::InvalidArgument("input '", input, "' has a bad port '", port, "'");
    }
    ref.port = p;
    s = s.substr(0, colon);
  }
  if (s.empty()) return errors::InvalidArgument("input '", input, "' names no node");
  ref.node = std::string(s);
  return ref;
}

std::string FormatInput(const InputRef& ref) {
  if (ref.control) return "^" + ref.node;
  return ref.port == 0 ? ref.node : ref.node + ":" + std::to_string(ref.port);
}

StatusOr<TensorId> ParseTensorId(const std::string& name) {
  TFD_ASSIGN_OR_RETURN(InputRef ref, ParseInput(name));
  if (ref.control) return errors::InvalidArgument("'", name, "' is not a tensor name");
  return TensorId{ref.node, ref.port};
}

}  // namespace tfd
