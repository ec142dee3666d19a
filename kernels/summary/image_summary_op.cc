// ImageSummary: up to max_images images of a [batch, height, width,
// channels] tensor, each a PNG (png_encode.h) in a tensorflow.Summary's
// Value.image, as TF1's tf.summary.image writes them for TensorBoard.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/op_kernel.h"
#include "common/proto_wire.h"
#include "common/shape_inference.h"
#include "kernels/summary/png_encode.h"
#include "kernels/summary/summary_ops.h"

namespace tfd::kernels {
namespace {

// TF1's rule for a float image, one image at a time: its finite pixels
// (every channel finite) go affinely into [0, 255] and are truncated to
// bytes. With a negative value among them, 0 goes to 128 and the largest
// magnitude m to 128 +- 127 (scale 127 / m); else the largest value goes to
// 255 (scale 255 / max). A largest magnitude under 1e-6 scales by 0. A
// pixel with a NaN or an infinity takes bad_color. The arithmetic is T's.
template <typename T>
void FloatImageToBytes(const T* in, int64_t pixels, int channels, const std::vector<uint8_t>& bad,
                       uint8_t* out) {
  const auto finite = [&](int64_t p) {
    return std::all_of(in + p * channels, in + (p + 1) * channels,
                       [](T v) { return std::isfinite(v); });
  };
  T low = INFINITY, high = -INFINITY;
  for (int64_t p = 0; p < pixels; ++p) {
    if (!finite(p)) continue;
    for (int c = 0; c < channels; ++c) {
      low = std::min(low, in[p * channels + c]);
      high = std::max(high, in[p * channels + c]);
    }
  }
  constexpr T kZero = 1e-6;
  T scale = 0, offset = 0;
  if (low < 0) {
    const T largest = std::max(std::abs(low), std::abs(high));
    scale = largest < kZero ? T(0) : T(127) / largest;
    offset = 128;
  } else {
    scale = high < kZero ? T(0) : T(255) / high;
  }
  for (int64_t p = 0; p < pixels; ++p) {
    const bool ok = finite(p);
    for (int c = 0; c < channels; ++c) {
      const int64_t i = p * channels + c;
      out[i] = ok ? static_cast<uint8_t>(in[i] * scale + offset) : bad[c];
    }
  }
}

class ImageSummaryOp : public OpKernel {
 public:
  explicit ImageSummaryOp(OpKernelConstruction& c) : OpKernel(c) {
    std::vector<int64_t> bad;
    c.SetStatus(c.GetAttr("max_images", &max_images_));
    c.SetStatus(c.GetAttr("bad_color", &bad));
    for (int64_t v : bad) {
      if (v < 0 || v > 255) {
        c.SetStatus(errors::InvalidArgument("bad_color's values are bytes, not ", v));
        return;
      }
      bad_color_.push_back(static_cast<uint8_t>(v));
    }
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& tag = ctx.input(0);
    const Tensor& images = ctx.input(1);
    TFD_OP_REQUIRES(
        ctx, tag.rank() == 0,
        errors::InvalidArgument("ImageSummary '", node().name, "': the tag must be a scalar, not ",
                                tag.shape().ToString()));
    TFD_OP_REQUIRES_OK(ctx, CheckShape(images));
    const TensorShape& s = images.shape();
    const int channels = static_cast<int>(s.dim(3));
    const int64_t count = std::min(s.dim(0), max_images_), pixels = s.dim(1) * s.dim(2);
    const std::string& base = tag.scalar<std::string>();
    std::string summary;
    std::vector<uint8_t> bytes(static_cast<size_t>(pixels * channels));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t at = i * pixels * channels;
      switch (images.dtype()) {
        case DType::kUInt8:
          std::copy_n(images.data<uint8_t>() + at, bytes.size(), bytes.data());
          break;
        case DType::kFloat32:
          FloatImageToBytes(images.data<float>() + at, pixels, channels, bad_color_, bytes.data());
          break;
        default:
          FloatImageToBytes(images.data<double>() + at, pixels, channels, bad_color_, bytes.data());
      }
      auto png = kernels::summary::EncodePng(bytes.data(), s.dim(1), s.dim(2), channels);
      TFD_OP_REQUIRES_OK(ctx, png.status());
      AddImage(summary, max_images_ > 1 ? base + "/image/" + std::to_string(i) : base + "/image", s,
               *png);
    }
    ctx.set_output(0, Tensor::Scalar(std::move(summary)));
  }

 private:
  Status CheckShape(const Tensor& images) const {
    const TensorShape& s = images.shape();
    if (s.rank() != 4 || (s.dim(3) != 1 && s.dim(3) != 3 && s.dim(3) != 4)) {
      return errors::InvalidArgument("ImageSummary '", node().name,
                                     "' takes [batch, height, width, channels] with 1, 3 or 4 "
                                     "channels, not ",
                                     s.ToString());
    }
    if (static_cast<int64_t>(bad_color_.size()) < s.dim(3)) {
      return errors::InvalidArgument("ImageSummary '", node().name, "': bad_color has ",
                                     bad_color_.size(), " values for ", s.dim(3), " channels");
    }
    return OkStatus();
  }

  // Summary.value (1) of Value.tag (1) and Value.image (4): Image.height
  // (1), width (2), colorspace (3: the channels) and encoded_image_string (4).
  static void AddImage(std::string& summary, const std::string& tag, const TensorShape& s,
                       const std::string& png) {
    std::string image;
    for (const auto& [field, value] : {std::pair{1, s.dim(1)}, {2, s.dim(2)}, {3, s.dim(3)}}) {
      proto_wire::PutKey(image, field, proto_wire::kVarint);
      proto_wire::PutVarint(image, static_cast<uint64_t>(value));
    }
    proto_wire::PutBytes(image, 4, png);
    std::string value;
    proto_wire::PutBytes(value, 1, tag);
    proto_wire::PutBytes(value, 4, image);
    proto_wire::PutBytes(summary, 1, value);
  }

  int64_t max_images_ = 3;
  std::vector<uint8_t> bad_color_;
};

Status ImageSummaryShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 4));
  return shape_fns::Scalar(c);
}

}  // namespace

Status RegisterImageSummaryOp(OpRegistry& r) {
  return r.Add<ImageSummaryOp>(
      OpDefBuilder("ImageSummary")
          .Input("tag: string")
          .Input("tensor: T")
          .Output("summary: string")
          .Attr("max_images: int >= 1 = 3")
          .Attr("T: {uint8, float32, float64}")
          .Attr("bad_color: list(int) = [255, 0, 0, 255]")
          .Doc("A serialized tensorflow.Summary with the first max_images images of tensor "
               "([batch, height, width, channels]; 1 channel: grayscale, 3: RGB, 4: RGBA) as PNGs, "
               "tagged tag/image (max_images 1) or "
               "tag/image/0, tag/image/1, ... uint8 pixels are written as they are. A float "
               "image is scaled into [0, 255] by its finite pixels: by 255 / max when none is "
               "negative, else by 127 / max |v| around 128 (values under 1e-6 scale by 0), "
               "truncated; a pixel with a NaN or an infinity takes bad_color's first channels. "
               "Height and width must be at least 1. Shape: []."),
      ImageSummaryShape);
}

}  // namespace tfd::kernels
