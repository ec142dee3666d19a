#include "common/cluster_spec.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/device_name.h"

namespace tfd {
namespace {

using nlohmann::json;

StatusOr<ClusterSpec> FromJsonValue(const json& j, const std::string& what) {
  if (!j.is_object()) {
    return errors::InvalidArgument(what, " must be a JSON object of job name -> address list");
  }
  ClusterSpec spec;
  for (const auto& [job, tasks] : j.items()) {
    if (job.empty()) return errors::InvalidArgument(what, " has a job with an empty name");
    std::vector<std::string> addresses;
    if (tasks.is_array()) {
      for (const auto& t : tasks) {
        if (!t.is_string()) {
          return errors::InvalidArgument(what, ": job '", job, "' lists a non-string address");
        }
        addresses.push_back(t.get<std::string>());
      }
    } else if (tasks.is_object()) {
      // TensorFlow also allows {"0": "h:p", "2": "h:q"}: sparse task indices.
      std::map<int, std::string> sparse;
      for (const auto& [index, addr] : tasks.items()) {
        if (!addr.is_string()) {
          return errors::InvalidArgument(what, ": job '", job, "' task ", index,
                                         " has a non-string address");
        }
        try {
          sparse[std::stoi(index)] = addr.get<std::string>();
        } catch (...) {
          return errors::InvalidArgument(what, ": job '", job, "' has task index '", index, "'");
        }
      }
      for (const auto& [i, addr] : sparse) {
        if (i != static_cast<int>(addresses.size())) {
          return errors::InvalidArgument(what, ": job '", job, "' skips task ",
                                         addresses.size());
        }
        addresses.push_back(addr);
      }
    } else {
      return errors::InvalidArgument(what, ": job '", job, "' must list addresses");
    }
    for (const std::string& a : addresses) {
      const size_t colon = a.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == a.size()) {
        return errors::InvalidArgument(what, ": job '", job, "' address '", a,
                                       "' is not host:port");
      }
    }
    spec.AddJob(job, std::move(addresses));
  }
  return spec;
}

}  // namespace

StatusOr<ClusterSpec> ClusterSpec::FromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return errors::InvalidArgument("cluster spec is not valid JSON: ", text);
  return FromJsonValue(j, "cluster spec");
}

StatusOr<ClusterSpec> ClusterSpec::FromFlag(const std::string& value) {
  const size_t first = value.find_first_not_of(" \t\n");
  if (first != std::string::npos && value[first] == '{') return FromJson(value);
  std::ifstream in(value);
  if (!in) return errors::NotFound("cluster spec file '", value, "' cannot be read");
  std::ostringstream buf;
  buf << in.rdbuf();
  auto spec = FromJson(buf.str());
  if (!spec.ok()) return spec.status().WithContext("cluster spec file '" + value + "'");
  return spec;
}

int ClusterSpec::NumTasks(const std::string& job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

bool ClusterSpec::HasTask(const std::string& name) const {
  auto d = DeviceName::Parse(name);
  return d.ok() && d->job && d->task && !d->type && *d->task >= 0 &&
         *d->task < NumTasks(*d->job) && d->TaskName() == name;
}

StatusOr<std::string> ClusterSpec::TaskAddress(const std::string& job, int task) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return errors::NotFound("the cluster has no job '", job, "'");
  if (task < 0 || task >= static_cast<int>(it->second.size())) {
    return errors::NotFound("job '", job, "' has ", it->second.size(), " tasks; there is no task ",
                            task);
  }
  return it->second[task];
}

std::vector<std::string> ClusterSpec::TaskNames() const {
  std::vector<std::string> out;
  for (const auto& [job, tasks] : jobs_) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      out.push_back("/job:" + job + "/replica:0/task:" + std::to_string(i));
    }
  }
  return out;
}

std::string ClusterSpec::ChiefTask() const {
  for (const char* job : {"chief", "worker"}) {
    if (NumTasks(job) > 0) return std::string("/job:") + job + "/replica:0/task:0";
  }
  return "";
}

std::string ClusterSpec::ToJson() const { return json(jobs_).dump(); }

void ClusterSpec::AddJob(const std::string& job, std::vector<std::string> addresses) {
  jobs_[job] = std::move(addresses);
}

StatusOr<TfConfig> ParseTfConfig(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return errors::InvalidArgument("TF_CONFIG is not a JSON object");
  }
  TfConfig config;
  if (j.contains("cluster")) {
    TFD_ASSIGN_OR_RETURN(config.cluster, FromJsonValue(j["cluster"], "TF_CONFIG cluster"));
  }
  if (j.contains("task")) {
    const json& t = j["task"];
    if (!t.is_object()) return errors::InvalidArgument("TF_CONFIG task must be an object");
    if (t.contains("type")) {
      if (!t["type"].is_string()) return errors::InvalidArgument("TF_CONFIG task.type must be a string");
      config.task_type = t["type"].get<std::string>();
    }
    if (t.contains("index")) {
      if (!t["index"].is_number_integer() || t["index"].get<int>() < 0) {
        return errors::InvalidArgument("TF_CONFIG task.index must be a non-negative integer");
      }
      config.task_index = t["index"].get<int>();
    }
  }
  return config;
}

}  // namespace tfd
