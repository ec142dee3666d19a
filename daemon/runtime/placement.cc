#include "daemon/runtime/placement.h"

#include "daemon/runtime/gpu_placement.h"

namespace tfd {
namespace {

std::string Where(const Graph::Node& n) { return "node '" + n.name() + "' (" + n.op() + ")"; }

}  // namespace

StatusOr<std::vector<std::string>> Place(const Graph& graph, const PlacementOptions& options) {
  const int n = graph.num_nodes();
  const std::string& master_job = options.master.job.value_or("localhost");
  const int master_task = options.master.task.value_or(0);

  std::vector<DeviceName> requested(n);
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    auto d = DeviceName::Parse(node.def.device);
    if (!d.ok()) return d.status().WithContext(Where(node));
    requested[id] = *d;
  }

  // Colocate reference consumers with the resource they take: the group's
  // request is its resource owner's (the member taking no reference input).
  const std::vector<int> root_of = ColocationRoots(graph);

  std::vector<DeviceName> placed(n);
  for (int id = 0; id < n; ++id) {
    const Graph::Node& node = graph.node(id);
    const int root = root_of[id];
    DeviceName d = requested[root];
    if (root != id && !requested[id].CompatibleWith(d) && options.logger) {
      options.logger->warn("{} asks for '{}' but runs with the resource it uses, on '{}'",
                           Where(node), requested[id].ToString(), d.ToString());
    }
    if (!d.job && !d.task) {
      // TF1's MasterSession places an unconstrained node on its own task
      // (its default device is its local CPU): a worker's step must not
      // depend on another worker when the graph forgot a device.
      d.job = master_job;
      d.task = master_task;
    } else if (!d.job) {
      d.job = master_job;
    } else if (!d.task) {
      d.task = *d.job == master_job ? master_task : 0;
    }
    const Graph::Node& culprit = graph.node(root);
    if (!options.cluster.HasJob(*d.job)) {
      std::string jobs;
      for (const auto& [job, tasks] : options.cluster.jobs()) jobs += (jobs.empty() ? "" : ", ") + job;
      return errors::InvalidArgument(Where(culprit), ": device '", culprit.def.device,
                                     "' names job '", *d.job,
                                     "', which is not in the cluster (jobs: ", jobs, ")");
    }
    if (*d.task >= options.cluster.NumTasks(*d.job)) {
      return errors::InvalidArgument(Where(culprit), ": device '", culprit.def.device,
                                     "' names /job:", *d.job, "/task:", *d.task, ", but job '",
                                     *d.job, "' has ", options.cluster.NumTasks(*d.job), " tasks");
    }
    placed[id] = d;
  }

  // GPUs: known on the master's own task only.
  auto on_master = [&](int id) {
    return placed[id].job == master_job && placed[id].task == master_task;
  };
  std::map<std::string, std::string> whole_blockers;
  if (options.whole_graph != nullptr && options.master_gpus > 0) {
    whole_blockers = GpuBlockers(*options.whole_graph);
  }
  GpuPlacementOptions gpu_options{
      .gpus = [&](int id) { return on_master(id) ? options.master_gpus : 0; },
      .unavailable = options.master_gpus > 0 || options.gpus_unavailable.empty()
                         ? "the master knows only its own task's GPUs"
                         : options.gpus_unavailable,
      .allow_soft_placement = options.allow_soft_placement,
      .logger = options.logger,
      .whole_graph_blockers = &whole_blockers};
  std::vector<DeviceName> wanted(n);
  for (int id = 0; id < n; ++id) wanted[id] = placed[root_of[id]];
  TFD_ASSIGN_OR_RETURN(std::vector<int> gpu, PlaceOnGpus(graph, wanted, gpu_options));

  std::vector<std::string> devices(n);
  for (int id = 0; id < n; ++id) {
    DeviceName d = placed[id];
    d.replica = 0;
    d.type = gpu[id] >= 0 ? kDeviceGpu : kDeviceCpu;
    d.id = gpu[id] >= 0 ? gpu[id] : 0;
    devices[id] = d.ToString();
  }
  return devices;
}

}  // namespace tfd
