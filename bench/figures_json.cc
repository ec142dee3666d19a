#include "bench/figures_json.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <thread>

#include "bench/stats.h"

namespace tfd::bench {
namespace {

using nlohmann::json;

// The first line of `path` that starts with `prefix`, after its "key: ";
// "?" when there is none.
std::string FirstLine(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t colon = prefix.empty() ? std::string::npos : line.find(": ");
    return colon == std::string::npos ? line : line.substr(colon + 2);
  }
  return "?";
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

FiguresJson::FiguresJson(const std::string& bench, int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  doc_ = {{"schema", "tfd-bench-figures/1"},
          {"bench", bench},
          {"date", UtcNow()},
          {"command", command},
          {"host",
           {{"cpu", FirstLine("/proc/cpuinfo", "model name")},
            {"cpus", std::thread::hardware_concurrency()},
            {"kernel", FirstLine("/proc/sys/kernel/osrelease", "")},
            {"load_before", FirstLine("/proc/loadavg", "")}}},
          {"figures", json::array()}};
}

json& FiguresJson::Add(const std::string& table, const std::string& row,
                       const std::string& series, const std::string& unit, double value) {
  doc_["figures"].push_back(
      {{"table", table}, {"row", row}, {"series", series}, {"unit", unit}, {"value", value}});
  return doc_["figures"].back();
}

void FiguresJson::AddSamples(const std::string& table, const std::string& row,
                             const std::string& series, const std::string& unit,
                             const std::vector<double>& samples) {
  if (samples.empty()) return;
  const auto [low, high] = std::minmax_element(samples.begin(), samples.end());
  json& f = Add(table, row, series, unit, Median(samples));
  f["low"] = *low;
  f["high"] = *high;
  f["samples"] = samples.size();
}

Status FiguresJson::Write(const std::string& path) {
  if (path.empty()) return OkStatus();
  doc_["host"]["load_after"] = FirstLine("/proc/loadavg", "");
  std::ofstream out(path, std::ios::trunc);
  out << doc_.dump(1) << "\n";
  out.close();
  if (!out) return errors::Internal("cannot write the figures to '", path, "' (--json)");
  return OkStatus();
}

}  // namespace tfd::bench
