#include "common/cluster_spec.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/device_name.h"
#include "common/file_read.h"

namespace tfd {
namespace {

using nlohmann::json;

// `text` as an error quotes it: at most `max` bytes, each that is not
// printable ASCII as \xNN, and "..." where cut. Errors quote what the user
// gave, which may be binary or megabytes long.
std::string Excerpt(std::string_view text, size_t max = 40) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

// A DNS name has at most 253 characters; an IPv6 address in brackets fewer.
constexpr size_t kMaxHostBytes = 253;

// A sparse task index: decimal digits ("0", "12"; "00" is 0 too), at most
// nine of them so that it fits an int.
std::optional<int> ParseTaskIndex(std::string_view s) {
  int v = 0;
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The addresses of a job given sparsely, {"0": "h:p", "1": "h:q"}, as
// TensorFlow allows: in index order, none skipped, none given twice.
StatusOr<std::vector<std::string>> SparseAddresses(const json& tasks, const std::string& where) {
  std::map<int, std::pair<std::string, std::string>> sparse;  // index -> (key, address)
  for (const auto& [key, addr] : tasks.items()) {
    const std::optional<int> index = ParseTaskIndex(key);
    if (!index) {
      return errors::InvalidArgument(where, " has task index '", Excerpt(key),
                                     "', not a non-negative decimal number");
    }
    if (!addr.is_string()) {
      return errors::InvalidArgument(where, " task ", *index, " has a non-string address");
    }
    auto [it, added] = sparse.try_emplace(*index, key, addr.get<std::string>());
    if (!added) {
      return errors::InvalidArgument(where, " names task ", *index, " twice: as '",
                                     Excerpt(it->second.first), "' and as '", Excerpt(key), "'");
    }
  }
  std::vector<std::string> addresses;
  for (auto& [index, key_and_address] : sparse) {
    if (index != static_cast<int>(addresses.size())) {
      return errors::InvalidArgument(where, " skips task ", addresses.size());
    }
    addresses.push_back(std::move(key_and_address.second));
  }
  return addresses;
}

// The addresses of one job: a list, or the sparse form.
StatusOr<std::vector<std::string>> JobAddresses(const json& tasks, const std::string& where) {
  if (tasks.is_object()) return SparseAddresses(tasks, where);
  if (!tasks.is_array()) return errors::InvalidArgument(where, " must list addresses");
  std::vector<std::string> addresses;
  for (const auto& t : tasks) {
    if (!t.is_string()) return errors::InvalidArgument(where, " lists a non-string address");
    addresses.push_back(t.get<std::string>());
  }
  return addresses;
}

StatusOr<ClusterSpec> FromJsonValue(const json& j, const std::string& what) {
  if (!j.is_object()) {
    return errors::InvalidArgument(what,
                                   " must be a JSON object of jobs ({\"JOB\": [\"HOST:PORT\", ",
                                   "...]}), not ", j.type_name());
  }
  ClusterSpec spec;
  // Each address and the task that has it: two tasks cannot listen on one.
  std::map<std::string, std::string> owners;
  for (const auto& [job, tasks] : j.items()) {
    if (Status s = CheckJobName(job); !s.ok()) return s.WithContext(what);
    const std::string where = what + ": job '" + Excerpt(job, 64) + "'";
    TFD_ASSIGN_OR_RETURN(std::vector<std::string> addresses, JobAddresses(tasks, where));
    for (size_t i = 0; i < addresses.size(); ++i) {
      const std::string task = where + " task " + std::to_string(i);
      if (Status s = CheckTaskAddress(addresses[i]); !s.ok()) return s.WithContext(task);
      auto [it, added] = owners.try_emplace(addresses[i], task);
      if (!added) {
        return errors::InvalidArgument(task, ": address '", addresses[i], "' is also ",
                                       it->second.substr(what.size() + 2),
                                       "'s: each task needs an address of its own");
      }
    }
    spec.AddJob(job, std::move(addresses));
  }
  return spec;
}

// Where parsing `text` failed, for an error: line, column and a short,
// printable excerpt from there (never the whole text, which may be big
// or binary).
std::string JsonErrorPlace(const std::string& text, size_t byte) {
  // nlohmann counts bytes from 1, up to and including the one it failed at.
  const size_t at = std::min(byte > 0 ? byte - 1 : 0, text.size());
  const size_t newline = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
  const size_t column = newline == std::string::npos ? at + 1 : at - newline;
  const size_t from = at > 20 ? at - 20 : 0;
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ", near '" +
         Excerpt(std::string_view(text).substr(from, 40)) + "'";
}

// The text of a cluster spec file, refused when over
// kMaxClusterSpecFileBytes before more than that is read (a pipe or device
// has no size to check first).

}  // namespace

Status CheckTaskAddress(std::string_view address) {
  const std::string quoted = "address '" + Excerpt(address) + "'";
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return errors::InvalidArgument(quoted, " is not HOST:PORT");
  const std::string_view host = address.substr(0, colon), port = address.substr(colon + 1);
  if (host.empty()) return errors::InvalidArgument(quoted, " has no host before its ':'");
  if (host.size() > kMaxHostBytes) {
    return errors::InvalidArgument(quoted, " has a host of ", host.size(),
                                   " bytes, longer than a host name can be (", kMaxHostBytes, ")");
  }
  if (port.empty()) return errors::InvalidArgument(quoted, " has no port after its ':'");
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
      std::stoi(std::string(port)) == 0 || std::stoi(std::string(port)) > 65535) {
    return errors::InvalidArgument(quoted, " has port '", Excerpt(port),
                                   "', not a number from 1 to 65535");
  }
  if (std::any_of(host.begin(), host.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; })) {
    return errors::InvalidArgument(quoted, " has a space or control character in its host");
  }
  const bool bracketed = host.front() == '[' && host.back() == ']' && host.size() > 2;
  if (!bracketed && host.find_first_of("[]") != std::string_view::npos) {
    return errors::InvalidArgument(quoted, " has a stray '[' or ']' (an IPv6 host is [::1])");
  }
  return OkStatus();
}

