#include "common/scope.h"

#include <algorithm>

#include "common/device_name.h"

namespace tfd {

// The graph every scope of one root shares.
struct Scope::State {
  explicit State(const OpRegistry& r) : registry(&r) {}

  const OpRegistry* registry;
  GraphDef graph;
  std::vector<NodeAnnotation> annotations;  // parallel to graph.nodes
  std::map<std::string, int> index;         // node name -> position
  std::set<std::string> used_names;         // nodes and reserved names
  std::set<std::string> outside_control_flow;  // nodes added through such a scope
  Status status;
  std::vector<VariableInfo> variables;
  std::optional<int64_t> random_seed;
};

std::string Output::name() const {
  return port == 0 ? node : node + ":" + std::to_string(port);
}

Output Operation::output(int i) const {
  if (i < 0 || i >= static_cast<int>(outputs.size())) return Output();
  return outputs[i];
}

Scope::Scope(std::shared_ptr<State> state) : state_(std::move(state)) {}

Scope Scope::NewRootScope(const OpRegistry& registry) {
  return Scope(std::make_shared<State>(registry));
}

Scope Scope::WithName(const std::string& name) const {
  Scope s = *this;
  s.op_name_.clear();
  if (name.empty()) return s;
  s.prefix_ = prefix_.empty() ? name : prefix_ + "/" + name;
  return s;
}

Scope Scope::WithPrefix(const std::string& prefix) const {
  Scope s = *this;
  s.op_name_.clear();
  s.prefix_ = prefix;
  return s;
}

Scope Scope::WithOpName(const std::string& name) const {
  Scope s = *this;
  s.op_name_ = name;
  return s;
}

Scope Scope::WithDevice(const std::string& device) const {
  Scope s = *this;
  auto base = DeviceName::Parse(device_);
  auto over = DeviceName::Parse(device);
  if (!over.ok()) {
    UpdateStatus(over.status());
    return s;
  }
  if (base.ok()) s.device_ = DeviceName::Merge(*base, *over).ToString();
  return s;
}

Scope Scope::ColocatedWith(const Output& node) const {
  Scope s = *this;
  s.device_fn_ = nullptr;
  const int id = FindNode(node.node);
  if (id < 0) {
    UpdateStatus(errors::InvalidArgument("cannot colocate with '", node.node,
                                         "': no such node in the graph"));
    return s;
  }
  s.device_ = state_->graph.nodes[id].device;
  return s;
}

Scope Scope::WithDeviceFunction(DeviceFunction fn) const {
  Scope s = *this;
  s.device_fn_ = std::move(fn);
  return s;
}

Scope Scope::WithControlDependencies(const std::vector<Operation>& ops) const {
  Scope s = *this;
  for (const Operation& op : ops) {
    if (!op.valid()) {
      UpdateStatus(errors::InvalidArgument("a control dependency is invalid (an earlier error)"));
      continue;
    }
    if (std::find(s.control_deps_.begin(), s.control_deps_.end(), op.name) ==
        s.control_deps_.end()) {
      s.control_deps_.push_back(op.name);
    }
  }
  return s;
}

Scope Scope::WithControlDependencies(const std::vector<Output>& outputs) const {
  std::vector<Operation> ops;
  for (const Output& o : outputs) ops.push_back(Operation{o.node, {}});
  return WithControlDependencies(ops);
}

Scope Scope::WithNoControlDependencies() const {
  Scope s = *this;
  s.control_deps_.clear();
  return s;
}

Scope Scope::OutsideControlFlow() const {
  Scope s = WithNoControlDependencies();
  s.outside_control_flow_ = true;
  return s;
}

Status Scope::status() const { return state_->status; }

void Scope::UpdateStatus(const Status& s) const {
  if (state_->status.ok() && !s.ok()) state_->status = s;
}

Status Scope::TakeStatus() const {
  Status s = state_->status;
  state_->status = Status();
  return s;
}

const OpRegistry& Scope::registry() const { return *state_->registry; }

std::string Scope::UniqueName(const std::string& base) const {
  const std::string want = prefix_.empty() ? base : prefix_ + "/" + base;
  std::string name = want;
  for (int k = 1; state_->used_names.count(name); ++k) name = want + "_" + std::to_string(k);
  state_->used_names.insert(name);
  return name;
}

int Scope::num_nodes() const { return static_cast<int>(state_->graph.nodes.size()); }
const NodeDef& Scope::node(int id) const { return state_->graph.nodes[id]; }
const NodeAnnotation& Scope::annotation(int id) const { return state_->annotations[id]; }

int Scope::FindNode(const std::string& name) const {
  auto it = state_->index.find(name);
  return it == state_->index.end() ? -1 : it->second;
}

bool Scope::IsOutsideControlFlow(int id) const {
  return state_->outside_control_flow.count(node(id).name) != 0;
}

Output Scope::OutputOf(const std::string& name, int port) const {
  const int id = FindNode(name);
  if (id < 0) return Output();
  const NodeAnnotation& a = state_->annotations[id];
  if (port < 0 || port >= static_cast<int>(a.output_types.size())) return Output();
  return Output{name, port, a.output_types[port], a.output_shapes[port], a.output_refs[port]};
}

Tensor Scope::ConstantValue(const Output& o) const {
  const int id = FindNode(o.node);
  if (id < 0) return Tensor();
  const NodeAnnotation& a = state_->annotations[id];
  if (o.port < 0 || o.port >= static_cast<int>(a.output_values.size())) return Tensor();
  return a.output_values[o.port];
}

void Scope::AddVariable(VariableInfo v) const { state_->variables.push_back(std::move(v)); }

const std::vector<VariableInfo>& Scope::variables() const { return state_->variables; }

void Scope::SetRandomSeed(std::optional<int64_t> seed) const { state_->random_seed = seed; }

std::optional<int64_t> Scope::random_seed() const { return state_->random_seed; }

GraphDef Scope::ToGraphDef() const { return state_->graph; }

Operation Scope::AddOperation(const std::string& op, const std::vector<Output>& inputs,
                              AttrMap attrs) const {
  if (!ok()) return Operation();
  State& st = *state_;
  NodeDef def;
  def.name = UniqueName(op_name_.empty() ? op : op_name_);
  def.op = op;
  def.device = device_;
  def.attrs = std::move(attrs);
  const std::string where = "node '" + def.name + "' (" + op + ")";
  if (def.name.find_first_of(":^ ") != std::string::npos) {
    UpdateStatus(errors::InvalidArgument(where, ": a node name may not contain ':', '^' or "
                                         "spaces"));
    return Operation();
  }

  std::vector<AnnotatedInput> annotated;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Output& in = inputs[k];
    const int id = FindNode(in.node);
    if (!in.valid() || id < 0) {
      UpdateStatus(errors::InvalidArgument(
          where, ": input ", k,
          in.valid() ? " names node '" + in.node + "', which is not in this graph"
                     : " is invalid (it comes from a node that could not be added)"));
      return Operation();
    }
    def.inputs.push_back(in.name());
    annotated.push_back({&st.graph.nodes[id], &st.annotations[id], in.port});
  }
  for (const std::string& dep : control_deps_) {
    if (FindNode(dep) < 0) {
      UpdateStatus(errors::InvalidArgument(where, ": control dependency '", dep,
                                           "' is not in this graph"));
      return Operation();
    }
    def.inputs.push_back("^" + dep);
  }

