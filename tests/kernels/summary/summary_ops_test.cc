// The summary ops as tf.summary's users rely on them: the bytes are a
// tensorflow.Summary TensorBoard reads (read back here field by field),
// values of every number type and IEEE specials in scalars, NaN refused in
// histograms, merges in order with a repeated tag or bytes that are no
// Summary refused, and hostile shapes; images as PNGs decoded here with
// zlib, float images scaled as TF1 scales them, checked pixel by pixel.
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <catch2/catch.hpp>

#include "common/proto_wire.h"
#include "common/summary_proto.h"
#include "kernels/register_all.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

const OpRegistry& Registry() {
  static OpRegistry registry;
  static const Status registered = kernels::RegisterAll(registry);
  REQUIRE(registered.ok());
  return registry;
}

// One Summary.value: its tag, simple_value, whether a histo is set, and
// an image's fields (height, width, colorspace; the PNG).
struct Value {
  std::string tag;
  float simple = 0;
  bool histo = false;
  double histo_num = 0;
  int64_t image[3] = {0, 0, 0};
  std::string png;
};

Status ReadImage(std::string_view bytes, Value& v) {
  return proto_wire::ForEachField(bytes, "Image", [&](uint64_t n, int w, proto_wire::Reader& r) {
    if (n >= 1 && n <= 3) {
      TFD_ASSIGN_OR_RETURN(uint64_t x, r.Varint());
      v.image[n - 1] = static_cast<int64_t>(x);
      return OkStatus();
    }
    if (n != 4) return r.Skip(w);
    TFD_ASSIGN_OR_RETURN(auto png, r.Delimited());
    v.png = std::string(png);
    return OkStatus();
  });
}

std::vector<Value> Values(const std::string& summary) {
  std::vector<Value> out;
  const auto read = [&](uint64_t n, int w, proto_wire::Reader& r) -> Status {
    if (n != 1) return r.Skip(w);
    TFD_ASSIGN_OR_RETURN(auto bytes, r.Delimited());
    Value v;
    TFD_RETURN_IF_ERROR(proto_wire::ForEachField(
        bytes, "Value", [&](uint64_t vn, int vw, proto_wire::Reader& vr) -> Status {
          if (vn == 1) {
            TFD_ASSIGN_OR_RETURN(auto tag, vr.Delimited());
            v.tag = std::string(tag);
          } else if (vn == 2) {
            TFD_ASSIGN_OR_RETURN(auto f, vr.Bytes(4));
            std::memcpy(&v.simple, f.data(), 4);
          } else if (vn == 5) {
            TFD_ASSIGN_OR_RETURN(auto h, vr.Delimited());
            v.histo = true;
            // HistogramProto.num: field 3, a double, after min and max.
            std::memcpy(&v.histo_num, h.data() + 2 * 9 + 1, 8);
          } else if (vn == 4) {
            TFD_ASSIGN_OR_RETURN(auto image, vr.Delimited());
            return ReadImage(image, v);
          } else {
            return vr.Skip(vw);
          }
          return OkStatus();
        }));
    out.push_back(v);
    return OkStatus();
  };
  REQUIRE(proto_wire::ForEachField(summary, "Summary", read).ok());
  return out;
}

// Runs `op`; T is the values' dtype (input 1) unless attrs say otherwise.
StatusOr<std::string> Run(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
  if (op != "MergeSummary") attrs.emplace("T", inputs.at(1).dtype());
  TFD_ASSIGN_OR_RETURN(auto out, RunOp(Registry(), op, std::move(attrs), std::move(inputs)));
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].rank() == 0);
  return out[0].scalar<std::string>();
}

TEST_CASE("ScalarSummary: a value per tag, of every number type, IEEE specials kept") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float denormal = std::numeric_limits<float>::denorm_min();
  auto s = Run("ScalarSummary", {Tensor::FromVector<std::string>({"a", "b/c", "d", "e"}),
                                 Tensor::FromVector<float>({1.5f, nan, -inf, denormal})});
  REQUIRE(s.ok());
  auto v = Values(*s);
  REQUIRE(v.size() == 4);
  CHECK((v[0].tag == "a" && v[0].simple == 1.5f));
  CHECK((v[1].tag == "b/c" && std::isnan(v[1].simple)));
  CHECK((v[2].tag == "d" && v[2].simple == -inf));
  CHECK((v[3].tag == "e" && v[3].simple == denormal));

  auto scalar = Run("ScalarSummary", {Tensor::Scalar(std::string("step")),
                                      Tensor::Scalar<int64_t>(int64_t{1} << 40)});
  REQUIRE(scalar.ok());
  CHECK(Values(*scalar)[0].simple == static_cast<float>(int64_t{1} << 40));
  auto bytes =
      Run("ScalarSummary", {Tensor::Scalar(std::string("u")), Tensor::Scalar<uint8_t>(255)});
  REQUIRE(bytes.ok());
  CHECK(Values(*bytes)[0].simple == 255.0f);
  auto none =
      Run("ScalarSummary", {Tensor::FromVector<std::string>({}), Tensor::FromVector<double>({})});
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("ScalarSummary refuses tags and values of different shapes") {
  for (auto tags :
       {Tensor::FromVector<std::string>({"a", "b"}), Tensor::Scalar(std::string("a"))}) {
    auto s = Run("ScalarSummary", {tags, Tensor::FromVector<float>({1, 2, 3})});
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == Code::kInvalidArgument);
  }
}

