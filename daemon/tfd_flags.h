// tfd's flags, each declared once, in one table (tfd_flags.cc): its name,
// which is also its TFD_* variable and its key in a --config file, its
// value's kind and validation, its default as people read it, its help.
// Parsing (tfd_config.cc, flag_sources.cc) and every text that lists the
// flags — `tfd --help`, the man page, the bash completion, docs/cli.md's
// table (tfd_flags_doc.cc) — read this table, so they cannot disagree.
//
// The table is constant and may be read from any thread.
//
//   for (const TfdFlag& flag : TfdFlags()) {
//     if (auto v = values.Find(flag.name)) TFD_RETURN_IF_ERROR(ApplyFlag(flag, *v, config));
//   }
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "common/status.h"

namespace tfd {

struct TfdConfig;

// Where --help, the man page and docs/cli.md list a flag. The order is theirs.
enum class FlagGroup { kProgram, kTask, kLogging, kExecution, kConnections, kSizes, kDataPlane, kTls };
inline constexpr int kNumFlagGroups = static_cast<int>(FlagGroup::kTls) + 1;
// "Logging and metrics", ...: the group's title.
std::string_view FlagGroupTitle(FlagGroup group);

// A value as read, with where it came from: "--threads", "TFD_THREADS" or
// "threads in 'FILE'". Errors name the source, so a user finds the value.
struct FlagValue {
  std::string text;
  std::string source;
};

// The kinds of value, each with its own validation and error message.
// `set` stores a valid value in the configuration.
//
// Command line only, never a variable or a --config key: --help, --version.
struct CommandLineFlag {};
// Any text (a name, a path, an address).
struct TextFlag {
  void (*set)(TfdConfig&, std::string);
};
// On when given; as a variable, "1" or "true" turn it on and anything else
// leaves it off. No source turns it off.
struct SwitchFlag {
  void (*set)(TfdConfig&);
};
// A whole number from `min` to `max`. `unit` follows the range in errors.
struct IntFlag {
  int64_t min;
  int64_t max;
  void (*set)(TfdConfig&, int64_t);
  std::string_view unit = {};
  // Text after the number is ignored ("4x" is 4), as tfd always did for
  // this flag; kept so that no working command line starts failing.
  // TODO(cleanup): refuse it, with a note in the release that does.
  bool trailing_text_ignored = false;
};
// A positive number of seconds, fractions allowed, at most 1e9; stored
// rounded down to milliseconds, at least 1 ms.
struct SecondsFlag {
  void (*set)(TfdConfig&, std::chrono::milliseconds);
  bool trailing_text_ignored = false;  // as IntFlag's
};
// A positive number of bytes, with an optional binary suffix (ParseByteSize),
// at most `max` (0: no bound but uint64's), whose reason is `max_why`.
struct BytesFlag {
  void (*set)(TfdConfig&, uint64_t);
  uint64_t max = 0;
  std::string_view max_why = {};
};
// One of `choices`. `hint`, when set, is appended to the error: what the
// choices mean, or why a value that once worked no longer does.
struct ChoiceFlag {
  std::span<const std::string_view> choices;
  void (*set)(TfdConfig&, std::string_view);
  std::string (*hint)(std::string_view bad) = nullptr;
};
// A value with a check of its own (a cluster spec, HOST:PORT, a token file):
// `set` returns INVALID_ARGUMENT naming `value.source`, or stores it.
struct CheckedFlag {
  Status (*set)(TfdConfig&, const FlagValue& value);
};
// A flag tfd no longer has: refused from every source, saying `why`.
// Hidden from help, man page, completion and docs.
struct RemovedFlag {
  std::string_view why;
};
using FlagKind = std::variant<CommandLineFlag, TextFlag, SwitchFlag, IntFlag, SecondsFlag,
                              BytesFlag, ChoiceFlag, CheckedFlag, RemovedFlag>;

struct TfdFlag {
  // Without dashes: "max-connections" is --max-connections, the variable
  // TFD_MAX_CONNECTIONS (EnvName) and `max-connections = ...` in --config.
  std::string_view name;
  FlagGroup group;
  // What the value is, for the man page and docs: N, S, BYTES, FILE, DIR,
  // HOST:PORT, SPEC; empty for switches. FILE and DIR (and SPEC, which may
  // be a file) also tell the completion to offer paths.
  std::string_view value_name;
  // The default as people read it ("1024", "3/4 of memory"); empty: none.
  // TfdConfig's initializers hold the values (tests/daemon/tfd_flags_test.cc
  // checks the two agree).
  std::string_view default_text;
  std::string_view help;
  FlagKind kind;
  char short_name = '\0';  // -h for --help; no other flag has one
};

// Every flag, removed ones included, in the order help lists them.
std::span<const TfdFlag> TfdFlags();
// "TFD_" and the name in capitals, '-' as '_'.
std::string EnvName(std::string_view flag_name);
// Whether the flag may come from TFD_* and --config (all but CommandLineFlag).
bool HasEnvName(const TfdFlag& flag);
// Whether help, man page, completion and docs list it (all but RemovedFlag).
bool IsListed(const TfdFlag& flag);
// The choices of a ChoiceFlag; empty for other kinds.
std::span<const std::string_view> FlagChoices(const TfdFlag& flag);

// Checks `value` against the flag's kind and stores it in `config`; else
// INVALID_ARGUMENT naming value.source and the bad value. A SwitchFlag's
// value is already decided (it is present only when on).
Status ApplyFlag(const TfdFlag& flag, const FlagValue& value, TfdConfig& config);

}  // namespace tfd
