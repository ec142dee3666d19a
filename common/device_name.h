// Device names: "/job:ps/replica:0/task:0/device:CPU:0", with every part
// optional in a request ("/job:ps", "/task:1", "/cpu:0", "/device:GPU:0").
//
//   TFD_ASSIGN_OR_RETURN(DeviceName d, DeviceName::Parse("/job:worker/gpu:0"));
//   d = DeviceName::Merge(session_default, d);   // d's parts win
//   d.ToString();                                // "/job:worker/device:GPU:0"
//
// Thread-safety: values.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"

namespace tfd {

struct DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // "CPU" or "GPU", upper case
  std::optional<int> id;

  // INVALID_ARGUMENT naming the string and the part that is wrong.
  static StatusOr<DeviceName> Parse(const std::string& s);
  // `over`'s parts where set, else `base`'s.
  static DeviceName Merge(const DeviceName& base, const DeviceName& over);

  // Canonical form with only the parts that are set; "" when none is.
  std::string ToString() const;
  // "/job:J/replica:R/task:T", the task part alone ("" parts omitted).
  std::string TaskName() const;
  bool fully_specified() const { return job && replica && task && type && id; }
  // True when every part set in both is equal.
  bool CompatibleWith(const DeviceName& other) const;
  bool operator==(const DeviceName&) const = default;
};

}  // namespace tfd