TEST_CASE("HistogramSummary: one histogram of any shape; NaN and infinities refused") {
  auto values = Tensor::Allocate(DType::kFloat64, TensorShape({2, 3}));
  REQUIRE(values.ok());
  for (int i = 0; i < 6; ++i) values->data<double>()[i] = i - 2.5;
  auto s = Run("HistogramSummary", {Tensor::Scalar(std::string("w")), *values});
  REQUIRE(s.ok());
  auto v = Values(*s);
  REQUIRE(v.size() == 1);
  CHECK((v[0].tag == "w" && v[0].histo && v[0].histo_num == 6));
  auto empty =
      Run("HistogramSummary", {Tensor::Scalar(std::string("e")), Tensor::FromVector<int32_t>({})});
  REQUIRE(empty.ok());
  CHECK((Values(*empty)[0].histo && Values(*empty)[0].histo_num == 0));

  for (float bad : {std::nanf(""), -INFINITY}) {
    auto refused = Run("HistogramSummary",
                       {Tensor::Scalar(std::string("w")), Tensor::FromVector<float>({0, bad})});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == Code::kInvalidArgument);
    CHECK(refused.status().message().find("'w'") != std::string::npos);  // names the summary
  }
  auto two_tags = Run("HistogramSummary", {Tensor::FromVector<std::string>({"a", "b"}),
                                           Tensor::FromVector<float>({1})});
  CHECK(two_tags.status().code() == Code::kInvalidArgument);
}

TEST_CASE("MergeSummary: every input's values in order; a repeated tag or garbage refused") {
  auto a = Run("ScalarSummary",
               {Tensor::FromVector<std::string>({"x", "y"}), Tensor::FromVector<float>({1, 2})});
  auto h =
      Run("HistogramSummary", {Tensor::Scalar(std::string("h")), Tensor::FromVector<float>({1})});
  auto z = Run("ScalarSummary", {Tensor::Scalar(std::string("z")), Tensor::Scalar<float>(3)});
  REQUIRE((a.ok() && h.ok() && z.ok()));
  // Two inputs, the second a vector of two summaries.
  auto merged = Run("MergeSummary", {Tensor::Scalar(*a), Tensor::FromVector<std::string>({*h, *z})},
                    {{"N", int64_t{2}}});
  REQUIRE(merged.ok());
  std::vector<std::string> tags;
  for (const Value& v : Values(*merged)) tags.push_back(v.tag);
  CHECK(tags == std::vector<std::string>{"x", "y", "h", "z"});

  auto twice = Run("MergeSummary", {Tensor::Scalar(*a), Tensor::Scalar(*a)}, {{"N", int64_t{2}}});
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().code() == Code::kInvalidArgument);
  CHECK(twice.status().message().find("'x'") != std::string::npos);

  // Hostile bytes: a length far past the end, a truncated value, a group.
  for (const std::string& bad :
       {std::string("\x0a\xff\xff\xff\xff\x0f", 6), a->substr(0, 5), std::string("\x0b\x0c", 2)}) {
    auto refused = Run("MergeSummary", {Tensor::Scalar(bad)}, {{"N", int64_t{1}}});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == Code::kInvalidArgument);
    CHECK(refused.status().message().find("not a tensorflow.Summary") != std::string::npos);
  }
}

// A PNG read back: its size and color type from IHDR, and its pixels
// (every row's filter byte must be 0, as the encoder writes them), after
// checking the signature and every chunk's CRC-32.
struct Png {
  uint32_t width = 0, height = 0;
  int color_type = -1;
  std::vector<uint8_t> pixels;
};

uint32_t BigEndian32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | static_cast<uint8_t>(s[at + i]);
  return v;
}

Png DecodePng(const std::string& png, int channels) {
  REQUIRE(png.substr(0, 8) == "\x89PNG\r\n\x1a\n");
  Png out;
  std::string idat;
  for (size_t at = 8; at < png.size();) {
    const uint32_t n = BigEndian32(png, at);
    REQUIRE(at + 12 + n <= png.size());
    const std::string type = png.substr(at + 4, 4);
    const auto* typed = reinterpret_cast<const Bytef*>(png.data() + at + 4);
    CHECK(BigEndian32(png, at + 8 + n) == crc32(0L, typed, 4 + n));
    if (type == "IHDR") {
      out.width = BigEndian32(png, at + 8);
      out.height = BigEndian32(png, at + 12);
      CHECK(png[at + 16] == 8);  // bit depth
      out.color_type = png[at + 17];
    } else if (type == "IDAT") {
      idat += png.substr(at + 8, n);
    }
    at += 12 + n;
  }
  const size_t row = size_t{out.width} * channels;
  std::vector<uint8_t> raw(out.height * (row + 1));
  uLongf size = raw.size();
  REQUIRE(uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) ==
          Z_OK);
  REQUIRE(size == raw.size());
  for (uint32_t y = 0; y < out.height; ++y) {
    CHECK(raw[y * (row + 1)] == 0);
    out.pixels.insert(out.pixels.end(), raw.begin() + y * (row + 1) + 1,
                      raw.begin() + (y + 1) * (row + 1));
  }
  return out;
}

