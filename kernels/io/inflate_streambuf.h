// InflateStreambuf: a file read through zlib, as a std::streambuf, for TF1's
// compressed TFRecord files (compression_type "ZLIB" or "GZIP": the whole
// file is one compressed stream with the records inside).
//
//   auto file = std::make_unique<std::filebuf>();
//   file->open(path, std::ios::binary | std::ios::in);
//   InflateStreambuf buf(std::move(file), Compression::kGzip);
//   std::istream in(&buf);        // in.tellg(): the offset in the inflated data
//   ... in.read(...) ...
//   if (!buf.status().ok()) ...   // damaged or cut short: DATA_LOSS
//
// A read that stops early (fewer bytes than asked, eof) is the end of the
// data only when status() is OK: a damaged stream, one that ends before
// zlib's end marker, or bytes after it (for ZLIB) set a DATA_LOSS status
// and end the data there. A GZIP file of several members (`cat a.gz b.gz`)
// reads as their concatenation, as gunzip does. Only tellg-style position
// queries are supported, no seeking.
//
// Thread-safety: none; one reader at a time, as any streambuf.
#pragma once

#include <cstdint>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

#include "common/status.h"

namespace tfd::kernels::io {

enum class Compression { kNone, kZlib, kGzip };

// "" -> kNone, "ZLIB", "GZIP" as TF1 spells them; INVALID_ARGUMENT otherwise.
StatusOr<Compression> CompressionFromName(const std::string& name);

class InflateStreambuf : public std::streambuf {
 public:
  // `compression` is kZlib or kGzip; `file` is open for reading.
  InflateStreambuf(std::unique_ptr<std::streambuf> file, Compression compression);
  ~InflateStreambuf() override;
  InflateStreambuf(const InflateStreambuf&) = delete;
  InflateStreambuf& operator=(const InflateStreambuf&) = delete;

  // OK, or why the data ended early (DATA_LOSS; INTERNAL for zlib itself).
  const Status& status() const { return status_; }

 protected:
  int_type underflow() override;
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override;

 private:
  struct Zlib;
  // Inflates into out_ until some bytes come out or the data ends.
  size_t Inflate();
  bool RefillInput();
  void Fail(Status s);

  std::unique_ptr<std::streambuf> file_;
  const Compression compression_;
  std::unique_ptr<Zlib> zlib_;
  std::vector<char> in_, out_;
  int64_t delivered_ = 0;     // inflated bytes before out_'s current contents
  bool file_done_ = false;    // the compressed file is read to its end
  bool stream_done_ = false;  // zlib's end marker seen, and no member follows
  Status status_;
};

}  // namespace tfd::kernels::io
