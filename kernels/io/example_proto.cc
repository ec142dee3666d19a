// Reading a tf.train.Example's wire bytes; see example_proto.h.
#include "kernels/io/example_proto.h"

#include <cstring>
#include <functional>

#include "common/proto_wire.h"

namespace tfd::kernels::io {
namespace {

using proto_wire::kFixed32;
using proto_wire::kLength;
using proto_wire::kVarint;
using proto_wire::Reader;

constexpr char kWhat[] = "tf.train.Example or SequenceExample";

// Calls on_field(number, wire, reader) for each field of `bytes`.
Status ForEachField(std::string_view bytes,
                    const std::function<Status(uint64_t, int, Reader&)>& on_field) {
  return proto_wire::ForEachField(bytes, kWhat, on_field);
}

// Field 1 of a list message: repeated, packed (one length-delimited run) or
// not (one value per field); `one` reads a value of wire type `wire`.
Status ListValues(std::string_view list, int wire, const std::function<Status(Reader&)>& one) {
  return ForEachField(list, [&](uint64_t number, int w, Reader& r) -> Status {
    if (number != 1) return r.Skip(w);
    if (w == wire) return one(r);
    if (w != kLength || wire == kLength) return r.Skip(w);
    TFD_ASSIGN_OR_RETURN(std::string_view packed, r.Delimited());
    Reader values = r.Nested(packed);
    while (!values.done()) TFD_RETURN_IF_ERROR(one(values));
    return OkStatus();
  });
}

StatusOr<ExampleFeature> ParseFeature(std::string_view bytes) {
  ExampleFeature f;
  uint64_t set = 0;  // the list field set last
  TFD_RETURN_IF_ERROR(ForEachField(bytes, [&](uint64_t number, int w, Reader& r) -> Status {
    if (w != kLength || number < 1 || number > 3) return r.Skip(w);
    TFD_ASSIGN_OR_RETURN(std::string_view list, r.Delimited());
    // A oneof: another list replaces the one set; the same one again merges.
    if (number != set) f = ExampleFeature();
    set = number;
    if (number == 1) {
      f.kind = ExampleFeature::Kind::kBytes;
      return ListValues(list, kLength, [&](Reader& v) -> Status {
        TFD_ASSIGN_OR_RETURN(std::string_view b, v.Delimited());
        f.bytes.emplace_back(b);
        return OkStatus();
      });
    }
    if (number == 2) {
      f.kind = ExampleFeature::Kind::kFloat;
      return ListValues(list, kFixed32, [&](Reader& v) -> Status {
        TFD_ASSIGN_OR_RETURN(std::string_view b, v.Bytes(4));
        float x;
        std::memcpy(&x, b.data(), 4);  // little-endian on the hosts tfd runs on
        f.floats.push_back(x);
        return OkStatus();
      });
    }
    f.kind = ExampleFeature::Kind::kInt64;
    return ListValues(list, kVarint, [&](Reader& v) -> Status {
      TFD_ASSIGN_OR_RETURN(uint64_t x, v.Varint());
      f.ints.push_back(static_cast<int64_t>(x));
      return OkStatus();
    });
  }));
  return f;
}

// Calls on_entry(key, value bytes) for each entry of the map<string, M>
// field 1 of `bytes` (Features.feature, FeatureLists.feature_list).
Status ForEachMapEntry(std::string_view bytes,
                       const std::function<Status(std::string, std::string_view)>& on_entry) {
  return ForEachField(bytes, [&](uint64_t n, int w, Reader& r) -> Status {
    if (n != 1 || w != kLength) return r.Skip(w);
    TFD_ASSIGN_OR_RETURN(std::string_view entry, r.Delimited());
    std::string key;
    std::string_view value;
    TFD_RETURN_IF_ERROR(ForEachField(entry, [&](uint64_t en, int ew, Reader& er) -> Status {
      if (ew != kLength || (en != 1 && en != 2)) return er.Skip(ew);
      TFD_ASSIGN_OR_RETURN(std::string_view b, er.Delimited());
      if (en == 1) {
        key = std::string(b);
      } else {
        value = b;
      }
      return OkStatus();
    }));
    return on_entry(std::move(key), value);
  });
}

// Calls on_message(bytes) for each field `number` of `bytes` that is a
// message (Example.features, SequenceExample.feature_lists).
Status ForEachMessage(std::string_view bytes, uint64_t number,
                      const std::function<Status(std::string_view)>& on_message) {
  return ForEachField(bytes, [&](uint64_t n, int w, Reader& r) -> Status {
    if (n != number || w != kLength) return r.Skip(w);
    TFD_ASSIGN_OR_RETURN(std::string_view message, r.Delimited());
    return on_message(message);
  });
}

}  // namespace

ExampleFeature::Kind FeatureKindOf(DType t) {
  switch (t) {
    case DType::kFloat32:
      return ExampleFeature::Kind::kFloat;
    case DType::kInt64:
      return ExampleFeature::Kind::kInt64;
    default:
      return ExampleFeature::Kind::kBytes;
  }
}

int64_t ValueCount(const ExampleFeature& f) {
  switch (f.kind) {
    case ExampleFeature::Kind::kFloat:
      return static_cast<int64_t>(f.floats.size());
    case ExampleFeature::Kind::kInt64:
      return static_cast<int64_t>(f.ints.size());
    case ExampleFeature::Kind::kBytes:
      return static_cast<int64_t>(f.bytes.size());
    default:
      return 0;
  }
}

void CopyFeatureValues(const ExampleFeature& f, Tensor* out, int64_t at) {
  switch (f.kind) {
    case ExampleFeature::Kind::kFloat:
      std::copy(f.floats.begin(), f.floats.end(), out->data<float>() + at);
      break;
    case ExampleFeature::Kind::kInt64:
      std::copy(f.ints.begin(), f.ints.end(), out->data<int64_t>() + at);
      break;
    case ExampleFeature::Kind::kBytes:
      std::copy(f.bytes.begin(), f.bytes.end(), out->data<std::string>() + at);
      break;
    default:
      break;
  }
}

StatusOr<std::map<std::string, ExampleFeature>> ParseExampleProto(std::string_view bytes) {
  std::map<std::string, ExampleFeature> features;
  // Example { Features features = 1; }  Features { map<string, Feature> feature = 1; }
  TFD_RETURN_IF_ERROR(ForEachMessage(bytes, 1, [&](std::string_view fs) {
    return ForEachMapEntry(fs, [&](std::string key, std::string_view value) -> Status {
      TFD_ASSIGN_OR_RETURN(features[std::move(key)], ParseFeature(value));
      return OkStatus();
    });
  }));
  return features;
}

StatusOr<std::map<std::string, std::vector<ExampleFeature>>> ParseFeatureListsProto(
    std::string_view bytes) {
  std::map<std::string, std::vector<ExampleFeature>> lists;
  // SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
  // FeatureLists { map<string, FeatureList> feature_list = 1; }
  // FeatureList { repeated Feature feature = 1; }
  TFD_RETURN_IF_ERROR(ForEachMessage(bytes, 2, [&](std::string_view fls) {
    return ForEachMapEntry(fls, [&](std::string key, std::string_view value) -> Status {
      std::vector<ExampleFeature> list;
      TFD_RETURN_IF_ERROR(ForEachMessage(value, 1, [&](std::string_view feature) -> Status {
        TFD_ASSIGN_OR_RETURN(ExampleFeature f, ParseFeature(feature));
        list.push_back(std::move(f));
        return OkStatus();
      }));
      lists[std::move(key)] = std::move(list);
      return OkStatus();
    });
  }));
  return lists;
}

}  // namespace tfd::kernels::io
