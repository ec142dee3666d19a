#include "api/control_flow.h"

#include <map>
#include <set>
#include <string>

namespace tfd::ops {
namespace {

// "name", "name:port" or "^name" -> "name".
std::string NodeOfInput(const std::string& input) {
  const std::string name = input[0] == '^' ? input.substr(1) : input;
  return name.substr(0, name.rfind(':'));  // npos: the whole name
}

// The output `input` ("name" or "name:port") names.
Output OutputOfInput(const Scope& s, const std::string& input) {
  const size_t colon = input.rfind(':');
  const int port = colon == std::string::npos ? 0 : std::stoi(input.substr(colon + 1));
  return s.OutputOf(NodeOfInput(input), port);
}

// Nodes added through Scope::OutsideControlFlow() (a variable made in a
// branch or a body, and its initializer) belong to no cond or loop: they
// are not captured, and nodes of the part read them as from outside. Such
// a node may read only what is outside too: INVALID_ARGUMENT naming it
// and the node of the part it reads, as TF1's "initializer is from inside
// a control-flow construct".
bool IsOutside(const Scope& s, int id, int part_start) {
  return id < part_start || s.IsOutsideControlFlow(id);
}

void CheckOutsideInputs(const Scope& s, int id, int part_start, const std::string& part) {
  const NodeDef& node = s.node(id);
  for (const std::string& input : node.inputs) {
    const int from_id = s.FindNode(NodeOfInput(input));
    if (from_id < 0 || IsOutside(s, from_id, part_start)) continue;
    s.UpdateStatus(errors::InvalidArgument(
        "node '", node.name, "' belongs outside control flow (a variable or its initializer) ",
        "but reads '", s.node(from_id).name, "', made inside ", part, ": give the variable an ",
        "initializer that makes its value (a callable, an initializer), not a tensor made there"));
    return;
  }
}

// Makes every data input of a node the branch added in [first, end) that
// comes from outside the branch read that tensor switched on `pred` (TF1's
// CondContext captures): live on the taken side, dead on the other, with
// its gradient flowing back through the Switch. The branch's own switched
// inputs and pivot (`allowed`), constants and references (variables,
// queues) are read as they are: the pivot already makes the reader dead.
// One Switch per tensor.
void SwitchCaptures(const Scope& s, const Output& pred, int side, int first, int end,
                    const std::set<std::string>& allowed) {
  std::map<std::string, Output> switched;
  for (int id = first; id < end && s.ok(); ++id) {
    if (s.IsOutsideControlFlow(id)) {
      CheckOutsideInputs(s, id, first, "cond '" + s.name_prefix() + "'");
      continue;
    }
    const NodeDef node = s.node(id);  // a copy: UpdateInput changes it
    for (size_t k = 0; k < node.inputs.size() && s.ok(); ++k) {
      const std::string& input = node.inputs[k];
      if (input[0] == '^') continue;
      const std::string from = NodeOfInput(input);
      const int from_id = s.FindNode(from);
      if (from_id < 0 || !IsOutside(s, from_id, first) || allowed.count(from) != 0) continue;
      const Output x = OutputOfInput(s, input);
      if (x.is_ref || s.node(from_id).op == "Const") continue;
      auto it = switched.find(input);
      if (it == switched.end()) {
        it = switched.emplace(input, s.AddOperation("Switch", {x, pred}).output(side)).first;
      }
      s.UpdateInput(node.name, static_cast<int>(k), it->second);
    }
  }
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
  for (Output& o : outs) o = Identity(branch, o);
  SwitchCaptures(s, pred, side, first, s.num_nodes(), allowed);
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

namespace {

// Makes every data input of the nodes in [first, end) that comes from
// before `loop_start` (outside the loop) read an Enter (a RefEnter, for a
// reference) of it with is_constant: a loop invariant, entered once per
// tensor.
void EnterCaptures(const Scope& s, const Scope& outer, int loop_start, int first, int end,
                   const AttrMap& enter_attrs) {
  std::map<std::string, Output> entered;
  for (int id = first; id < end && s.ok(); ++id) {
    if (s.IsOutsideControlFlow(id)) {
      CheckOutsideInputs(s, id, loop_start, "while loop '" + outer.name_prefix() + "'");
      continue;
    }
    const NodeDef node = s.node(id);  // a copy: UpdateInput changes it
    for (size_t k = 0; k < node.inputs.size() && s.ok(); ++k) {
      const std::string& input = node.inputs[k];
      if (input[0] == '^') continue;
      const int from_id = s.FindNode(NodeOfInput(input));
      if (from_id < 0 || !IsOutside(s, from_id, loop_start)) continue;
      auto it = entered.find(input);
      if (it == entered.end()) {
        AttrMap attrs = enter_attrs;
        attrs["is_constant"] = true;
        // A reference (a variable) enters as one, through a RefEnter, so the
        // body updates it or reads it afresh in every iteration.
        const Output x = OutputOfInput(outer, input);
        const char* op = x.is_ref ? "RefEnter" : "Enter";
        it = entered.emplace(input, outer.AddOperation(op, {x}, attrs).output(0)).first;
      }
      s.UpdateInput(node.name, static_cast<int>(k), it->second);
    }
  }
}

// The most iterations, as the int64 the counter is compared with: a
// literal as a literal, a tensor cast outside the loop (`outer`) when int32.
// Errors go to the scope.
Input IterationLimit(const Scope& outer, const Input& limit) {
  const DType dtype = limit.is_literal() ? limit.literal().dtype() : limit.output().dtype;
  const bool scalar =
      limit.is_literal() ? limit.literal().rank() == 0 : limit.output().shape.rank() <= 0;
  if ((dtype != DType::kInt32 && dtype != DType::kInt64) || !scalar) {
    outer.UpdateStatus(errors::InvalidArgument(
        "maximum_iterations of while loop '", outer.name_prefix(),
        "' must be an int32 or int64 scalar, got ",
        limit.is_literal() ? limit.literal().Describe() : limit.output().name()));
    return limit;
  }
  if (limit.is_literal()) {
    return Input(dtype == DType::kInt64 ? limit.literal().scalar<int64_t>()
                                        : int64_t{limit.literal().scalar<int32_t>()});
  }
  return dtype == DType::kInt64 ? limit : Input(Cast(outer, limit, DType::kInt64));
}

// The loop's predicate: cond on the loop variables, and, with a `limit`,
// the iteration counter (vars[0]) below it.
Output LoopPredicate(const Scope& s, const LoopCondFn& cond, const std::vector<Output>& vars,
                     const std::optional<Input>& limit) {
  const std::vector<Output> user(vars.begin() + (limit ? 1 : 0), vars.end());
  Output pred = cond(s, user);
  if (limit && s.ok()) {
    Output below = Less(s, vars[0], *limit);
    pred = s.AddOperation("LogicalAnd", {below, pred}).output(0);
  }
  return pred;
}

// Each loop variable's Merge gets its invariant as its shape, which is what
// cond and body see (a user variable's is options.shape_invariants[i] when
// given; the counter's its own).
void SetInvariants(const Scope& s, std::vector<Output>& merges, bool counted,
                   const WhileOptions& options) {
  const size_t first_user = counted ? 1 : 0;
  if (!options.shape_invariants.empty() &&
      options.shape_invariants.size() != merges.size() - first_user) {
    s.UpdateStatus(errors::InvalidArgument("WhileLoop got ", options.shape_invariants.size(),
                                           " shape invariants for ", merges.size() - first_user,
                                           " loop variables"));
    return;
  }
  for (size_t i = first_user; i < merges.size() && !options.shape_invariants.empty(); ++i) {
    s.RelaxShape(merges[i], options.shape_invariants[i - first_user]);
  }
}

// INVALID_ARGUMENT, as TF1's, when the body returns a value whose shape
// contradicts the loop variable's invariant. One that inference knows less
// of passes (TF1 refuses it too; tfd's inference knows less in places).
void CheckNextShapes(const Scope& s, const std::string& loop, const std::vector<Output>& merges,
                     const std::vector<Output>& next, bool counted) {
  for (size_t i = counted ? 1 : 0; i < next.size() && s.ok(); ++i) {
    if (merges[i].shape.IsCompatibleWith(next[i].shape)) continue;
    s.UpdateStatus(errors::InvalidArgument(
        "loop variable ", i - (counted ? 1 : 0), " of while loop '", loop, "' enters with shape ",
        merges[i].shape.ToString(), " but the body returns shape ", next[i].shape.ToString(),
        "; give the loop a less specific shape invariant for it (shape_invariants, with "
        "unknown dimensions where its shape changes)"));
  }
}

}  // namespace

std::vector<Output> WhileLoop(const Scope& scope, const LoopCondFn& cond, const BranchFn& body,
                              const std::vector<Output>& loop_vars, const WhileOptions& options) {
  const size_t n_user = loop_vars.size();
  if (n_user == 0 || options.parallel_iterations < 1) {
    scope.UpdateStatus(errors::InvalidArgument(
        "WhileLoop needs at least one loop variable and parallel_iterations >= 1; got ", n_user,
        " and ", options.parallel_iterations));
  }
  if (!scope.ok()) return std::vector<Output>(n_user);
  const Scope outer = scope.WithPrefix(scope.UniqueName("while"));
  const Scope s = outer.WithNoControlDependencies();
  const AttrMap enter_attrs{{"frame_name", outer.name_prefix()},
                            {"parallel_iterations", int64_t{options.parallel_iterations}}};
  const bool counted = options.maximum_iterations.has_value();
  std::optional<Input> limit;
  if (counted) limit = IterationLimit(outer, *options.maximum_iterations);
  std::vector<Output> init = loop_vars;
  if (counted) init.insert(init.begin(), Const(outer.WithOpName("iteration_counter"), Input(int64_t{0})));
  const int loop_start = outer.num_nodes();
  std::vector<Output> merges;
  for (const Output& x : init) {
    Output enter = outer.AddOperation("Enter", {x}, enter_attrs).output(0);
    merges.push_back(s.AddOperation("Merge", {enter, enter}).output(0));
  }
  SetInvariants(s, merges, counted, options);
  if (!s.ok()) return std::vector<Output>(n_user);
  const int first = s.num_nodes();
  Output pred =
      LoopPredicate(s.WithName("cond").WithControlDependencies({merges[0]}), cond, merges, limit);
  Output loop_cond = s.AddOperation("LoopCond", {pred}).output(0);
  std::vector<Output> exits, vars;
  for (const Output& m : merges) {
    Operation sw = s.AddOperation("Switch", {m, loop_cond});
    exits.push_back(s.AddOperation("Exit", {sw.output(0)}).output(0));
    vars.push_back(Identity(s, sw.output(1)));
  }
  if (!s.ok()) return std::vector<Output>(n_user);
  const Scope body_scope = s.WithName("body").WithControlDependencies({vars[0]});
  std::vector<Output> next(vars.begin() + (counted ? 1 : 0), vars.end());
  next = body(body_scope, next);
  if (s.ok() && next.size() != n_user) {
    s.UpdateStatus(errors::InvalidArgument("the body of while loop '", outer.name_prefix(),
                                           "' returns ", next.size(), " values for ", n_user,
                                           " loop variables"));
  }
  if (!s.ok()) return std::vector<Output>(n_user);
  if (counted) next.insert(next.begin(), Add(body_scope, vars[0], Input(int64_t{1})));
  CheckNextShapes(s, outer.name_prefix(), merges, next, counted);
  std::vector<Output> back;
  for (const Output& x : next) back.push_back(s.AddOperation("NextIteration", {x}).output(0));
  EnterCaptures(s, outer, loop_start, first, s.num_nodes(), enter_attrs);
  for (size_t i = 0; i < merges.size() && s.ok(); ++i) s.UpdateInput(merges[i].node, 1, back[i]);
  if (!s.ok()) return std::vector<Output>(n_user);
  exits.erase(exits.begin(), exits.begin() + (counted ? 1 : 0));
  return exits;
}

}  // namespace tfd::ops
