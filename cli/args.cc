#include "cli/args.h"

#include <sstream>

namespace tfd::cli {

namespace po = boost::program_options;

po::variables_map ParseArgs(const Args& args, const po::options_description& options,
                            const po::positional_options_description& positional) {
  po::options_description help("");
  help.add_options()("help,h", "print this help and exit");
  po::options_description all;
  all.add(options).add(help);
  // --help wins over everything else on the line, even a malformed rest.
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::ostringstream text;
      text << all;
      throw HelpRequested(text.str());
    }
  }
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
  po::notify(vm);
  return vm;
}

}  // namespace tfd::cli
