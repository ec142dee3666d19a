// Where tfd's flags' values come from: the command line, TFD_* variables and
// a --config file, read with Boost.Program_options from the declarations of
// tfd_flags.h. The one place that knows Boost's options and exceptions.
//
//   TFD_ASSIGN_OR_RETURN(FlagValues values, ReadFlagValues(argc, argv, getenv));
//   if (const FlagValue* v = values.Find("threads")) use(v->text, v->source);
//
// Thread-safety: pure, but for `getenv` and reading the --config file.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "daemon/tfd_flags.h"

namespace tfd {

// The value of each flag that some source sets, from the first source that
// does: a flag wins over its variable, and the variable over the file. A
// switch is present when any source turns it on.
struct FlagValues {
  std::map<std::string, FlagValue, std::less<>> values;  // by flag name
  std::optional<std::string> help;  // --help given: its format, "text" when bare
  bool version = false;
  const FlagValue* Find(std::string_view name) const;
};

// What --help=FORMAT takes.
inline constexpr std::string_view kHelpFormats[] = {"text", "man", "markdown", "bash-completion"};

// INVALID_ARGUMENT for an unknown or malformed flag on the command line
// (Boost's words: "unrecognised option '--thread'"), an unreadable or
// malformed --config file (naming it), or an unknown --help format. With
// --help or --version, the other sources are not read.
StatusOr<FlagValues> ReadFlagValues(int argc, const char* const* argv,
                                    const std::function<const char*(const char*)>& getenv);

// `tfd --help`: a usage line, then each group's flags in Boost's layout.
std::string TfdUsage();

}  // namespace tfd
