#include "api/control_flow.h"

#include <set>
#include <string>

namespace tfd::ops {
namespace {

// "name", "name:port" or "^name" -> "name".
std::string NodeOfInput(const std::string& input) {
  const std::string name = input[0] == '^' ? input.substr(1) : input;
  return name.substr(0, name.rfind(':'));  // npos: the whole name
}

// INVALID_ARGUMENT when a node the branch added in [first, scope.num_nodes())
// takes a value from outside the branch other than its switched inputs, a
// reference or a constant.
Status CheckCaptures(const Scope& scope, int first, const std::set<std::string>& allowed,
                     const char* side) {
  for (int id = first; id < scope.num_nodes(); ++id) {
    const NodeDef& node = scope.node(id);
    for (const std::string& input : node.inputs) {
      if (input[0] == '^') continue;
      const std::string from = NodeOfInput(input);
      const int from_id = scope.FindNode(from);
      if (from_id < 0 || from_id >= first || allowed.count(from) != 0) continue;
      if (scope.node(from_id).op == "Const") continue;
      const size_t colon = input.rfind(':');
      const int port = colon == std::string::npos ? 0 : std::stoi(input.substr(colon + 1));
      if (scope.OutputOf(from, port).is_ref) continue;
      return errors::InvalidArgument("node '", node.name, "' in the ", side,
                                     " branch of a cond uses '", input,
                                     "' from outside the branch: pass it in the cond's inputs");
    }
  }
  return OkStatus();
}

// One side of the cond: its inputs switched, the branch built under its
// pivot, its outputs passed through Identity there (so that a branch that
// returns an input, or a constant, is dead when not taken).
std::vector<Output> Branch(const Scope& s, const Output& pred, const std::vector<Output>& inputs,
                           int side, const BranchFn& fn) {
  const char* name = side == 1 ? "true" : "false";
  Output pivot = Identity(s.WithOpName(side == 1 ? "switch_t" : "switch_f"),
                          s.AddOperation("Switch", {pred, pred}).output(side));
  const Scope branch = s.WithName(name).WithControlDependencies({pivot});
  std::vector<Output> args;
  std::set<std::string> allowed{pivot.node};
  for (const Output& x : inputs) {
    args.push_back(s.AddOperation("Switch", {x, pred}).output(side));
    allowed.insert(args.back().node);
  }
  if (!s.ok()) return {};
  const int first = s.num_nodes();
  std::vector<Output> outs = fn(branch, args);
  s.UpdateStatus(CheckCaptures(s, first, allowed, name));
  for (Output& o : outs) o = Identity(branch, o);
  return outs;
}

}  // namespace

std::vector<Output> Cond(const Scope& scope, const Input& pred, const std::vector<Output>& inputs,
                         const BranchFn& true_fn, const BranchFn& false_fn) {
  const Scope s = scope.WithPrefix(scope.UniqueName("cond"));
  Output p = Identity(s.WithOpName("pred_id"), pred);
  std::vector<Output> t = Branch(s, p, inputs, 1, true_fn);
  std::vector<Output> f = Branch(s, p, inputs, 0, false_fn);
  if (s.ok() && t.size() != f.size()) {
    s.UpdateStatus(errors::InvalidArgument("the branches of cond '", s.name_prefix(),
                                           "' return ", t.size(), " (true) and ", f.size(),
                                           " (false) outputs"));
  }
  if (!s.ok()) return std::vector<Output>(t.size(), Output{});
  std::vector<Output> merged;
  for (size_t i = 0; i < t.size(); ++i) merged.push_back(s.AddOperation("Merge", {f[i], t[i]}).output(0));
  return merged;
}

}  // namespace tfd::ops
