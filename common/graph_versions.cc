#include "common/graph_versions.h"

#include <algorithm>

namespace tfd {
namespace {

std::string JoinVersions(const std::vector<int32_t>& versions) {
  std::string out;
  for (int32_t v : versions) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

}  // namespace

Status CheckGraphVersions(const GraphVersions& v) {
  if (v.producer < kGraphMinProducer) {
    return errors::FailedPrecondition(
        "the graph was written by tfd graph version ", v.producer, "; this tfd is graph version ",
        kGraphVersion, " and runs graphs from graph version ", kGraphMinProducer,
        " on: write the graph again with a newer tfd");
  }
  if (v.min_consumer > kGraphVersion) {
    return errors::FailedPrecondition(
        "the graph needs tfd graph version ", v.min_consumer,
        " or newer (its min_consumer; it was written by tfd graph version ", v.producer,
        "); this tfd is graph version ", kGraphVersion, ": upgrade this tfd");
  }
  if (std::find(v.bad_consumers.begin(), v.bad_consumers.end(), kGraphVersion) !=
      v.bad_consumers.end()) {
    return errors::FailedPrecondition(
        "the graph may not run on tfd graph version ", kGraphVersion,
        ", which this tfd is (its bad_consumers: ", JoinVersions(v.bad_consumers),
        "; it was written by tfd graph version ", v.producer,
        "): run it on a tfd of another graph version");
  }
  return OkStatus();
}

bool WrittenByNewerTfd(const GraphVersions& v) { return v.producer > kGraphVersion; }

Status NewerGraphError(const GraphVersions& v, const std::string& why) {
  return errors::FailedPrecondition(why, ": the graph was written by tfd graph version ",
                                    v.producer, " and this tfd is graph version ", kGraphVersion,
                                    ": upgrade this tfd to run it");
}

GraphVersions CombineGraphVersions(const GraphVersions& a, const GraphVersions& b) {
  GraphVersions out;
  out.producer = std::max(a.producer, b.producer);
  out.min_consumer = std::max(a.min_consumer, b.min_consumer);
  out.bad_consumers = a.bad_consumers;
  for (int32_t v : b.bad_consumers) {
    if (std::find(out.bad_consumers.begin(), out.bad_consumers.end(), v) ==
        out.bad_consumers.end()) {
      out.bad_consumers.push_back(v);
    }
  }
  return out;
}

std::string GraphVersionsToString(const GraphVersions& v) {
  std::string out = "producer " + std::to_string(v.producer) + ", min consumer " +
                    std::to_string(v.min_consumer);
  if (!v.bad_consumers.empty()) out += ", bad consumers " + JoinVersions(v.bad_consumers);
  return out;
}

}  // namespace tfd
