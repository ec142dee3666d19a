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

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tfd {

// The largest cluster spec file read. A spec only lists addresses (a
// thousand tasks take some 30 KB), so a bigger file is a mistake, and
// reading it whole could exhaust memory (as kMaxGraphFileBytes for graphs).
inline constexpr size_t kMaxClusterSpecFileBytes = size_t{16} << 20;

// OK when `address` is HOST:PORT as a task's address must be: a host (a
// name, an IPv4 address, or an IPv6 one in brackets) without spaces or
// control characters, ':', and a port of 1 to 5 digits from 1 to 65535.
// Else INVALID_ARGUMENT quoting the address and saying what is wrong.
Status CheckTaskAddress(std::string_view address);

// OK when `job` is a job name device names can carry: a letter,
// then letters, digits, '_' and '-'. Else INVALID_ARGUMENT quoting it.
Status CheckJobName(std::string_view job);

class ClusterSpec {
 public:
  ClusterSpec() = default;

  // JSON text of the job map. INVALID_ARGUMENT names what is malformed: the
  // position of a JSON syntax error (with a short excerpt, never the whole
  // text), a job name that is not CheckJobName's, an address that is not
  // CheckTaskAddress's, an address given twice (in one job or two), a task
  // index given twice or skipped in the sparse form {"0": ..., "2": ...}.
  static StatusOr<ClusterSpec> FromJson(const std::string& json);
  // JSON text if it starts with '{' or '[', else the path of a file holding
  // it. A file over kMaxClusterSpecFileBytes is INVALID_ARGUMENT naming its
  // path and size; a value that is no file but is JSON other than an object
  // (null, 3) is INVALID_ARGUMENT, not a file that cannot be read.
  static StatusOr<ClusterSpec> FromFlag(const std::string& value);

  const std::map<std::string, std::vector<std::string>>& jobs() const { return jobs_; }
  bool HasJob(const std::string& job) const { return jobs_.count(job) > 0; }
  int NumTasks(const std::string& job) const;
  // Tasks of every job: 0 for "{}", which a command that talks to the
  // cluster's tasks refuses.
  int NumTasks() const;
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
