#include "cli/args.h"

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <set>
#include <sstream>

namespace tfd::cli {

namespace po = boost::program_options;

namespace {

// The option names that `positional` fills: each command has a few, none
// unbounded.
std::set<std::string> PositionalNames(const po::positional_options_description& positional) {
  std::set<std::string> names;
  const unsigned count = std::min(positional.max_total_count(), 16u);
  for (unsigned i = 0; i < count; ++i) names.insert(positional.name_for_position(i));
  return names;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

po::options_description WithHelp(const po::options_description& options) {
  po::options_description all;
  all.add(options);
  all.add_options()("help,h", "print this help and exit");
  return all;
}

}  // namespace

std::string HelpText(const po::options_description& options,
                     const po::positional_options_description& positional) {
  const std::set<std::string> positional_names = PositionalNames(positional);
  po::options_description flags;
  const po::options_description all = WithHelp(options);
  for (const auto& option : all.options()) {
    if (positional_names.count(option->long_name()) == 0) flags.add(option);
  }
  // Boost's own column leaves one space after the longest option; two
  // keep every description apart from its option (and readable by the
  // bash completion, deploy/bash-completion/tfctl).
  const unsigned column = flags.get_option_column_width() + 1;
  std::ostringstream text;
  // The positionals in their order on the command line, named as the
  // usage line names them, their descriptions in the options' column.
  std::set<std::string> shown;
  const unsigned count = std::min(positional.max_total_count(), 16u);
  for (unsigned i = 0; i < count; ++i) {
    const std::string& name = positional.name_for_position(i);
    if (!shown.insert(name).second) continue;
    if (shown.size() == 1) text << "arguments:\n";
    const po::option_description* option = options.find_nothrow(name, false);
    text << "  " << std::left << std::setw(static_cast<int>(column) - 2) << Upper(name)
         << (option ? option->description() : std::string()) << "\n";
  }
  if (!shown.empty()) text << "\n";
  text << "options:\n";
  flags.print(text, column);
  return text.str();
}

po::variables_map ParseArgs(const Args& args, const po::options_description& options,
                            const po::positional_options_description& positional) {
  // --help wins over everything else on the line, even a malformed rest.
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") throw HelpRequested(HelpText(options, positional));
  }
  // The parsed options point into `all`: it outlives them.
  const po::options_description all = WithHelp(options);
  const po::parsed_options parsed =
      po::command_line_parser(args).options(all).positional(positional).run();
  // A positional argument given as an option (--file, or a prefix boost
  // would guess it from) is not one the command has.
  const std::set<std::string> positional_names = PositionalNames(positional);
  for (const po::option& o : parsed.options) {
    if (o.position_key == -1 && positional_names.count(o.string_key) > 0) {
      throw po::unknown_option(o.original_tokens.empty() ? "--" + o.string_key
                                                         : o.original_tokens.front());
    }
  }
  po::variables_map vm;
  po::store(parsed, vm);
  try {
    po::notify(vm);
  } catch (const po::required_option& e) {
    // Boost names a missing argument as the option it is underneath.
    std::string name = e.get_option_name();
    name.erase(0, name.find_first_not_of('-'));
    if (positional_names.count(name) > 0) throw UsageError("missing " + Upper(name));
    throw;
  }
  return vm;
}

}  // namespace tfd::cli
