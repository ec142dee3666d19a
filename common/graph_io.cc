#include "common/graph_io.h"

#include <algorithm>
#include <cstring>
#include <regex>

#include <capnp/message.h>
#include <capnp/serialize-text.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include "common/atomic_file.h"
#include "common/file_read.h"
#include "common/tensor_proto.h"

namespace tfd {
namespace {

using proto::AttrValue;

template <typename T, typename List>
std::vector<T> ToVector(const List& list) {
  std::vector<T> out;
  for (auto v : list) out.push_back(static_cast<T>(v));
  return out;
}

// The bytes of attr tensors one graph may still take, checked before each is
// allocated; each is charged to `memory` (when given) as it is decoded.
class GraphTensorBudget {
 public:
  GraphTensorBudget(const SizeLimits& limits, std::shared_ptr<MemoryBudget> memory)
      : limits_(limits), memory_(std::move(memory)) {}

  StatusOr<Tensor> Decode(proto::Tensor::Reader p) {
    TFD_ASSIGN_OR_RETURN(TensorProtoInfo info, InspectTensorProto(p));
    const std::string what = std::string(DTypeName(info.dtype)) + info.shape.ToString();
    if (info.bytes > limits_.max_graph_tensor_bytes) {
      return errors::InvalidArgument(
          "tensor ", what, " takes ", FormatBytes(info.bytes), ", more than the ",
          FormatBytes(limits_.max_graph_tensor_bytes),
          " allowed for one tensor in a graph (--max-graph-tensor-bytes)");
    }
    if (info.bytes > limits_.max_graph_bytes - std::min(used_, limits_.max_graph_bytes)) {
      return errors::InvalidArgument(
          "tensor ", what, " takes ", FormatBytes(info.bytes), " after ", FormatBytes(used_),
          " of other tensors in this graph, more than the ", FormatBytes(limits_.max_graph_bytes),
          " allowed for the tensors of one graph (--max-graph-bytes)");
    }
    used_ += info.bytes;
    return TensorFromProto(p, limits_.max_graph_tensor_bytes, memory_);
  }