  auto annotation = AnnotateNode(def, *st.registry, annotated);
  if (!annotation.ok()) {
    UpdateStatus(annotation.status().WithContext(where));
    return Operation();
  }
  if (device_fn_) {
    const std::string device = device_fn_(def);
    auto parsed = DeviceName::Parse(device);
    if (!parsed.ok()) {
      UpdateStatus(parsed.status().WithContext(where + ": the device function's choice"));
      return Operation();
    }
    def.device = parsed->ToString();
  }

  Operation result;
  result.name = def.name;
  const NodeAnnotation& a = *annotation;
  for (size_t p = 0; p < a.output_types.size(); ++p) {
    result.outputs.push_back(
        Output{def.name, static_cast<int>(p), a.output_types[p], a.output_shapes[p],
               static_cast<bool>(a.output_refs[p])});
  }
  st.index.emplace(def.name, static_cast<int>(st.graph.nodes.size()));
  if (outside_control_flow_) st.outside_control_flow.insert(def.name);
  st.graph.nodes.push_back(std::move(def));
  st.annotations.push_back(std::move(annotation).value());
  return result;
}

void Scope::UpdateInput(const std::string& node, int index, const Output& from) const {
  if (!ok()) return;
  State& st = *state_;
  const int id = FindNode(node);
  const int from_id = FindNode(from.node);
  if (id < 0 || from_id < 0) {
    UpdateStatus(errors::InvalidArgument("UpdateInput: node '", id < 0 ? node : from.node,
                                         "' is not in this graph"));
    return;
  }
  NodeDef& def = st.graph.nodes[id];
  const NodeAnnotation& a = st.annotations[id];
  if (index < 0 || index >= static_cast<int>(a.input_types.size())) {
    UpdateStatus(errors::InvalidArgument("node '", node, "' has no data input ", index));
    return;
  }
  // A reference may feed a value input (it is read there), not the reverse.
  if (from.dtype != a.input_types[index] || (a.input_refs[index] && !from.is_ref)) {
    UpdateStatus(errors::InvalidArgument("node '", node, "' input ", index, " is ",
                                         DTypeName(a.input_types[index]), "; '", from.name(),
                                         "' is ", DTypeName(from.dtype)));
    return;
  }
  def.inputs[index] = from.name();
}

