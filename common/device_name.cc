#include "common/device_name.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace tfd {
namespace {

std::optional<int> ParseIndex(std::string_view s) {
  int v = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
  return out;
}

}  // namespace

StatusOr<DeviceName> DeviceName::Parse(const std::string& s) {
  DeviceName d;
  if (s.empty()) return d;
  auto bad = [&](std::string_view part, std::string_view why) {
    return errors::InvalidArgument("device '", s, "': part '", part, "' ", why);
  };
  if (s.front() != '/') return errors::InvalidArgument("device '", s, "' must start with '/'");
  std::vector<std::string_view> parts;
  std::string_view rest(s);
  rest.remove_prefix(1);
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    parts.push_back(rest.substr(0, slash));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  for (std::string_view part : parts) {
    const size_t colon = part.find(':');
    if (colon == std::string_view::npos) return bad(part, "is not key:value");
    const std::string_view key = part.substr(0, colon), value = part.substr(colon + 1);
    const std::string ukey = Upper(key);
    if (key == "job") {
      if (value.empty()) return bad(part, "has an empty job name");
      d.job = std::string(value);
    } else if (key == "replica" || key == "task") {
      auto i = ParseIndex(value);
      if (!i) return bad(part, "needs a non-negative index");
      (key == "replica" ? d.replica : d.task) = *i;
    } else if (key == "device") {
      // device:CPU:0, device:GPU:1, device:cpu:0
      const size_t c2 = value.find(':');
      const std::string type = Upper(value.substr(0, c2));
      if (type != "CPU" && type != "GPU") return bad(part, "names an unknown device type");
      d.type = type;
      if (c2 != std::string_view::npos) {
        auto i = ParseIndex(value.substr(c2 + 1));
        if (!i) return bad(part, "needs a non-negative device index");
        d.id = *i;
      }
    } else if (ukey == "CPU" || ukey == "GPU") {
      d.type = ukey;
      auto i = ParseIndex(value);
      if (!i) return bad(part, "needs a non-negative device index");
      d.id = *i;
    } else {
      return bad(part, "is not one of job, replica, task, device, cpu, gpu");
    }
  }
  return d;
}

DeviceName DeviceName::Merge(const DeviceName& base, const DeviceName& over) {
  DeviceName d = base;
  if (over.job) d.job = over.job;
  if (over.replica) d.replica = over.replica;
  if (over.task) d.task = over.task;
  if (over.type) {
    // A new device type makes the base's device index meaningless.
    if (d.type != over.type) d.id.reset();
    d.type = over.type;
  }
  if (over.id) d.id = over.id;
  return d;
}

std::string DeviceName::TaskName() const {
  std::string s;
  if (job) s += "/job:" + *job;
  if (replica) s += "/replica:" + std::to_string(*replica);
  if (task) s += "/task:" + std::to_string(*task);
  return s;
}

std::string DeviceName::ToString() const {
  std::string s = TaskName();
  if (type) {
    s += "/device:" + *type;
    if (id) s += ":" + std::to_string(*id);
  }
  return s;
}

bool DeviceName::CompatibleWith(const DeviceName& o) const {
  auto ok = [](const auto& a, const auto& b) { return !a || !b || *a == *b; };
  return ok(job, o.job) && ok(replica, o.replica) && ok(task, o.task) && ok(type, o.type) &&
         ok(id, o.id);
}

}  // namespace tfd