 private:
  const SizeLimits& limits_;
  const std::shared_ptr<MemoryBudget> memory_;
  uint64_t used_ = 0;
};

StatusOr<tfd::AttrValue> ListFromProto(AttrValue::ListValue::Reader l, GraphTensorBudget& budget) {
  // A list holds one kind of element; the first non-empty field decides.
  if (l.getS().size()) {
    std::vector<std::string> v;
    for (auto s : l.getS()) v.emplace_back(s.cStr(), s.size());
    return tfd::AttrValue(std::move(v));
  }
  if (l.getI().size()) return tfd::AttrValue(ToVector<int64_t>(l.getI()));
  if (l.getF().size()) return tfd::AttrValue(ToVector<double>(l.getF()));
  if (l.getB().size()) return tfd::AttrValue(ToVector<bool>(l.getB()));
  if (l.getType().size()) {
    std::vector<DType> v;
    for (auto d : l.getType()) {
      TFD_ASSIGN_OR_RETURN(DType t, DTypeFromProto(d));
      v.push_back(t);
    }
    return tfd::AttrValue(std::move(v));
  }
  if (l.getShape().size()) {
    std::vector<PartialShape> v;
    for (auto s : l.getShape()) v.push_back(ShapeFromProto(s));
    return tfd::AttrValue(std::move(v));
  }
  if (l.getTensor().size()) {
    std::vector<Tensor> v;
    for (auto t : l.getTensor()) {
      TFD_ASSIGN_OR_RETURN(Tensor x, budget.Decode(t));
      v.push_back(std::move(x));
    }
    return tfd::AttrValue(std::move(v));
  }
  return tfd::AttrValue(EmptyList{});
}

StatusOr<tfd::AttrValue> AttrFromProto(AttrValue::Reader a, GraphTensorBudget& budget) {
  switch (a.which()) {
    case AttrValue::S: return tfd::AttrValue(std::string(a.getS().cStr(), a.getS().size()));
    case AttrValue::I: return tfd::AttrValue(static_cast<int64_t>(a.getI()));
    case AttrValue::F: return tfd::AttrValue(a.getF());
    case AttrValue::B: return tfd::AttrValue(a.getB());
    case AttrValue::TYPE: {
      TFD_ASSIGN_OR_RETURN(DType t, DTypeFromProto(a.getType()));
      return tfd::AttrValue(t);
    }
    case AttrValue::SHAPE: return tfd::AttrValue(ShapeFromProto(a.getShape()));
    case AttrValue::TENSOR: {
      TFD_ASSIGN_OR_RETURN(Tensor t, budget.Decode(a.getTensor()));
      return tfd::AttrValue(std::move(t));
    }
    case AttrValue::LIST: return ListFromProto(a.getList(), budget);
  }
  return errors::InvalidArgument("attr value of an unknown kind (a newer schema?)");
}

void AttrToProto(const tfd::AttrValue& v, AttrValue::Builder out) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out.setS(x);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          out.setI(x);
        } else if constexpr (std::is_same_v<T, double>) {
          out.setF(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          out.setB(x);
        } else if constexpr (std::is_same_v<T, DType>) {
          out.setType(DTypeToProto(x));
        } else if constexpr (std::is_same_v<T, PartialShape>) {
          ShapeToProto(x, out.initShape());
        } else if constexpr (std::is_same_v<T, Tensor>) {
          TensorToProto(x, out.initTensor());
        } else if constexpr (std::is_same_v<T, EmptyList>) {
          out.initList();
        } else {
          auto l = out.initList();
          using E = typename T::value_type;
          const auto n = static_cast<unsigned>(x.size());
          if constexpr (std::is_same_v<E, std::string>) {
            auto s = l.initS(n);
            for (unsigned i = 0; i < n; ++i) s.set(i, x[i]);
          } else if constexpr (std::is_same_v<E, int64_t>) {
            auto s = l.initI(n);
            for (unsigned i = 0; i < n; ++i) s.set(i, x[i]);
          } else if constexpr (std::is_same_v<E, double>) {
            auto s = l.initF(n);
            for (unsigned i = 0; i < n; ++i) s.set(i, x[i]);
          } else if constexpr (std::is_same_v<E, bool>) {
            auto s = l.initB(n);
            for (unsigned i = 0; i < n; ++i) s.set(i, x[i]);
          } else if constexpr (std::is_same_v<E, DType>) {
            auto s = l.initType(n);
            for (unsigned i = 0; i < n; ++i) s.set(i, DTypeToProto(x[i]));
          } else if constexpr (std::is_same_v<E, PartialShape>) {
            auto s = l.initShape(n);
            for (unsigned i = 0; i < n; ++i) ShapeToProto(x[i], s[i]);
          } else if constexpr (std::is_same_v<E, Tensor>) {
            auto s = l.initTensor(n);
            for (unsigned i = 0; i < n; ++i) TensorToProto(x[i], s[i]);
          }
        }
      },
      v);
}

// kj reports malformed messages by throwing; the graph loader turns that into
// INVALID_ARGUMENT naming the source.
template <typename Fn>
StatusOr<GraphDef> CatchingKj(const std::string& source, Fn fn) {
  try {
    return fn();
  } catch (const kj::Exception& e) {
    std::string what = e.getDescription().cStr();
    return errors::InvalidArgument("'", source, "' is not a valid graph: ", what);
  }
}

// The text parser reports byte ranges ("54-60: Parse error."); people want
// line and column.
std::string WithLineNumbers(const std::string& message, const std::string& text) {
  static const std::regex kRange(R"(: (\d+)-(\d+): )");
  std::smatch m;
  if (!std::regex_search(message, m, kRange)) return message;
  const size_t offset = std::min<size_t>(std::stoul(m[1].str()), text.size());
  const size_t line = 1 + std::count(text.begin(), text.begin() + offset, '\n');
  const size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const size_t column = offset - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
  return m.prefix().str() + ": line " + std::to_string(line) + ", column " +
         std::to_string(column) + ": " + m.suffix().str();
}