// The inferred shape of `out` in the graph, for RelaxShape and
// RefineShape (`what`, in errors); null, with the error kept, when there
// is no such output.
PartialShape* Scope::KnownShape(const Output& out, const char* what) const {
  if (!ok()) return nullptr;
  const int id = FindNode(out.node);
  if (id < 0) {
    UpdateStatus(errors::InvalidArgument(what, ": node '", out.node, "' is not in this graph"));
    return nullptr;
  }
  NodeAnnotation& a = state_->annotations[id];
  if (out.port < 0 || out.port >= static_cast<int>(a.output_shapes.size())) {
    UpdateStatus(errors::InvalidArgument(what, ": '", out.node, "' has no output ", out.port));
    return nullptr;
  }
  return &a.output_shapes[out.port];
}

void Scope::RelaxShape(Output& out, const PartialShape& shape) const {
  PartialShape* known = KnownShape(out, "RelaxShape");
  if (known == nullptr) return;
  if (!shape.IsCompatibleWith(*known)) {
    UpdateStatus(errors::InvalidArgument("'", out.name(), "' has shape ", known->ToString(),
                                         ", which shape ", shape.ToString(), " does not allow"));
    return;
  }
  *known = shape;
  ForgetValue(out);
  out.shape = shape;
}

void Scope::RefineShape(Output& out, const PartialShape& shape) const {
  PartialShape* known = KnownShape(out, "RefineShape");
  if (known == nullptr) return;
  StatusOr<PartialShape> merged = known->Merge(shape);
  if (!merged.ok()) {
    UpdateStatus(errors::InvalidArgument("'", out.name(), "' has shape ", known->ToString(),
                                         ", which is not compatible with ", shape.ToString()));
    return;
  }
  *known = *merged;
  out.shape = *merged;
}

// Forgets the value inference knew of `out` (a Const's): it would fix the
// shape that RelaxShape has just made less specific.
void Scope::ForgetValue(const Output& out) const {
  NodeAnnotation& a = state_->annotations[FindNode(out.node)];
  if (out.port < static_cast<int>(a.output_values.size())) a.output_values[out.port] = Tensor();
}

}  // namespace tfd
