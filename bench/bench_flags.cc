#include "bench/bench_flags.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include <unistd.h>

namespace tfd::bench {
namespace {

std::string Dashed(std::string_view name) { return "--" + std::string(name); }

StatusOr<int64_t> ParseInt(std::string_view name, const std::string& value, int64_t lo,
                           int64_t hi) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    return errors::InvalidArgument(Dashed(name), " takes whole numbers from ", lo, " to ", hi,
                                   ", not '", value, "'");
  }
  return static_cast<int64_t>(v);
}

template <typename I>
StatusOr<std::vector<I>> ParseIntList(std::string_view name, const std::string& value, int64_t lo,
                                      int64_t hi) {
  std::vector<I> out;
  std::stringstream list(value);
  for (std::string item; std::getline(list, item, ',');) {
    TFD_ASSIGN_OR_RETURN(const int64_t v, ParseInt(name, item, lo, hi));
    out.push_back(static_cast<I>(v));
  }
  if (out.empty() || value.back() == ',') {
    return errors::InvalidArgument(Dashed(name), " takes a comma-separated list of whole numbers, "
                                   "not '", value, "'");
  }
  return out;
}

template <typename I>
std::string Joined(const std::vector<I>& values) {
  std::string text;
  for (const I v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

std::string NumberText(double v) {
  std::ostringstream text;
  text << v;
  return text.str();
}

}  // namespace

BenchFlags::BenchFlags(std::string program, std::string about)
    : program_(std::move(program)), about_(std::move(about)) {}

BenchFlags& BenchFlags::Add(Flag flag) {
  flags_.push_back(std::move(flag));
  return *this;
}

BenchFlags& BenchFlags::Text(std::string_view name, std::string_view value_name,
                             std::string_view help, std::string* out) {
  return Add({std::string(name), std::string(value_name), std::string(help), *out,
              [out](const std::string& v) {
                *out = v;
                return OkStatus();
              }});
}

BenchFlags& BenchFlags::Choice(std::string_view name, std::vector<std::string> choices,
                               std::string_view help, std::string* out) {
  std::string value_name;
  for (const std::string& c : choices) value_name += (value_name.empty() ? "" : "|") + c;
  return Add({std::string(name), value_name, std::string(help), *out,
              [name = std::string(name), choices, value_name, out](const std::string& v) {
                for (const std::string& c : choices) {
                  if (v == c) {
                    *out = v;
                    return OkStatus();
                  }
                }
                return errors::InvalidArgument(Dashed(name), " is one of ", value_name, ", not '",
                                               v, "'");
              }});
}

BenchFlags& BenchFlags::Int(std::string_view name, int64_t lo, int64_t hi, std::string_view help,
                            int64_t* out) {
  return Add({std::string(name), "N", std::string(help), std::to_string(*out),
              [name = std::string(name), lo, hi, out](const std::string& v) {
                TFD_ASSIGN_OR_RETURN(*out, ParseInt(name, v, lo, hi));
                return OkStatus();
              }});
}

BenchFlags& BenchFlags::Int(std::string_view name, int64_t lo, int64_t hi, std::string_view help,
                            int* out) {
  return Add({std::string(name), "N", std::string(help), std::to_string(*out),
              [name = std::string(name), lo, hi, out](const std::string& v) {
                TFD_ASSIGN_OR_RETURN(const int64_t n, ParseInt(name, v, lo, hi));
                *out = static_cast<int>(n);
                return OkStatus();
              }});
}

BenchFlags& BenchFlags::IntList(std::string_view name, int64_t lo, int64_t hi,
                                std::string_view help, std::vector<int>* out) {
  return Add({std::string(name), "LIST", std::string(help), Joined(*out),
              [name = std::string(name), lo, hi, out](const std::string& v) {
                TFD_ASSIGN_OR_RETURN(*out, ParseIntList<int>(name, v, lo, hi));
                return OkStatus();
              }});
}

BenchFlags& BenchFlags::IntList(std::string_view name, int64_t lo, int64_t hi,
                                std::string_view help, std::vector<int64_t>* out) {
  return Add({std::string(name), "LIST", std::string(help), Joined(*out),
              [name = std::string(name), lo, hi, out](const std::string& v) {
                TFD_ASSIGN_OR_RETURN(*out, ParseIntList<int64_t>(name, v, lo, hi));
                return OkStatus();
              }});
}

BenchFlags& BenchFlags::Number(std::string_view name, double lo, double hi,
                               std::string_view help, double* out) {
  return Add({std::string(name), "X", std::string(help), NumberText(*out),
              [name = std::string(name), lo, hi, out](const std::string& v) {
                char* end = nullptr;
                const double x = std::strtod(v.c_str(), &end);
                if (v.empty() || *end != '\0' || !std::isfinite(x) || x < lo || x > hi) {
                  return errors::InvalidArgument(Dashed(name), " takes a number from ",
                                                 NumberText(lo), " to ", NumberText(hi),
                                                 ", not '", v, "'");
                }
                *out = x;
                return OkStatus();
              }});
}

BenchFlags& BenchFlags::Bit(std::string_view name, std::string_view help, bool* out) {
  return Add({std::string(name), "0|1", std::string(help), *out ? "1" : "0",
              [name = std::string(name), out](const std::string& v) {
                if (v != "0" && v != "1") {
                  return errors::InvalidArgument(Dashed(name), " is 0 or 1, not '", v, "'");
                }
                *out = v == "1";
                return OkStatus();
              }});
}

BenchFlags& BenchFlags::Switch(std::string_view name, std::string_view help, bool* out) {
  return Add({std::string(name), "", std::string(help), "", nullptr, out});
}

BenchFlags& BenchFlags::Custom(std::string_view name, std::string_view value_name,
                               std::string_view help, Reader read) {
  return Add({std::string(name), std::string(value_name), std::string(help), "", std::move(read)});
}

BenchFlags& BenchFlags::TfdBinary(const std::string& built, std::string* out) {
  const char* env = std::getenv("TFD");
  *out = env != nullptr && *env != '\0' ? env : built;
  checks_.push_back([out] {
    if (::access(out->c_str(), X_OK) == 0) return OkStatus();
    return errors::NotFound("no tfd binary at '", *out, "' (use --tfd or TFD)");
  });
  return Text("tfd", "PATH", "the tfd binary", out)
      .ShownDefault("$TFD, else the one built with this bench");
}

BenchFlags& BenchFlags::Json(std::string* out) {
  return Text("json", "FILE", "also write the figures to FILE as JSON (bench/figures_json.h)", out);
}

BenchFlags& BenchFlags::ShownDefault(std::string_view text) {
  if (!flags_.empty()) flags_.back().shown_default = text;
  return *this;
}

BenchFlags& BenchFlags::Required() {
  if (!flags_.empty()) flags_.back().required = true;
  return *this;
}

const BenchFlags::Flag* BenchFlags::Find(std::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status BenchFlags::Parse(int argc, char** argv) const {
  std::vector<std::string> given;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return errors::Cancelled("help");
    if (arg.rfind("--", 0) != 0) return errors::InvalidArgument("unexpected argument '", arg, "'");
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const Flag* flag = Find(name);
    if (flag == nullptr) return errors::InvalidArgument("unknown flag --", name);
    given.push_back(name);
    if (!flag->read) {
      if (value) return errors::InvalidArgument("--", name, " takes no value");
      *flag->on = true;
      continue;
    }
    if (!value) {
      if (i + 1 >= argc) return errors::InvalidArgument("--", name, " needs a value");
      value = argv[++i];
    }
    TFD_RETURN_IF_ERROR(flag->read(*value));
  }
  for (const Flag& f : flags_) {
    if (f.required && std::find(given.begin(), given.end(), f.name) == given.end()) {
      return errors::InvalidArgument("--", f.name, " is required");
    }
  }
  for (const auto& check : checks_) TFD_RETURN_IF_ERROR(check());
  return OkStatus();
}

std::string BenchFlags::Usage() const {
  constexpr size_t kIndent = 28, kWidth = 100;
  std::string text = "usage: " + program_ + " [FLAGS]\n" + about_ + "\n";
  for (const Flag& f : flags_) {
    std::string line = "  --" + f.name + (f.value_name.empty() ? "" : " " + f.value_name);
    std::string help = f.help;
    if (f.required) help += " (required)";
    if (!f.shown_default.empty()) help += " (default " + f.shown_default + ")";
    // The help in words, wrapped at kWidth under its column.
    std::istringstream words(help);
    size_t column = line.size();
    if (column >= kIndent) {
      text += line + "\n";
      line.clear();
      column = 0;
    }
    line.append(kIndent - column, ' ');
    column = kIndent;
    bool first = true;
    for (std::string word; words >> word;) {
      if (!first && column + 1 + word.size() > kWidth) {
        text += line + "\n";
        line.assign(kIndent, ' ');
        column = kIndent;
        first = true;
      }
      if (!first) line += ' ', ++column;
      line += word;
      column += word.size();
      first = false;
    }
    text += line + "\n";
  }
  return text;
}

void BenchFlags::ParseOrExit(int argc, char** argv) const {
  const Status s = Parse(argc, argv);
  if (s.ok()) return;
  if (s.code() == Code::kCancelled) {
    std::fputs(Usage().c_str(), stdout);
    std::exit(0);
  }
  std::fprintf(stderr, "%s: error: %s (see %s --help)\n", program_.c_str(),
               s.ToString().c_str(), program_.c_str());
  std::exit(2);
}

}  // namespace tfd::bench
