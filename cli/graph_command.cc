// `tfctl graph show|validate|encode|decode FILE`: looking at, checking and
// converting graph files between the binary Cap'n Proto message and its text
// form (the one the stock `capnp encode` / `capnp decode` tools read and write).
#include <unistd.h>

#include <boost/program_options.hpp>
#include <capnp/message.h>
#include <capnp/serialize-text.h>

#include <cstring>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/atomic_file.h"
#include "common/file_read.h"
#include "common/graph.h"
#include "common/graph_io.h"
#include "kernels/register_all.h"

namespace tfd::cli {
namespace {

namespace po = boost::program_options;

struct GraphOptions {
  std::string action;
  std::string file;
  std::string out;  // -o; empty: stdout
  OutputFormat format = OutputFormat::kHuman;
};

GraphOptions ParseGraphOptions(const Args& args) {
  GraphOptions o;
  std::string format = "human";
  po::options_description desc("graph options");
  desc.add_options()
      ("action", po::value(&o.action), "show, validate, encode or decode")
      ("file", po::value(&o.file), "the graph file, binary or text; - reads stdin")
      ("out,o", po::value(&o.out), "output file (encode, decode)")
      ("output", po::value(&format), "human or json (show, validate)");
  po::positional_options_description pos;
  pos.add("action", 1).add("file", 1);
  po::variables_map vm = ParseArgs(args, desc, pos);
  if (o.action.empty()) throw UsageError("missing graph action");
  if (o.action != "show" && o.action != "validate" && o.action != "encode" && o.action != "decode") {
    throw UsageError("unknown graph action '" + o.action + "'");
  }
  if (o.file.empty()) throw UsageError("missing FILE");
  o.format = ParseOutputFormat(format, false);
  if (!o.out.empty() && (o.action == "show" || o.action == "validate")) {
    throw UsageError("-o is for encode and decode");
  }
  return o;
}

// Writes `bytes` to `path` (through a temporary file, so a failed write
// leaves no half file), or to stdout when `path` is empty.
Status WriteOutput(const std::string& bytes, const std::string& path) {
  if (path.empty()) {
    std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::cout.flush();
    if (!std::cout) return errors::Unavailable("writing to stdout failed");
    return OkStatus();
  }
  return WriteFileAtomically(path, bytes);
}

// Rewrites a tensor held as raw `content` bytes into its typed value list,
// which is what a person reads and edits. Past 16 elements trailing repeats
// are dropped: a short list pads with its last value (schemas/tensor.capnp).
void ContentToValues(proto::Tensor::Builder t) {
  if (t.which() != proto::Tensor::CONTENT) return;
  auto content = t.getContent();
  const std::string bytes(reinterpret_cast<const char*>(content.begin()), content.size());
  auto fill = [&](auto sample, auto init) {
    using T = decltype(sample);
    const size_t size = sizeof(T);
    size_t n = bytes.size() / size;
    if (n > 16) {
      while (n > 1 && bytes.compare((n - 1) * size, size, bytes, (n - 2) * size, size) == 0) --n;
    }
    auto list = init(static_cast<unsigned>(n));
    for (size_t i = 0; i < n; ++i) {
      T value;
      std::memcpy(&value, bytes.data() + i * size, size);
      list.set(static_cast<unsigned>(i), value);
    }
  };
  switch (t.getDtype()) {
    case proto::DType::FLOAT32: fill(float{}, [&](unsigned n) { return t.initFloatVal(n); }); break;
    case proto::DType::FLOAT64: fill(double{}, [&](unsigned n) { return t.initDoubleVal(n); }); break;
    case proto::DType::INT32: fill(int32_t{}, [&](unsigned n) { return t.initInt32Val(n); }); break;
    case proto::DType::INT64: fill(int64_t{}, [&](unsigned n) { return t.initInt64Val(n); }); break;
    case proto::DType::UINT8: fill(uint8_t{}, [&](unsigned n) { return t.initUint8Val(n); }); break;
    case proto::DType::BOOL: fill(bool{}, [&](unsigned n) { return t.initBoolVal(n); }); break;
    default: break;
  }
}

// The text form, with tensors as value lists rather than raw bytes.
std::string ReadableText(const GraphDef& g) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<proto::GraphDef>();
  GraphToProto(g, root);
  for (auto node : root.getNodes()) {
    for (auto attr : node.getAttrs()) {
      auto v = attr.getValue();
      if (v.which() == proto::AttrValue::TENSOR) ContentToValues(v.getTensor());
      if (v.which() == proto::AttrValue::LIST) {
        for (auto t : v.getList().getTensor()) ContentToValues(t);
      }
    }
  }
  capnp::TextCodec codec;
  codec.setPrettyPrint(true);
  kj::String text = codec.encode(root.asReader());
  return std::string(text.cStr(), text.size()) + "\n";
}

std::string JoinInputs(const std::vector<std::string>& inputs) {
  std::string s;
  for (const std::string& in : inputs) s += (s.empty() ? "" : ", ") + in;
  return s.empty() ? "-" : s;
}

void ShowHuman(const GraphDef& g, const std::string& file) {
  size_t name_w = 4, op_w = 2, dev_w = 6;
  for (const NodeDef& n : g.nodes) {
    name_w = std::max(name_w, n.name.size());
    op_w = std::max(op_w, n.op.size());
    dev_w = std::max(dev_w, n.device.size());
  }
  auto pad = [](const std::string& s, size_t w) { return s + std::string(w - s.size() + 2, ' '); };
  std::cout << file << ": " << g.nodes.size() << " nodes\n";
  std::cout << "versions: " << GraphVersionsToString(g.versions) << "\n";
  std::cout << pad("NAME", name_w) << pad("OP", op_w) << pad("DEVICE", dev_w) << "INPUTS\n";
  for (const NodeDef& n : g.nodes) {
    std::cout << pad(n.name, name_w) << pad(n.op, op_w) << pad(n.device.empty() ? "-" : n.device, dev_w)
              << JoinInputs(n.inputs) << "\n";
    for (const auto& [name, value] : n.attrs) {
      std::cout << std::string(name_w + 2, ' ') << name << " = " << AttrValueToString(value) << "\n";
    }
  }
}

void ShowJson(const GraphDef& g) {
  Json nodes = Json::array();
  for (const NodeDef& n : g.nodes) {
    Json attrs = Json::object();
    for (const auto& [name, value] : n.attrs) attrs[name] = AttrValueToString(value);
    nodes.push_back(Json{{"name", n.name},
                         {"op", n.op},
                         {"inputs", n.inputs},
                         {"device", n.device},
                         {"attrs", std::move(attrs)}});
  }
  const Json versions{{"producer", g.versions.producer},
                      {"min_consumer", g.versions.min_consumer},
                      {"bad_consumers", g.versions.bad_consumers}};
  std::cout << DumpJson(Json{{"versions", versions}, {"nodes", std::move(nodes)}}) << "\n";
}

Status RunGraphAction(const GraphOptions& o) {
  TFD_ASSIGN_OR_RETURN(GraphDef g, ReadGraphArg(o.file));
  if (o.action == "show") {
    if (o.format == OutputFormat::kJson) {
      ShowJson(g);
    } else {
      ShowHuman(g, o.file);
    }
    return OkStatus();
  }
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  if (o.action == "validate") {
    const size_t n = g.nodes.size();
    TFD_ASSIGN_OR_RETURN(Graph built, Graph::Build(std::move(g), registry));
    (void)built;
    if (o.format == OutputFormat::kJson) {
      std::cout << DumpJson(Json{{"ok", true}, {"nodes", n}}) << "\n";
    } else {
      std::cout << "ok: " << n << " nodes\n";
    }
    return OkStatus();
  }
  // Both write graph files: without the attrs that equal their op's
  // default, as every writer of graphs, so that older tfds take them.
  StripDefaultAttrs(registry, g);
  if (o.action == "encode") {
    if (o.out.empty() && isatty(STDOUT_FILENO)) {
      return errors::InvalidArgument("refusing to write a binary graph to a terminal; "
                                     "give -o FILE or redirect stdout");
    }
    return WriteOutput(SerializeGraph(g, GraphFormat::kBinary), o.out);
  }
  return WriteOutput(ReadableText(g), o.out);  // decode
}

}  // namespace

StatusOr<GraphDef> ReadGraphArg(const std::string& path) {
  if (path != "-") return LoadGraph(path);
  TFD_ASSIGN_OR_RETURN(const std::string bytes,
                       ReadFileAtMost("/dev/stdin", kMaxGraphFileBytes, "graph on stdin"));
  return ParseGraph(bytes, "<stdin>");
}

int GraphCommand(const Args& args) {
  const GraphOptions o = ParseGraphOptions(args);
  Status s = RunGraphAction(o);
  return s.ok() ? 0 : ReportError(s, o.format);
}

}  // namespace tfd::cli
