// A file read through zlib; see inflate_streambuf.h.
#include "kernels/io/inflate_streambuf.h"

#include <zlib.h>

namespace tfd::kernels::io {

namespace {

// Compressed bytes read, and inflated bytes handed out, at a time.
constexpr size_t kChunk = size_t{256} << 10;

}  // namespace

struct InflateStreambuf::Zlib {
  z_stream stream{};
  bool started = false;
};

StatusOr<Compression> CompressionFromName(const std::string& name) {
  if (name.empty()) return Compression::kNone;
  if (name == "ZLIB") return Compression::kZlib;
  if (name == "GZIP") return Compression::kGzip;
  return errors::InvalidArgument(R"(compression_type must be "", "ZLIB" or "GZIP", not ')", name,
                                 "'");
}

InflateStreambuf::InflateStreambuf(std::unique_ptr<std::streambuf> file, Compression compression)
    : file_(std::move(file)),
      compression_(compression),
      zlib_(std::make_unique<Zlib>()),
      in_(kChunk),
      out_(kChunk) {
  setg(out_.data(), out_.data(), out_.data());
  // The largest window; 16 more reads a gzip header and trailer instead.
  const int window_bits = compression == Compression::kGzip ? MAX_WBITS + 16 : MAX_WBITS;
  if (inflateInit2(&zlib_->stream, window_bits) != Z_OK) {
    Fail(errors::Internal("zlib could not start inflating"));
    return;
  }
  zlib_->started = true;
}

InflateStreambuf::~InflateStreambuf() {
  if (zlib_->started) inflateEnd(&zlib_->stream);
}

void InflateStreambuf::Fail(Status s) {
  if (status_.ok()) status_ = std::move(s);
}

bool InflateStreambuf::RefillInput() {
  if (file_done_) return false;
  const std::streamsize n = file_->sgetn(in_.data(), static_cast<std::streamsize>(in_.size()));
  if (n <= 0) {
    file_done_ = true;
    return false;
  }
  zlib_->stream.next_in = reinterpret_cast<Bytef*>(in_.data());
  zlib_->stream.avail_in = static_cast<uInt>(n);
  return true;
}

size_t InflateStreambuf::Inflate() {
  z_stream& z = zlib_->stream;
  z.next_out = reinterpret_cast<Bytef*>(out_.data());
  z.avail_out = static_cast<uInt>(out_.size());
  while (z.avail_out == out_.size()) {  // until something comes out
    if (z.avail_in == 0 && !RefillInput()) {
      if (!stream_done_) Fail(errors::DataLoss("the compressed data is cut short"));
      break;
    }
    if (stream_done_) {  // bytes after the end marker
      if (compression_ != Compression::kGzip) {
        Fail(errors::DataLoss("bytes follow the end of the compressed data"));
        break;
      }
      inflateReset(&z);  // the next gzip member
      stream_done_ = false;
    }
    const int r = inflate(&z, Z_NO_FLUSH);
    if (r == Z_STREAM_END) {
      stream_done_ = true;
    } else if (r != Z_OK && !(r == Z_BUF_ERROR && z.avail_in == 0)) {
      Fail(errors::DataLoss("the compressed data is damaged (zlib: ",
                            z.msg != nullptr ? z.msg : std::to_string(r), ")"));
      break;
    }
  }
  return out_.size() - z.avail_out;
}

InflateStreambuf::int_type InflateStreambuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  delivered_ += egptr() - eback();
  size_t n = 0;
  if (status_.ok()) n = Inflate();
  setg(out_.data(), out_.data(), out_.data() + n);
  return n == 0 ? traits_type::eof() : traits_type::to_int_type(*gptr());
}

InflateStreambuf::pos_type InflateStreambuf::seekoff(off_type off, std::ios_base::seekdir dir,
                                                     std::ios_base::openmode) {
  if (off != 0 || dir != std::ios_base::cur) return pos_type(off_type(-1));
  return pos_type(delivered_ + (gptr() - eback()));
}

}  // namespace tfd::kernels::io
