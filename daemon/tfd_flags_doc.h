// The texts that list tfd's flags, all made from the table of tfd_flags.h:
// `tfd --help` (its lines, FlagHelpText), `tfd --help=man` (the man page),
// `tfd --help=markdown` (docs/cli.md's table), `tfd --help=bash-completion`.
// meson installs the man page and the completion from the built tfd, and
// tests/daemon/tfd_flags_doc_test.sh checks that docs/cli.md holds the table.
//
//   std::cout << TfdManPage(TFD_VERSION);
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "daemon/tfd_flags.h"

namespace tfd {

// One flag's line of `tfd --help`: its choices, what it does, its default
// and its variable ("trace|debug|info|warn|error: ...; default info (TFD_LOG_LEVEL)").
std::string FlagHelpText(const TfdFlag& flag);

// tfd.1 in roff: name, synopsis, the flags by group, the variables, the
// exit statuses.
std::string TfdManPage(std::string_view version);

// docs/cli.md's table of tfd's flags, a Markdown table per group.
std::string TfdFlagsMarkdown();

// A bash completion script for tfd: its flags, an enum flag's values after
// it, paths after a flag that takes a FILE, DIR or SPEC.
std::string TfdBashCompletion();

}  // namespace tfd
