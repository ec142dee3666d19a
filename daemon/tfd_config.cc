#include "daemon/tfd_config.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>

#include "daemon/tfd_flag_sources.h"
#include "daemon/tfd_flags.h"

namespace tfd {

bool IsLoopbackAddress(const std::string& address) {
  const std::string host = address.substr(0, address.rfind(':'));
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "[::1]" || host == "::1";
}

std::string DefaultListenAddress(const std::string& own_address) {
  if (IsLoopbackAddress(own_address)) return own_address;
  return "*" + own_address.substr(own_address.rfind(':'));
}

namespace {

// Cluster, job and task from TF_CONFIG where no flag, variable or file gave
// them; then checks that they name a task of the cluster, and listens at
// its address unless told otherwise.
Status PlaceTask(const FlagValues& values, const std::optional<TfConfig>& tf_config,
                 TfdConfig& c) {
  if (!values.Find("cluster")) {
    if (!tf_config || tf_config->cluster.jobs().empty()) {
      return errors::InvalidArgument("--cluster is required (or TFD_CLUSTER, or TF_CONFIG's cluster)");
    }
    c.cluster = tf_config->cluster;
  }
  if (!values.Find("job")) {
    if (!tf_config || tf_config->task_type.empty()) {
      return errors::InvalidArgument("--job is required (or TFD_JOB, or TF_CONFIG's task.type)");
    }
    c.job = tf_config->task_type;
  }
  if (!values.Find("task")) {
    if (!tf_config || tf_config->task_index < 0) {
      return errors::InvalidArgument("--task is required (or TFD_TASK, or TF_CONFIG's task.index)");
    }
    c.task = tf_config->task_index;
  }
  if (!c.cluster.HasJob(c.job)) {
    return errors::InvalidArgument("--job '", c.job, "' is not in the cluster spec");
  }
  if (c.task >= c.cluster.NumTasks(c.job)) {
    return errors::InvalidArgument("--task ", c.task, " is out of range: job '", c.job, "' has ",
                                   c.cluster.NumTasks(c.job), " tasks");
  }
  if (!values.Find("listen")) c.listen = DefaultListenAddress(*c.cluster.TaskAddress(c.job, c.task));
  return OkStatus();
}

// Loaded now, so a bad file stops the task before it serves anyone; and
// peers take who a task is from its certificate, so it must be this one's.
Status LoadTls(TfdConfig& c) {
  if (!c.tls_files.enabled()) return OkStatus();
  TFD_ASSIGN_OR_RETURN(c.tls, Tls::Load(c.tls_files));
  const std::string task = "/job:" + c.job + "/replica:0/task:" + std::to_string(c.task);
  if (c.tls->identity().task != task) {
    return errors::InvalidArgument(
        "--tls-cert '", c.tls_files.cert, "' names ", c.tls->identity().Describe(),
        ", but this is ", task, ": each task needs its own certificate, with URI:tfd:task/", c.job,
        "/", c.task, " among its subjectAltNames (docs/operations.md, TLS)");
  }
  return OkStatus();
}

}  // namespace

StatusOr<TfdConfig> ParseTfdConfig(int argc, const char* const* argv,
                                   const std::function<const char*(const char*)>& getenv) {
  TfdConfig c;
  c.usage = TfdUsage();
  TFD_ASSIGN_OR_RETURN(FlagValues values, ReadFlagValues(argc, argv, getenv));
  if (values.help || values.version) {
    c.help = values.help.has_value();
    c.help_format = values.help.value_or("");
    c.version = values.version;
    return c;
  }
  std::optional<TfConfig> tf_config;
  if (const char* tc = getenv("TF_CONFIG"); tc && *tc) {
    TFD_ASSIGN_OR_RETURN(tf_config, ParseTfConfig(tc));
  }
  for (const TfdFlag& flag : TfdFlags()) {
    if (const FlagValue* v = values.Find(flag.name)) TFD_RETURN_IF_ERROR(ApplyFlag(flag, *v, c));
  }
  TFD_RETURN_IF_ERROR(PlaceTask(values, tf_config, c));
  TFD_RETURN_IF_ERROR(LoadTls(c));
  return c;
}

std::optional<uint64_t> ParseByteSize(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  uint64_t n = 0;
  const char* const end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, n);
  if (error != std::errc()) return std::nullopt;
  const size_t used = static_cast<size_t>(stop - text.data());
  // K, M, G or T, alone or followed by B or iB; all binary.
  const std::string_view suffix = std::string_view(text).substr(used);
  int shift = 0;
  if (!suffix.empty()) {
    static constexpr std::string_view kUnits = "KMGT";
    const size_t unit =
        kUnits.find(static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0]))));
    const std::string_view rest = suffix.substr(1);
    if (unit == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "iB")) {
      return std::nullopt;
    }
    shift = 10 * static_cast<int>(unit + 1);
  }
  if (n == 0 || n > (std::numeric_limits<uint64_t>::max() >> shift)) return std::nullopt;
  return n << shift;
}

StatusOr<TfdConfig> ParseTfdFlags(const std::vector<std::string>& flags,
                                  const std::function<const char*(const char*)>& getenv) {
  std::vector<const char*> argv{"tfd"};
  for (const std::string& flag : flags) argv.push_back(flag.c_str());
  return ParseTfdConfig(static_cast<int>(argv.size()), argv.data(), getenv);
}

}  // namespace tfd