// A graph without `versions` was written before tfd recorded them.
GraphVersions VersionsFromProto(proto::GraphDef::Reader g) {
  if (!g.hasVersions()) return GraphVersions{.producer = 0, .min_consumer = 0};
  auto v = g.getVersions();
  return GraphVersions{.producer = v.getProducer(),
                       .min_consumer = v.getMinConsumer(),
                       .bad_consumers = ToVector<int32_t>(v.getBadConsumers())};
}

void VersionsToProto(const GraphVersions& v, proto::VersionDef::Builder out) {
  out.setProducer(v.producer);
  out.setMinConsumer(v.min_consumer);
  auto bad = out.initBadConsumers(static_cast<unsigned>(v.bad_consumers.size()));
  for (unsigned i = 0; i < v.bad_consumers.size(); ++i) bad.set(i, v.bad_consumers[i]);
}

// An attr value this build cannot read, in a graph from a newer tfd, is
// most likely of a kind added since: say so, and which versions disagree.
// A value that does not fit in the memory budget is no such thing.
Status AttrError(const Status& error, const GraphVersions& versions, const std::string& where) {
  if (!WrittenByNewerTfd(versions) || error.code() == Code::kResourceExhausted) {
    return error.WithContext(where);
  }
  TFD_RETURN_IF_ERROR(CheckGraphVersions(versions));
  return NewerGraphError(versions, where + ": " + error.message());
}

}  // namespace

StatusOr<GraphDef> GraphFromProto(proto::GraphDef::Reader g, const SizeLimits& limits,
                                  std::shared_ptr<MemoryBudget> memory) {
  GraphTensorBudget budget(limits, std::move(memory));
  GraphDef out;
  out.versions = VersionsFromProto(g);
  for (auto n : g.getNodes()) {
    NodeDef node;
    node.name = n.getName();
    node.op = n.getOp();
    node.device = n.getDevice();
    for (auto in : n.getInputs()) node.inputs.emplace_back(in.cStr(), in.size());
    for (auto a : n.getAttrs()) {
      auto v = AttrFromProto(a.getValue(), budget);
      if (!v.ok()) {
        return AttrError(v.status(), out.versions,
                         "node '" + node.name + "' attr '" + std::string(a.getName().cStr()) + "'");
      }
      const std::string attr_name = a.getName();
      if (!node.attrs.emplace(attr_name, std::move(v).value()).second) {
        return errors::InvalidArgument("node '", node.name, "' sets attr '", attr_name, "' twice");
      }
    }
    out.nodes.push_back(std::move(node));
  }
  return out;
}

void GraphToProto(const GraphDef& g, proto::GraphDef::Builder out) {
  // A graph that never had versions (producer 0) is written without them,
  // as it was read: older tfds' text parsers do not know the field.
  if (g.versions != GraphVersions{.producer = 0, .min_consumer = 0}) {
    VersionsToProto(g.versions, out.initVersions());
  }
  auto nodes = out.initNodes(static_cast<unsigned>(g.nodes.size()));
  for (unsigned i = 0; i < g.nodes.size(); ++i) {
    const NodeDef& n = g.nodes[i];
    auto b = nodes[i];
    b.setName(n.name);
    b.setOp(n.op);
    b.setDevice(n.device);
    auto inputs = b.initInputs(static_cast<unsigned>(n.inputs.size()));
    for (unsigned k = 0; k < n.inputs.size(); ++k) inputs.set(k, n.inputs[k]);
    auto attrs = b.initAttrs(static_cast<unsigned>(n.attrs.size()));
    unsigned k = 0;
    for (const auto& [name, value] : n.attrs) {
      attrs[k].setName(name);
      AttrToProto(value, attrs[k].initValue());
      ++k;
    }
  }
}