Status CheckJobName(std::string_view job) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  // '-' too: systemd instances and Kubernetes names use it (tfd@param-server-1).
  auto rest = [&](char c) {
    return letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-';
  };
  if (job.empty() || !letter(job.front()) || !std::all_of(job.begin(), job.end(), rest)) {
    return errors::InvalidArgument("job name '", Excerpt(job),
                                   "' is not a letter followed by letters, digits, '_' and '-'");
  }
  return OkStatus();
}

StatusOr<ClusterSpec> ClusterSpec::FromJson(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return errors::InvalidArgument("cluster spec is not valid JSON: at ",
                                   JsonErrorPlace(text, e.byte));
  }
  return FromJsonValue(j, "cluster spec");
}

StatusOr<ClusterSpec> ClusterSpec::FromFlag(const std::string& value) {
  const size_t first = value.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (value[first] == '{' || value[first] == '[')) {
    return FromJson(value);
  }
  std::error_code ec;
  if (!std::filesystem::exists(value, ec)) {
    // JSON that is no object ("null", "3") is a spec of the wrong kind.
    if (json::accept(value)) return FromJson(value);
    return errors::NotFound("cluster spec file '", Excerpt(value, 256),
                            "' cannot be read: there is no such file (a spec given in the flag "
                            "itself is a JSON object)");
  }
  TFD_ASSIGN_OR_RETURN(const std::string text,
                       ReadFileAtMost(value, kMaxClusterSpecFileBytes, "cluster spec file"));
  auto spec = FromJson(text);
  if (!spec.ok()) return spec.status().WithContext("cluster spec file '" + value + "'");
  return spec;
}

int ClusterSpec::NumTasks(const std::string& job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

int ClusterSpec::NumTasks() const {
  int n = 0;
  for (const auto& [job, tasks] : jobs_) n += static_cast<int>(tasks.size());
  return n;
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