template <typename T>
Tensor Images(std::vector<int64_t> shape, std::vector<T> values) {
  auto t = Tensor::Allocate(DTypeOf<T>::value, TensorShape(std::move(shape)));
  REQUIRE(t.ok());
  REQUIRE(t->num_elements() == static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), t->template data<T>());
  return *std::move(t);
}

TEST_CASE("ImageSummary: uint8 pixels as they are, a PNG and a tag per image") {
  std::vector<uint8_t> pixels(2 * 2 * 3 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7);
  auto s = Run("ImageSummary", {Tensor::Scalar(std::string("img")), Images({2, 2, 3, 3}, pixels)});
  REQUIRE(s.ok());
  auto v = Values(*s);
  REQUIRE(v.size() == 2);  // the batch, under max_images (3)
  for (int i = 0; i < 2; ++i) {
    CHECK(v[i].tag == "img/image/" + std::to_string(i));
    CHECK((v[i].image[0] == 2 && v[i].image[1] == 3 && v[i].image[2] == 3));
    const Png png = DecodePng(v[i].png, 3);
    CHECK((png.height == 2 && png.width == 3 && png.color_type == 2));
    CHECK(png.pixels ==
          std::vector<uint8_t>(pixels.begin() + i * 18, pixels.begin() + i * 18 + 18));
  }
  auto one = Run("ImageSummary", {Tensor::Scalar(std::string("img")), Images({2, 2, 3, 3}, pixels)},
                 {{"max_images", int64_t{1}}});
  REQUIRE(one.ok());
  REQUIRE(Values(*one).size() == 1);
  CHECK(Values(*one)[0].tag == "img/image");
  auto none =
      Run("ImageSummary", {Tensor::Scalar(std::string("img")), Images<uint8_t>({0, 4, 4, 1}, {})});
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("ImageSummary scales float images as TF1 does; non-finite pixels take bad_color") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto gray = [](std::vector<float> v) {
    auto s = Run("ImageSummary", {Tensor::Scalar(std::string("g")),
                                  Images({1, 1, static_cast<int64_t>(v.size()), 1}, v)});
    REQUIRE(s.ok());
    const Png png = DecodePng(Values(*s).at(0).png, 1);
    CHECK(png.color_type == 0);
    return png.pixels;
  };
  // No negative: scaled by 255 / max and truncated; a NaN takes bad_color[0].
  CHECK(gray({0, 0.5f, 1, 2, nan}) == std::vector<uint8_t>{0, 63, 127, 255, 255});
  // A negative: 127 / max |v| around 128; the infinity is left out of the range.
  CHECK(gray({-2, -1, 0, 1, -inf}) == std::vector<uint8_t>{1, 64, 128, 191, 255});
  // Nothing over 1e-6 (denormals too): every pixel 0, or 128 with a negative.
  const float denormal = std::numeric_limits<float>::denorm_min();
  CHECK(gray({0, denormal, 5e-7f}) == std::vector<uint8_t>{0, 0, 0});
  CHECK(gray({-denormal, 0}) == std::vector<uint8_t>{128, 128});

  // RGBA: an infinity in one channel makes the whole pixel bad_color.
  auto rgba = Run("ImageSummary",
                  {Tensor::Scalar(std::string("c")),
                   Images<double>({1, 1, 2, 4}, {1, 0.5, 0, 1, 0.25, 0, 0, inf})},
                  {{"bad_color", std::vector<int64_t>{9, 8, 7, 6}}});
  REQUIRE(rgba.ok());
  const Png png = DecodePng(Values(*rgba).at(0).png, 4);
  CHECK(png.color_type == 6);
  CHECK(png.pixels == std::vector<uint8_t>{255, 127, 0, 255, 9, 8, 7, 6});
}

TEST_CASE("ImageSummary refuses shapes that are no images, naming them") {
  const Tensor tag = Tensor::Scalar(std::string("x"));
  for (auto shape :
       {std::vector<int64_t>{2, 2, 1}, {1, 2, 2, 2}, {1, 2, 2, 5}, {1, 0, 3, 1}, {1, 3, 0, 3}}) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    auto s = Run("ImageSummary", {tag, Images(shape, std::vector<float>(n, 1.0f))});
    INFO(TensorShape(shape).ToString());
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == Code::kInvalidArgument);
  }
  auto short_color = Run("ImageSummary", {tag, Images<float>({1, 1, 1, 3}, {1, 2, 3})},
                         {{"bad_color", std::vector<int64_t>{255}}});
  CHECK(short_color.status().code() == Code::kInvalidArgument);
  auto not_bytes = Run("ImageSummary", {tag, Images<float>({1, 1, 1, 1}, {1})},
                       {{"bad_color", std::vector<int64_t>{256, 0, 0, 0}}});
  CHECK(not_bytes.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing
