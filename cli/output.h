// How tfctl prints: tensors, traces and errors, for people and for scripts.
//
// Human output is one line per fetched tensor (`y = float32[2, 2] [[1 2] [3 4]]`);
// JSON output is a single line with ", " and ": " separators, values nested
// by shape, floats in their shortest round-trip form; NaN and the
// infinities, which JSON numbers cannot hold, are the strings "nan", "inf"
// and "-inf", which --feed reads back (cli/feed_parser.h). Errors always go
// to stderr as
// `error: CODE: message`; with JSON output a {"error": {...}} object also goes
// to stdout so a script reading stdout sees why it got no result.
//
//   std::cout << FormatFetch("y", t) << "\n";
//   std::cout << DumpJson({{"fetches", {{"y", TensorToJson(t)}}}}) << "\n";
//   return ReportError(status, OutputFormat::kJson);   // returns 1
//
// Thread-safety: plain functions; the printers write to std::cout / std::cerr.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "common/step_stats.h"
#include "common/tensor.h"

namespace tfd::cli {

enum class OutputFormat { kHuman, kJson, kMarkdown };

using Json = nlohmann::ordered_json;

// "human", "json" (and "markdown" when allowed); UsageError otherwise.
OutputFormat ParseOutputFormat(const std::string& name, bool allow_markdown);

// Prints the error (see above) and returns the exit code for it, 1.
int ReportError(const Status& status, OutputFormat format = OutputFormat::kHuman);

// Values nested by shape, "[[1 2] [3 4]]"; after `limit` values "...".
// Floats print in their shortest round-trip form, strings JSON-quoted.
std::string FormatValues(const Tensor& t, int64_t limit);
// "NAME = dtype[shape] values".
std::string FormatFetch(const std::string& name, const Tensor& t, int64_t limit = 1000);

// {"dtype": ..., "shape": [...], "values": nested}.
Json TensorToJson(const Tensor& t);
// A floating-point value as tfctl writes it in JSON, everywhere: a number
// when finite, else "inf", "-inf" or "nan" (any NaN, whatever its sign).
Json FloatToJson(double v);
// One line, separators ", " and ": ", keys in insertion order; invalid UTF-8
// in strings is replaced rather than thrown on.
std::string DumpJson(const Json& j);

// The step's nodes grouped by device, ordered by start: start offset from
// the step's first node and duration, in microseconds.
std::string FormatTrace(const StepStats& stats);
// [{"device": ..., "nodes": [{"node", "op", "start_us", "duration_us", "thread"}]}]
Json TraceToJson(const StepStats& stats);

}  // namespace tfd::cli
