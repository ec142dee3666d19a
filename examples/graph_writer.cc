#include "examples/graph_writer.h"

#include <iostream>

#include "api/graph_file.h"
#include "kernels/register_all.h"

namespace tfd::examples {

namespace po = boost::program_options;

GraphWriter::GraphWriter(const std::string& usage) : flags_(usage) {
  flags_.add_options()
      ("help,h", "this text")
      ("format", po::value(&format_), "binary or text (default binary)")
      ("output,o", po::value(&output_), "graph file to write");
}

int GraphWriter::Main(int argc, char** argv, const Check& check, const Build& build) {
  Status usage = OkStatus();
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, flags_), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << flags_;
      return 0;
    }
    if (output_.empty()) {
      usage = errors::InvalidArgument("-o FILE is required");
    } else if (format_ != "binary" && format_ != "text") {
      usage = errors::InvalidArgument("--format must be binary or text, not '", format_, "'");
    } else {
      usage = check(vm);
    }
  } catch (const po::error& e) {
    usage = errors::InvalidArgument(e.what());
  }
  if (!usage.ok()) {
    std::cerr << "error: " << usage.ToString() << "\n" << flags_;
    return 2;
  }
  OpRegistry registry;
  Status s = kernels::RegisterAll(registry);
  Scope root = Scope::NewRootScope(registry);
  if (s.ok()) s = build(root);
  if (s.ok()) {
    s = WriteGraphFile(root, output_, format_ == "text" ? GraphFormat::kText : GraphFormat::kBinary);
  }
  if (!s.ok()) {
    std::cerr << "error: " << s.ToString() << "\n";
    return s.code() == Code::kInvalidArgument ? 2 : 1;
  }
  return 0;
}

}  // namespace tfd::examples
