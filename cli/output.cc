#include "cli/output.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/commands.h"

namespace tfd::cli {
namespace {

// The shortest text that reads back as the same float: 0.1f prints "0.1",
// not the "0.100000001" a widening to double would show.
template <typename F>
std::string ShortestFloat(F v) {
  // to_chars writes "-nan" for a NaN with its sign bit set; a NaN has no
  // sign worth showing (numpy prints "nan" for both).
  if (std::isnan(v)) return "nan";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return std::to_string(v);
  return std::string(buf, end);
}

template <typename T>
std::string ValueText(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return Json(v).dump(-1, ' ', false, Json::error_handler_t::replace);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_floating_point_v<T>) {
    return ShortestFloat(v);
  } else {
    return std::to_string(static_cast<int64_t>(v));
  }
}

template <typename T>
Json ValueJson(const T& v) {
  if constexpr (std::is_same_v<T, float>) {
    // Widen through the shortest decimal form so JSON shows what float32 holds.
    if (!std::isfinite(v)) return FloatToJson(v);
    return Json(std::strtod(ShortestFloat(v).c_str(), nullptr));
  } else if constexpr (std::is_same_v<T, double>) {
    return FloatToJson(v);
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return Json(static_cast<int>(v));
  } else {
    return Json(v);
  }
}

template <typename T>
void AppendNested(std::string& out, const T* data, const TensorShape& shape, int dim,
                  int64_t& index, int64_t limit) {
  if (dim == shape.rank()) {
    out += ValueText(data[index++]);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape.dim(dim); ++i) {
    if (index >= limit) {
      out += i ? " ..." : "...";
      break;
    }
    if (i) out += ' ';
    AppendNested(out, data, shape, dim + 1, index, limit);
  }
  out += ']';
}

template <typename T>
Json NestedJson(const T* data, const TensorShape& shape, int dim, int64_t& index) {
  if (dim == shape.rank()) return ValueJson(data[index++]);
  Json list = Json::array();
  for (int64_t i = 0; i < shape.dim(dim); ++i) list.push_back(NestedJson(data, shape, dim + 1, index));
  return list;
}

void DumpTo(const Json& j, std::string& out) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += Json(key).dump(-1, ' ', false, Json::error_handler_t::replace);
      out += ": ";
      DumpTo(value, out);
    }
    out += '}';
  } else if (j.is_array()) {
    out += '[';
    bool first = true;
    for (const Json& e : j) {
      if (!first) out += ", ";
      first = false;
      DumpTo(e, out);
    }
    out += ']';
  } else {
    out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

// Nodes of one device in start order, with times relative to the step start.
std::map<std::string, std::vector<const NodeExecStats*>> ByDevice(const StepStats& stats,
                                                                   int64_t* step_start) {
  std::map<std::string, std::vector<const NodeExecStats*>> devices;
  *step_start = 0;
  bool first = true;
  for (const NodeExecStats& n : stats.nodes) {
    devices[n.device].push_back(&n);
    if (first || n.start_micros < *step_start) *step_start = n.start_micros;
    first = false;
  }
  for (auto& [device, nodes] : devices) {
    std::stable_sort(nodes.begin(), nodes.end(), [](const auto* a, const auto* b) {
      return a->start_micros < b->start_micros;
    });
  }
  return devices;
}

}  // namespace

OutputFormat ParseOutputFormat(const std::string& name, bool allow_markdown) {
  if (name == "human") return OutputFormat::kHuman;
  if (name == "json") return OutputFormat::kJson;
  if (name == "markdown" && allow_markdown) return OutputFormat::kMarkdown;
  throw UsageError("unknown --output '" + name + "' (expected human, json" +
                   (allow_markdown ? ", markdown)" : ")"));
}

int ReportError(const Status& status, OutputFormat format) {
  const std::string code(CodeName(status.code()));
  std::cout.flush();
  std::cerr << "error: " << code << ": " << status.message() << std::endl;
  if (format == OutputFormat::kJson) {
    std::cout << DumpJson(Json{{"error", {{"code", code}, {"message", status.message()}}}})
              << std::endl;
  }
  return 1;
}

std::string FormatValues(const Tensor& t, int64_t limit) {
  std::string out;
  int64_t index = 0;
  TFD_SWITCH_ALL(t.dtype(), T, AppendNested(out, t.data<T>(), t.shape(), 0, index, limit),
                 return "<uninitialized>");
  return out;
}

std::string FormatFetch(const std::string& name, const Tensor& t, int64_t limit) {
  return name + " = " + t.Describe() + " " + FormatValues(t, limit);
}

Json FloatToJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

Json TensorToJson(const Tensor& t) {
  Json shape = Json::array();
  for (int64_t d : t.shape().dims()) shape.push_back(d);
  Json values;
  int64_t index = 0;
  TFD_SWITCH_ALL(t.dtype(), T, values = NestedJson(t.data<T>(), t.shape(), 0, index),
                 values = nullptr);
  return Json{{"dtype", std::string(DTypeName(t.dtype()))},
              {"shape", std::move(shape)},
              {"values", std::move(values)}};
}

std::string DumpJson(const Json& j) {
  std::string out;
  DumpTo(j, out);
  return out;
}

std::string FormatTrace(const StepStats& stats) {
  int64_t start = 0;
  std::ostringstream out;
  out << "trace: " << stats.nodes.size() << " nodes\n";
  for (const auto& [device, nodes] : ByDevice(stats, &start)) {
    out << "  " << device << "\n";
    out << "    " << "start_us  duration_us  thread  node (op)\n";
    for (const NodeExecStats* n : nodes) {
      char line[96];
      std::snprintf(line, sizeof(line), "    %8lld  %11lld  %6llu  ",
                    static_cast<long long>(n->start_micros - start),
                    static_cast<long long>(n->end_micros - n->start_micros),
                    static_cast<unsigned long long>(n->thread));
      out << line << n->node << " (" << n->op << ")";
      if (!n->label.empty()) out << ": " << n->label;
      out << "\n";
    }
  }
  return out.str();
}

Json TraceToJson(const StepStats& stats) {
  int64_t start = 0;
  Json devices = Json::array();
  for (const auto& [device, nodes] : ByDevice(stats, &start)) {
    Json list = Json::array();
    for (const NodeExecStats* n : nodes) {
      Json node{{"node", n->node},
                {"op", n->op},
                {"start_us", n->start_micros - start},
                {"duration_us", n->end_micros - n->start_micros},
                {"thread", n->thread}};
      if (!n->label.empty()) node["label"] = n->label;
      list.push_back(std::move(node));
    }
    devices.push_back(Json{{"device", device}, {"nodes", std::move(list)}});
  }
  return devices;
}

}  // namespace tfd::cli
