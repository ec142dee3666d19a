#include "api/placement.h"

#include <algorithm>
#include <memory>

#include "common/device_name.h"

namespace tfd::train {
namespace {

// The chooser's state, shared by copies of the device function.
struct Chooser {
  ReplicaDeviceSetterOptions options;
  int next = 0;                // round robin
  std::vector<int64_t> loads;  // greedy: bytes per task so far

  int ChooseTask(const NodeDef& node) {
    if (options.strategy == PsStrategy::kRoundRobin) {
      const int task = next;
      next = (next + 1) % options.ps_tasks;
      return task;
    }
    const auto least = std::min_element(loads.begin(), loads.end());
    *least += VariableBytes(node);
    return static_cast<int>(least - loads.begin());
  }
};

// `chosen` with the parts the node requests itself put over it; the node's
// request alone when `chosen` does not parse (reported by the scope).
std::string MergeRequest(const std::string& chosen, const std::string& requested) {
  auto base = DeviceName::Parse(chosen);
  auto over = DeviceName::Parse(requested);
  if (!base.ok() || !over.ok()) return base.ok() ? requested : chosen;
  return DeviceName::Merge(*base, *over).ToString();
}

}  // namespace

int64_t VariableBytes(const NodeDef& node) {
  auto shape = node.attrs.find("shape");
  auto dtype = node.attrs.find("dtype");
  if (shape == node.attrs.end() || dtype == node.attrs.end()) return 0;
  const auto* s = std::get_if<PartialShape>(&shape->second);
  const auto* d = std::get_if<DType>(&dtype->second);
  if (!s || !d || !s->IsFullyDefined()) return 0;
  return s->num_elements() * static_cast<int64_t>(DTypeSize(*d));
}

Scope::DeviceFunction ReplicaDeviceSetter(ReplicaDeviceSetterOptions options) {
  auto chooser = std::make_shared<Chooser>();
  chooser->loads.assign(std::max(options.ps_tasks, 0), 0);
  chooser->options = std::move(options);
  return [chooser](const NodeDef& node) -> std::string {
    const ReplicaDeviceSetterOptions& o = chooser->options;
    const bool ps_op = std::find(o.ps_ops.begin(), o.ps_ops.end(), node.op) != o.ps_ops.end();
    if (!ps_op || o.ps_tasks <= 0) return MergeRequest(o.worker_device, node.device);
    const int task = chooser->ChooseTask(node);
    return MergeRequest(o.ps_device + "/task:" + std::to_string(task), node.device);
  };
}

}  // namespace tfd::train