bool LooksLikeBinaryMessage(std::string_view bytes) {
  if (bytes.size() < 8 || bytes.size() % 8 != 0) return false;
  uint32_t count_minus_one = 0;
  std::memcpy(&count_minus_one, bytes.data(), 4);
  if (count_minus_one >= 512) return false;
  const uint64_t segments = uint64_t{count_minus_one} + 1;
  const uint64_t header_words = (4 + 4 * segments + 7) / 8;
  if (bytes.size() < header_words * 8) return false;
  uint64_t body_words = 0;
  for (uint64_t i = 0; i < segments; ++i) {
    uint32_t words = 0;
    std::memcpy(&words, bytes.data() + 4 + 4 * i, 4);
    body_words += words;
  }
  return (header_words + body_words) * 8 == bytes.size();
}

StatusOr<GraphDef> ParseGraph(std::string_view bytes, const std::string& source,
                              const SizeLimits& limits) {
  if (bytes.size() > kMaxGraphFileBytes) {
    return errors::InvalidArgument("'", source, "' is ", bytes.size(),
                                   " bytes, over the graph limit of ", kMaxGraphFileBytes);
  }
  if (LooksLikeBinaryMessage(bytes)) {
    // Copy into word-aligned memory; the reader may not see unaligned words.
    kj::Array<capnp::word> words = kj::heapArray<capnp::word>(bytes.size() / 8);
    std::memcpy(words.begin(), bytes.data(), bytes.size());
    return CatchingKj(source, [&]() -> StatusOr<GraphDef> {
      capnp::ReaderOptions options;
      // Each word may be visited a few times by well-formed readers; a
      // message that makes us traverse more is hostile.
      options.traversalLimitInWords = words.size() * 4 + 1024;
      options.nestingLimit = 64;
      capnp::FlatArrayMessageReader reader(words, options);
      return GraphFromProto(reader.getRoot<proto::GraphDef>(), limits);
    });
  }
  // The text form. It must be valid UTF-8-ish text without NULs.
  if (bytes.find('\0') != std::string_view::npos) {
    return errors::InvalidArgument("'", source,
                                   "' is neither a binary Cap'n Proto message nor text");
  }
  std::string text(bytes);
  auto g = CatchingKj(source, [&]() -> StatusOr<GraphDef> {
    capnp::MallocMessageBuilder message;
    capnp::TextCodec codec;
    auto root = message.initRoot<proto::GraphDef>();
    codec.decode(kj::StringPtr(text.c_str(), text.size()), root);
    return GraphFromProto(root.asReader(), limits);
  });
  if (g.ok()) return g;
  return Status(g.status().code(), WithLineNumbers(g.status().message(), text));
}

StatusOr<GraphDef> LoadGraph(const std::string& path, const SizeLimits& limits) {
  TFD_ASSIGN_OR_RETURN(const std::string bytes,
                       ReadFileAtMost(path, kMaxGraphFileBytes, "graph file"));
  return ParseGraph(bytes, path, limits);
}

std::string SerializeGraph(const GraphDef& g, GraphFormat format) {
  capnp::MallocMessageBuilder message;
  GraphToProto(g, message.initRoot<proto::GraphDef>());
  if (format == GraphFormat::kText) {
    capnp::TextCodec codec;
    codec.setPrettyPrint(true);
    kj::String text = codec.encode(message.getRoot<proto::GraphDef>().asReader());
    return std::string(text.cStr(), text.size()) + "\n";
  }
  auto flat = capnp::messageToFlatArray(message);
  auto bytes = flat.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

Status SaveGraph(const GraphDef& g, const std::string& path, GraphFormat format) {
  return WriteFileAtomically(path, SerializeGraph(g, format), {.description = "graph file"});
}

}  // namespace tfd
