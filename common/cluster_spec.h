// ClusterSpec: job name -> ordered task addresses ("host:port").
//
// Users give it as JSON ('{"ps": ["h:2222"], "worker": ["h:2223"]}'), as the
// path of a file holding that JSON, or inside TF_CONFIG
// ('{"cluster": {...}, "task": {"type": "worker", "index": 0}}').
//
//   TFD_ASSIGN_OR_RETURN(ClusterSpec spec, ClusterSpec::FromFlag(flag_value));
//   spec.TaskAddress("ps", 0);          // "h:2222"
//
// Thread-safety: values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace tfd {

class ClusterSpec {
 public:
  ClusterSpec() = default;

  // JSON text of the job map. INVALID_ARGUMENT names what is malformed.
  static StatusOr<ClusterSpec> FromJson(const std::string& json);
  // JSON text if it starts with '{', else the path of a file holding it.
  static StatusOr<ClusterSpec> FromFlag(const std::string& value);

  const std::map<std::string, std::vector<std::string>>& jobs() const { return jobs_; }
  bool HasJob(const std::string& job) const { return jobs_.count(job) > 0; }
  int NumTasks(const std::string& job) const;
  // NOT_FOUND naming the job or task when absent.
  StatusOr<std::string> TaskAddress(const std::string& job, int task) const;
  // Every task as "/job:J/replica:0/task:T", in job then index order.
  std::vector<std::string> TaskNames() const;
  // Whether `name` is exactly "/job:J/replica:0/task:T" of a task here (as
  // TaskNames spells it): how a task checks a peer's name for itself.
  bool HasTask(const std::string& name) const;
  // TensorFlow's chief: "/job:chief/replica:0/task:0" when the cluster has a
  // chief job (Kubeflow's TFJob, Estimator), else worker:0 when it has a
  // worker job; "" when it has neither.
  std::string ChiefTask() const;

  std::string ToJson() const;
  void AddJob(const std::string& job, std::vector<std::string> addresses);

 private:
  std::map<std::string, std::vector<std::string>> jobs_;
};

// The parsed TF_CONFIG environment variable.
struct TfConfig {
  ClusterSpec cluster;
  std::string task_type;  // "" when absent
  int task_index = -1;    // -1 when absent
};
StatusOr<TfConfig> ParseTfConfig(const std::string& json);

}  // namespace tfd
