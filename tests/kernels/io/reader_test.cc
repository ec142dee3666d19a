// TF1's readers and decoders through their kernels: text lines and fixed-
// length records from a queue of file names, file after file; a read that
// waits for a name; bad files (outside io_dirs, missing, partial records)
// refused one after another while the reader goes on; the end of the queue;
// TFRecords checked record by record, plain or compressed; DecodeCSV and DecodeRaw at their
// edges; tf.train.Example bytes and ParseExample.
#include <zlib.h>

#include <optional>

#include "common/tensor_bundle/crc32c.h"
#include "kernels/io/example_proto.h"
#include "kernels/register_all.h"
#include "tests/kernels/data_flow/queue_test_util.h"
#include "tests/util/io_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

std::vector<std::string> Strings(const Tensor& t) {
  REQUIRE(t.rank() == 1);
  return {t.data<std::string>(), t.data<std::string>() + t.num_elements()};
}

struct ReaderEnv {
  ReaderEnv() {
    REQUIRE(kernels::RegisterAll(registry).ok());
    env.resources = &resources;
    env.io_dirs = {dir.path()};
    auto q = Run("FIFOQueue",
                 {{"component_types", std::vector<DType>{DType::kString}},
                  {"capacity", int64_t{-1}},
                  {"shared_name", std::string("files")}},
                 {});
    REQUIRE(q.ok());
    queue = (*q)[0];
  }
  StatusOr<std::vector<Value>> Run(const std::string& op, AttrMap attrs, std::vector<Value> in) {
    RunOpOptions options;
    options.env = &env;
    return RunOpValues(registry, op, std::move(attrs), std::move(in), options);
  }
  Value Reader(const std::string& op, AttrMap attrs) {
    attrs.emplace("shared_name", op);
    auto r = Run(op, std::move(attrs), {});
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    return (*r)[0];
  }
  void Enqueue(const std::string& file) {
    REQUIRE(Run("QueueEnqueue", {{"Tcomponents", std::vector<DType>{DType::kString}}},
                {queue, Value{Tensor::Scalar(file), nullptr}})
                .ok());
  }
  void Close() { REQUIRE(Run("QueueClose", {}, {queue}).ok()); }
  // {key, value}, or the read's error.
  StatusOr<std::pair<std::string, std::string>> Read(const Value& reader) {
    TFD_ASSIGN_OR_RETURN(auto out, Run("ReaderRead", {}, {reader, queue}));
    return std::make_pair(out[0].tensor.scalar<std::string>(), out[1].tensor.scalar<std::string>());
  }
  // {keys, values} of ReaderReadUpTo, or its error.
  using Records = std::pair<std::vector<std::string>, std::vector<std::string>>;
  StatusOr<Records> ReadUpTo(const Value& reader, int64_t n) {
    TFD_ASSIGN_OR_RETURN(
        auto out, Run("ReaderReadUpTo", {}, {reader, queue, Value{Tensor::Scalar(n), nullptr}}));
    return Records{Strings(out[0].tensor), Strings(out[1].tensor)};
  }
  int64_t Count(const Value& reader, const std::string& op) {
    auto out = Run(op, {}, {reader});
    REQUIRE(out.ok());
    return (*out)[0].tensor.scalar<int64_t>();
  }

  TempDir dir;
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
  Value queue;
};

void RequireRecord(StatusOr<std::pair<std::string, std::string>> got, const std::string& key,
                   const std::string& value) {
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(got->first == key);
  CHECK(got->second == value);
}

TEST_CASE("a text line reader reads each queued file in turn, skipping its header lines") {
  ReaderEnv e;
  WriteFile(e.dir.path() / "a.txt", "head\none\r\ntwo\n");
  WriteFile(e.dir.path() / "empty.txt", "");
  WriteFile(e.dir.path() / "b.txt", "head\nthree");  // no newline at the end
  const Value reader = e.Reader("TextLineReader", {{"skip_header_lines", int64_t{1}}});
  for (const char* f : {"a.txt", "empty.txt", "b.txt"}) e.Enqueue(f);
  e.Close();
  RequireRecord(e.Read(reader), "a.txt:2", "one");
  RequireRecord(e.Read(reader), "a.txt:3", "two");
  RequireRecord(e.Read(reader), "b.txt:2", "three");
  const Status end = e.Read(reader).status();
  CHECK(end.code() == Code::kOutOfRange);
  CHECK(e.Count(reader, "ReaderNumRecordsProduced") == 3);
  CHECK(e.Count(reader, "ReaderNumWorkUnitsCompleted") == 3);
  REQUIRE(e.Run("ReaderReset", {}, {reader}).ok());
  CHECK(e.Count(reader, "ReaderNumRecordsProduced") == 0);
}

TEST_CASE("bad files are refused one after another, naming each, and the reader goes on") {
  ReaderEnv e;
  WriteFile(e.dir.path() / "r.bin", std::string("HH") + "abcd" + "efgh" + "F");
  WriteFile(e.dir.path() / "partial.bin", std::string("HH") + "abcd" + "ef" + "F");
  const Value reader = e.Reader(
      "FixedLengthRecordReader",
      {{"header_bytes", int64_t{2}}, {"record_bytes", int64_t{4}}, {"footer_bytes", int64_t{1}}});
  for (const char* f : {"/etc/passwd", "missing.bin", "partial.bin", "r.bin"}) e.Enqueue(f);
  const Status outside = e.Read(reader).status();
  CHECK(outside.code() == Code::kInvalidArgument);
  CHECK_THAT(outside.message(), Catch::Contains("/etc/passwd"));
  const Status missing = e.Read(reader).status();
  CHECK(missing.code() == Code::kNotFound);
  CHECK_THAT(missing.message(), Catch::Contains("missing.bin"));
  const Status partial = e.Read(reader).status();
  CHECK(partial.code() == Code::kInvalidArgument);
  CHECK_THAT(partial.message(), Catch::Contains("partial.bin"));
  RequireRecord(e.Read(reader), "r.bin:0", "abcd");
  RequireRecord(e.Read(reader), "r.bin:1", "efgh");
}

TEST_CASE("hop_bytes starts a fixed-length record every hop, overlapping or leaving gaps") {
  ReaderEnv e;
  WriteFile(e.dir.path() / "seq.bin", "0123456");  // TF1's own example
  WriteFile(e.dir.path() / "framed.bin",
            "HH"
            "abcdefgh"
            "F");  // gaps, header, footer
  WriteFile(e.dir.path() / "short.bin",
            "HH"
            "a"
            "F");  // no whole record
  const Value overlapping = e.Reader("FixedLengthRecordReader",
                                     {{"record_bytes", int64_t{3}}, {"hop_bytes", int64_t{2}}});
  e.Enqueue("seq.bin");
  RequireRecord(e.Read(overlapping), "seq.bin:0", "012");
  RequireRecord(e.Read(overlapping), "seq.bin:1", "234");
  RequireRecord(e.Read(overlapping), "seq.bin:2", "456");  // "6" is no whole record
  const Value gaps = e.Reader("FixedLengthRecordReader", {{"record_bytes", int64_t{2}},
                                                          {"hop_bytes", int64_t{3}},
                                                          {"header_bytes", int64_t{2}},
                                                          {"footer_bytes", int64_t{1}},
                                                          {"shared_name", std::string("gaps")}});
  for (const char* f : {"short.bin", "framed.bin"}) e.Enqueue(f);
  e.Close();
  RequireRecord(e.Read(gaps), "framed.bin:0", "ab");  // short.bin holds none
  RequireRecord(e.Read(gaps), "framed.bin:1", "de");
  RequireRecord(e.Read(gaps), "framed.bin:2", "gh");
  CHECK(e.Read(gaps).status().code() == Code::kOutOfRange);
  CHECK(e.Count(gaps, "ReaderNumWorkUnitsCompleted") == 2);
  const Status negative = e.Run("FixedLengthRecordReader",
                                {{"record_bytes", int64_t{2}}, {"hop_bytes", int64_t{-1}}}, {})
                              .status();
  CHECK(negative.code() == Code::kInvalidArgument);
  CHECK_THAT(negative.message(), Catch::Contains("hop_bytes >= 0"));
}

// One record framed as TFRecord files frame it; `claimed`, when given, the
// length its header says (with a checksum that holds).
std::string TFRecord(const std::string& data, bool damage_data = false,
                     std::optional<uint64_t> claimed = std::nullopt) {
  const auto masked = [](const std::string& b) {
    const uint32_t crc = kernels::crc32c::Value(b.data(), b.size());
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
  };
  const auto le = [](uint64_t v, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
    return out;
  };
  const std::string length = le(claimed.value_or(data.size()), 8);
  return length + le(masked(length), 4) + data + le(masked(data) + (damage_data ? 1 : 0), 4);
}

TEST_CASE("a TFRecord reader checks each record's checksums and refuses hostile lengths") {
  ReaderEnv e;
  WriteFile(e.dir.path() / "good.rec", TFRecord("first") + TFRecord("") + TFRecord("third"));
  WriteFile(e.dir.path() / "bad.rec", TFRecord("ok") + TFRecord("damaged", true) + TFRecord("x"));
  WriteFile(e.dir.path() / "hostile.rec", TFRecord("y", false, uint64_t{1} << 63));
  const Value reader = e.Reader("TFRecordReader", {});
  for (const char* f : {"bad.rec", "hostile.rec", "good.rec"}) e.Enqueue(f);
  RequireRecord(e.Read(reader), "bad.rec:0", "ok");
  const Status damaged = e.Read(reader).status();  // TF1's DataLossError
  CHECK(damaged.code() == Code::kDataLoss);
  CHECK_THAT(damaged.message(), Catch::Contains("offset 18 of 'bad.rec'"));
  const Status length = e.Read(reader).status();  // refused before anything is allocated
  CHECK(length.code() == Code::kDataLoss);
  CHECK_THAT(length.message(), Catch::Contains("runs past the file"));
  RequireRecord(e.Read(reader), "good.rec:0", "first");
  RequireRecord(e.Read(reader), "good.rec:21", "");
  RequireRecord(e.Read(reader), "good.rec:37", "third");
}

// `data` deflated in one stream, with a zlib frame or (gzip) a gzip one.
std::string Deflate(const std::string& data, bool gzip) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, MAX_WBITS + (gzip ? 16 : 0), 8,
                       Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST_CASE("compressed TFRecord files read as TF1's, keys at offsets in the inflated data") {
  ReaderEnv e;
  // Large enough to span several of the inflater's 256 KiB chunks.
  std::string big(600 * 1024, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) >> 5);
  const std::string records = TFRecord("first") + TFRecord("") + TFRecord(big) + TFRecord("last");
  WriteFile(e.dir.path() / "r.gz", Deflate(records, true));
  WriteFile(e.dir.path() / "r.z", Deflate(records, false));
  // Two gzip members read as one file, as gunzip reads them.
  WriteFile(e.dir.path() / "two.gz", Deflate(TFRecord("a"), true) + Deflate(TFRecord("b"), true));
  const std::string deflated = Deflate(records, true);
  WriteFile(e.dir.path() / "cut.gz", deflated.substr(0, deflated.size() / 2));
  std::string damaged = deflated;
  damaged[0] ^= 0x55;  // gzip's magic number
  WriteFile(e.dir.path() / "damaged.gz", damaged);
  // A length far past what the stream holds: refused once the data ends,
  // never allocated (ASan and the memory budget would see it).
  WriteFile(e.dir.path() / "hostile.gz", Deflate(TFRecord("y", false, uint64_t{1} << 31), true));
  WriteFile(e.dir.path() / "trailing.z", Deflate(TFRecord("x"), false) + "junk");

  const Value gzip = e.Reader("TFRecordReader", {{"compression_type", std::string("GZIP")}});
  for (const char* f : {"r.gz", "two.gz", "cut.gz", "damaged.gz", "hostile.gz"}) e.Enqueue(f);
  const size_t big_at = 21 + 16;
  RequireRecord(e.Read(gzip), "r.gz:0", "first");
  RequireRecord(e.Read(gzip), "r.gz:21", "");
  RequireRecord(e.Read(gzip), "r.gz:" + std::to_string(big_at), big);
  RequireRecord(e.Read(gzip), "r.gz:" + std::to_string(big_at + 16 + big.size()), "last");
  RequireRecord(e.Read(gzip), "two.gz:0", "a");
  RequireRecord(e.Read(gzip), "two.gz:17", "b");
  for (const char* says : {"cut short", "damaged", "runs past the file"}) {
    Status s = e.Read(gzip).status();
    while (s.ok()) s = e.Read(gzip).status();  // records before the damage come out
    INFO(s.ToString());
    CHECK(s.code() == Code::kDataLoss);
    CHECK_THAT(s.message(), Catch::Contains(says));
  }
  const Value zlib = e.Reader("TFRecordReader", {{"compression_type", std::string("ZLIB")},
                                                 {"shared_name", std::string("zlib")}});
  for (const char* f : {"r.z", "trailing.z"}) e.Enqueue(f);
  RequireRecord(e.Read(zlib), "r.z:0", "first");
  for (int i = 0; i < 3; ++i) REQUIRE(e.Read(zlib).ok());
  RequireRecord(e.Read(zlib), "trailing.z:0", "x");
  const Status trailing = e.Read(zlib).status();
  CHECK(trailing.code() == Code::kDataLoss);
  CHECK_THAT(trailing.message(), Catch::Contains("bytes follow the end"));
  CHECK(e.Run("TFRecordReader",
              {{"compression_type", std::string("BZIP2")}, {"shared_name", std::string("bz")}}, {})
            .status()
            .code() == Code::kInvalidArgument);
}

TEST_CASE("a TFRecord longer than a tensor may be is refused before it is read") {
  ReaderEnv e;
  e.env.limits.max_tensor_bytes = 1000;
  WriteFile(e.dir.path() / "r.rec", TFRecord(std::string(1001, 'x')) + TFRecord("next"));
  WriteFile(e.dir.path() / "s.rec", TFRecord(std::string(1000, 'y')));
  const Value reader = e.Reader("TFRecordReader", {});
  for (const char* f : {"r.rec", "s.rec"}) e.Enqueue(f);
  const Status s = e.Read(reader).status();
  CHECK(s.code() == Code::kResourceExhausted);
  CHECK_THAT(s.message(), Catch::Contains("1001 bytes"));
  RequireRecord(e.Read(reader), "s.rec:0", std::string(1000, 'y'));
}

TEST_CASE("a whole-file reader reads each file as one record; an identity reader opens none") {
  ReaderEnv e;
  e.env.limits.max_tensor_bytes = 8;
  WriteFile(e.dir.path() / "a.txt", "12345678");
  WriteFile(e.dir.path() / "empty", "");
  WriteFile(e.dir.path() / "big", "123456789");
  const Value whole = e.Reader("WholeFileReader", {});
  for (const char* f : {"a.txt", "big", "empty"}) e.Enqueue(f);
  RequireRecord(e.Read(whole), "a.txt", "12345678");
  const Status big = e.Read(whole).status();  // refused before it is read
  CHECK(big.code() == Code::kResourceExhausted);
  CHECK_THAT(big.message(), Catch::Contains("'big' holds 9 bytes"));
  RequireRecord(e.Read(whole), "empty", "");
  CHECK(e.Count(whole, "ReaderNumWorkUnitsCompleted") == 1);  // 'empty' ends at the next read

  const Value identity = e.Reader("IdentityReader", {});
  for (const char* work : {"not/a/file", ""}) e.Enqueue(work);
  RequireRecord(e.Read(identity), "not/a/file", "not/a/file");
  RequireRecord(e.Read(identity), "", "");  // an empty work item is one too
  e.Close();
  CHECK(e.Read(identity).status().code() == Code::kOutOfRange);
  CHECK(e.Count(identity, "ReaderNumRecordsProduced") == 2);
}

void RequireRecords(StatusOr<ReaderEnv::Records> got, const std::vector<std::string>& keys,
                    const std::vector<std::string>& values) {
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(got->first == keys);
  CHECK(got->second == values);
}

TEST_CASE("ReaderReadUpTo stops at a file's end, never drops a record, refuses a bad count") {
  ReaderEnv e;
  WriteFile(e.dir.path() / "a.txt", "1\n2\n3\n4\n5\n");
  WriteFile(e.dir.path() / "empty.txt", "");
  WriteFile(e.dir.path() / "b.txt", "6\n7\n");
  const Value reader = e.Reader("TextLineReader", {});
  for (const char* f : {"a.txt", "empty.txt", "b.txt"}) e.Enqueue(f);
  e.Close();
  for (int64_t bad : {0, -1}) {
    const Status s = e.ReadUpTo(reader, bad).status();
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains(std::to_string(bad)));
  }
  RequireRecords(e.ReadUpTo(reader, 3), {"a.txt:1", "a.txt:2", "a.txt:3"}, {"1", "2", "3"});
  RequireRecords(e.ReadUpTo(reader, 3), {"a.txt:4", "a.txt:5"}, {"4", "5"});  // a's end
  RequireRecords(e.ReadUpTo(reader, 3), {"b.txt:1", "b.txt:2"}, {"6", "7"});  // past empty.txt
  CHECK(e.ReadUpTo(reader, 3).status().code() == Code::kOutOfRange);
  CHECK(e.Count(reader, "ReaderNumRecordsProduced") == 7);
  CHECK(e.Count(reader, "ReaderNumWorkUnitsCompleted") == 3);
}

TEST_CASE("ReaderReadUpTo hands out the records before a bad one, then its error") {
  ReaderEnv e;
  WriteFile(e.dir.path() / "bad.rec", TFRecord("ok") + TFRecord("fine") + TFRecord("bad", true));
  WriteFile(e.dir.path() / "good.rec", TFRecord("next"));
  const Value reader = e.Reader("TFRecordReader", {});
  for (const char* f : {"bad.rec", "good.rec"}) e.Enqueue(f);
  RequireRecords(e.ReadUpTo(reader, 10), {"bad.rec:0", "bad.rec:18"}, {"ok", "fine"});
  const Status damaged = e.ReadUpTo(reader, 10).status();
  CHECK(damaged.code() == Code::kDataLoss);
  CHECK_THAT(damaged.message(), Catch::Contains("offset 38 of 'bad.rec'"));
  RequireRecords(e.ReadUpTo(reader, 10), {"good.rec:0"}, {"next"});
}

TEST_CASE("ReaderReadUpTo keeps a read's values within --max-tensor-bytes, holding one over") {
  ReaderEnv e;
  e.env.limits.max_tensor_bytes = 10;
  WriteFile(e.dir.path() / "r.rec",
            TFRecord("aaaaaa") + TFRecord("bbbbbb") + TFRecord("cc") + TFRecord("dddddddddd"));
  const Value reader = e.Reader("TFRecordReader", {});
  e.Enqueue("r.rec");
  e.Close();
  RequireRecords(e.ReadUpTo(reader, 4), {"r.rec:0"}, {"aaaaaa"});
  RequireRecords(e.ReadUpTo(reader, 4), {"r.rec:22", "r.rec:44"}, {"bbbbbb", "cc"});
  RequireRecords(e.ReadUpTo(reader, 4), {"r.rec:62"}, {"dddddddddd"});
  CHECK(e.ReadUpTo(reader, 4).status().code() == Code::kOutOfRange);
  CHECK(e.Count(reader, "ReaderNumRecordsProduced") == 4);
}

TEST_CASE("a read waits for a file name and goes on when one is queued") {
  ReaderEnv e;
  WriteFile(e.dir.path() / "late.txt", "x\n");
  const Value reader = e.Reader("TextLineReader", {});
  AsyncCall read(e.registry, e.env, "ReaderRead", {}, {reader, e.queue}, nullptr);
  CHECK_FALSE(read.finished());  // parked on the empty queue, no thread held
  e.Enqueue("late.txt");
  REQUIRE(read.Wait());
  INFO(read.status().ToString());
  REQUIRE(read.status().ok());
  CHECK(read.output(0).scalar<std::string>() == "late.txt:1");
  CHECK(read.output(1).scalar<std::string>() == "x");
}

StatusOr<std::vector<Tensor>> Csv(ReaderEnv& e, std::vector<std::string> lines,
                                  std::vector<Tensor> defaults, AttrMap attrs = {}) {
  std::vector<DType> types;
  for (const Tensor& d : defaults) types.push_back(d.dtype());
  attrs.emplace("OUT_TYPE", types);
  std::vector<Value> in{Value{Tensor::FromVector<std::string>(lines), nullptr}};
  for (Tensor& d : defaults) in.push_back(Value{std::move(d), nullptr});
  TFD_ASSIGN_OR_RETURN(auto out, e.Run("DecodeCSV", std::move(attrs), std::move(in)));
  std::vector<Tensor> t;
  for (Value& v : out) t.push_back(std::move(v.tensor));
  return t;
}

TEST_CASE("DecodeCSV: quotes, defaults, na_value and select_cols; each bad field named") {
  ReaderEnv e;
  auto out = Csv(e, {"1,\"a,\"\"b\"\"\",2.5", ",plain,", " -7 ,NA,inf"},
                 {Tensor::FromVector<int32_t>({9}), Tensor::FromVector<std::string>({"?"}),
                  Tensor::FromVector<float>({-1.0f})},
                 {{"na_value", std::string("NA")}});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(std::vector<int32_t>((*out)[0].data<int32_t>(), (*out)[0].data<int32_t>() + 3) ==
        std::vector<int32_t>{1, 9, -7});
  CHECK((*out)[1].data<std::string>()[0] == "a,\"b\"");
  CHECK((*out)[1].data<std::string>()[2] == "?");
  CHECK((*out)[2].data<float>()[1] == -1.0f);
  CHECK(std::isinf((*out)[2].data<float>()[2]));

  auto picked =
      Csv(e, {"1,2,3,4"}, {Tensor::FromVector<int64_t>({0}), Tensor::FromVector<int64_t>({0})},
          {{"select_cols", std::vector<int64_t>{1, 3}}});
  REQUIRE(picked.ok());
  CHECK((*picked)[0].data<int64_t>()[0] == 2);
  CHECK((*picked)[1].data<int64_t>()[0] == 4);

  const Tensor required = Tensor::FromVector<int32_t>({});
  for (const auto& [line, says] :
       std::vector<std::pair<std::string, std::string>>{{"", "required but missing"},
                                                        {"1,2", "has 2 fields, expected 1"},
                                                        {"x", "is not a valid int32"},
                                                        {"3000000000", "is not a valid int32"},
                                                        {"\"open", "not closed"},
                                                        {"\"a\"b", "quote inside"}}) {
    INFO(line);
    const Status s = Csv(e, {line}, {required}).status();
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains(says));
  }
}

TEST_CASE("DecodeRaw reads either byte order and refuses strings of unequal or partial length") {
  ReaderEnv e;
  auto run = [&](std::vector<std::string> bytes, bool little) {
    return e.Run("DecodeRaw", {{"out_type", DType::kInt32}, {"little_endian", little}},
                 {Value{Tensor::FromVector<std::string>(bytes), nullptr}});
  };
  const std::string one_two("\x01\x00\x00\x00\x00\x00\x00\x02", 8);
  auto little = run({one_two}, true);
  REQUIRE(little.ok());
  const Tensor& l = (*little)[0].tensor;
  CHECK(l.shape() == TensorShape{1, 2});
  CHECK(l.data<int32_t>()[0] == 1);
  CHECK(l.data<int32_t>()[1] == 0x02000000);
  auto big = run({one_two}, false);
  REQUIRE(big.ok());
  CHECK((*big)[0].tensor.data<int32_t>()[0] == 0x01000000);
  CHECK((*big)[0].tensor.data<int32_t>()[1] == 2);
  CHECK(run({"abcd", "ab"}, true).status().code() == Code::kInvalidArgument);
  CHECK_THAT(run({"abcde"}, true).status().message(), Catch::Contains("not a whole number"));
}

// Protobuf wire bytes, written out by hand.
std::string Field(int number, const std::string& payload) {
  return std::string(1, static_cast<char>(number << 3 | 2)) +
         std::string(1, static_cast<char>(payload.size())) + payload;
}
std::string ExampleOf(const std::string& key, const std::string& feature) {
  return Field(1, Field(1, Field(1, key) + Field(2, feature)));
}

TEST_CASE("an Example's features read packed or not, unknown fields skipped, bad bytes refused") {
  using kernels::io::ExampleFeature;
  using kernels::io::ParseExampleProto;
  // int64_list with values 1 and 300 unpacked (two varint fields), then an
  // unknown fixed32 field 7; float_list packed; a bytes_list given twice merges.
  const std::string ints = Field(3, std::string("\x08\x01\x08\xac\x02\x3d\x00\x00\x00\x00", 10));
  const std::string floats = Field(2, Field(1, std::string("\x00\x00\x80\x3f", 4)));
  const std::string bytes = Field(1, Field(1, "a")) + Field(1, Field(1, "bc"));
  auto got = ParseExampleProto(ExampleOf("i", ints) + ExampleOf("f", floats) +
                               ExampleOf("b", bytes) + std::string("\x10\x05", 2));
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK((*got)["i"].ints == std::vector<int64_t>{1, 300});
  CHECK((*got)["f"].floats == std::vector<float>{1.0f});
  CHECK((*got)["b"].bytes == std::vector<std::string>{"a", "bc"});
  for (const std::string& bad :
       {ExampleOf("i", ints).substr(0, 9), std::string("\x0b"), std::string(11, '\xff')}) {
    const Status s = ParseExampleProto(bad).status();
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("not a tf.train.Example"));
  }
}

TEST_CASE("ParseExample fills defaults, names the example of each error, builds sparse rows") {
  ReaderEnv e;
  const std::string one =
      ExampleOf("x", Field(2, Field(1, std::string("\x00\x00\x80\x3f\x00\x00\x00\x40", 8))));
  const std::string none = Field(1, "");
  const auto run = [&](std::vector<std::string> serialized, Tensor fallback,
                       std::vector<std::string> names = {}) {
    return e.Run(
        "ParseExample",
        {{"Nsparse", int64_t{1}},
         {"Ndense", int64_t{1}},
         {"sparse_types", std::vector<DType>{DType::kFloat32}},
         {"Tdense", std::vector<DType>{DType::kFloat32}},
         {"dense_shapes", std::vector<PartialShape>{PartialShape({2})}}},
        {Value{Tensor::FromVector<std::string>(serialized), nullptr},
         Value{Tensor::FromVector<std::string>(names), nullptr},
         Value{Tensor::Scalar(std::string("x")), nullptr},
         Value{Tensor::Scalar(std::string("x")), nullptr}, Value{std::move(fallback), nullptr}});
  };
  auto out = run({one, none}, Tensor::FromVector<float>({7, 8}));
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  const Tensor& dense = (*out)[3].tensor;
  CHECK(std::vector<float>(dense.data<float>(), dense.data<float>() + 4) ==
        std::vector<float>{1, 2, 7, 8});
  const Tensor& indices = (*out)[0].tensor;
  CHECK(std::vector<int64_t>(indices.data<int64_t>(), indices.data<int64_t>() + 4) ==
        std::vector<int64_t>{0, 0, 0, 1});
  CHECK(std::vector<int64_t>((*out)[2].tensor.data<int64_t>(),
                             (*out)[2].tensor.data<int64_t>() + 2) == std::vector<int64_t>{2, 2});
  const Status required = run({one, none}, Tensor::FromVector<float>({}), {"a", "b"}).status();
  CHECK(required.code() == Code::kInvalidArgument);
  CHECK_THAT(required.message(), Catch::Contains("example 1 ('b'): feature 'x' is required"));
  const std::string three = ExampleOf("x", Field(2, Field(1, std::string(12, '\0'))));
  CHECK_THAT(run({three}, Tensor::FromVector<float>({})).status().message(),
             Catch::Contains("has 3 values"));
  auto vector_key = e.Run("ParseExample",
                          {{"Nsparse", int64_t{1}},
                           {"Ndense", int64_t{0}},
                           {"sparse_types", std::vector<DType>{DType::kFloat32}},
                           {"Tdense", std::vector<DType>{}},
                           {"dense_shapes", std::vector<PartialShape>{}}},
                          {Value{Tensor::FromVector<std::string>({one}), nullptr},
                           Value{Tensor::FromVector<std::string>({}), nullptr},
                           Value{Tensor::FromVector<std::string>({}), nullptr}});
  CHECK_THAT(vector_key.status().message(), Catch::Contains("must be a string scalar"));
  const std::string ints = ExampleOf("x", Field(3, Field(1, "\x01")));
  CHECK_THAT(run({ints}, Tensor::FromVector<float>({})).status().message(),
             Catch::Contains("is not a float32 list"));
}

TEST_CASE("ParseExample pads sequence features to the most blocks and refuses partial blocks") {
  ReaderEnv e;
  // Example a: x = [1, 2, 3, 4] (two blocks of 2); b: none; c: [5, 6].
  const auto floats = [](std::vector<float> v) {
    return ExampleOf("x", Field(2, Field(1, std::string(reinterpret_cast<const char*>(v.data()),
                                                        v.size() * sizeof(float)))));
  };
  const auto run = [&](std::vector<std::string> serialized, Tensor pad, PartialShape shape) {
    return e.Run(
        "ParseExample",
        {{"Nsparse", int64_t{0}},
         {"Ndense", int64_t{1}},
         {"sparse_types", std::vector<DType>{}},
         {"Tdense", std::vector<DType>{DType::kFloat32}},
         {"dense_shapes", std::vector<PartialShape>{std::move(shape)}}},
        {Value{Tensor::FromVector<std::string>(serialized), nullptr},
         Value{Tensor::FromVector<std::string>({}), nullptr},
         Value{Tensor::Scalar(std::string("x")), nullptr}, Value{std::move(pad), nullptr}});
  };
  const std::vector<std::string> batch{floats({1, 2, 3, 4}), Field(1, ""), floats({5, 6})};
  auto padded = run(batch, Tensor::FromVector<float>({-1}), PartialShape({-1, 2}));
  INFO(padded.status().ToString());
  REQUIRE(padded.ok());
  const Tensor& out = (*padded)[0].tensor;
  CHECK(out.shape() == TensorShape({3, 2, 2}));
  CHECK(std::vector<float>(out.data<float>(), out.data<float>() + 12) ==
        std::vector<float>{1, 2, 3, 4, -1, -1, -1, -1, 5, 6, -1, -1});
  auto zeros = run(batch, Tensor::FromVector<float>({}), PartialShape({-1}));
  REQUIRE(zeros.ok());
  CHECK((*zeros)[0].tensor.shape() == TensorShape({3, 4}));
  CHECK((*zeros)[0].tensor.data<float>()[5] == 0.0f);
  auto none = run({Field(1, "")}, Tensor::FromVector<float>({}), PartialShape({-1, 3}));
  REQUIRE(none.ok());
  CHECK((*none)[0].tensor.shape() == TensorShape({1, 0, 3}));
  const Status partial = run(batch, Tensor::FromVector<float>({}), PartialShape({-1, 3})).status();
  CHECK(partial.code() == Code::kInvalidArgument);
  CHECK_THAT(partial.message(), Catch::Contains("example 0: feature 'x' has 4 values, not whole "
                                                "blocks of 3"));
  const Status two = run(batch, Tensor::FromVector<float>({0, 0}), PartialShape({-1})).status();
  CHECK_THAT(two.message(), Catch::Contains("must be one value"));
  const Status inner = run(batch, Tensor::FromVector<float>({}), PartialShape({2, -1})).status();
  CHECK_THAT(inner.message(), Catch::Contains("all but a first dimension of -1"));
}

// A SequenceExample of one feature list `key` whose steps are `features`
// (serialized Features messages' Feature payloads), after a context.
std::string SequenceOf(const std::string& key, const std::vector<std::string>& features) {
  std::string list;
  for (const std::string& f : features) list += Field(1, f);
  return Field(1, Field(1, Field(1, "ctx") + Field(2, Field(1, Field(1, "c"))))) +
         Field(2, Field(1, Field(1, key) + Field(2, list)));
}

TEST_CASE("ParseFeatureLists reads a SequenceExample's steps, dense and sparse, and names errors") {
  ReaderEnv e;
  const auto ints = [](std::string varints) { return Field(3, Field(1, varints)); };
  const auto run = [&](const std::string& serialized, DType type, PartialShape shape, bool sparse,
                       std::vector<std::string> may_miss = {}) {
    const Value key{Tensor::Scalar(std::string("ids")), nullptr};
    std::vector<Value> in{Value{Tensor::Scalar(serialized), nullptr},
                          Value{Tensor::Scalar(std::string("ex7")), nullptr}, key,
                          Value{Tensor::FromVector<std::string>(may_miss), nullptr}};
    return e.Run("ParseFeatureLists",
                 {{"Nsparse", int64_t{sparse ? 1 : 0}},
                  {"Ndense", int64_t{sparse ? 0 : 1}},
                  {"sparse_types", sparse ? std::vector<DType>{type} : std::vector<DType>{}},
                  {"Tdense", sparse ? std::vector<DType>{} : std::vector<DType>{type}},
                  {"dense_shapes", sparse ? std::vector<PartialShape>{}
                                          : std::vector<PartialShape>{std::move(shape)}}},
                 std::move(in));
  };
  // Steps [1, 2], [3, 4], [5, 300] as int64 lists, the last unpacked.
  const std::string seq = SequenceOf("ids", {ints("\x01\x02"), ints("\x03\x04"),
                                             Field(3, std::string("\x08\x05\x08\xac\x02", 5))});
  auto dense = run(seq, DType::kInt64, PartialShape({2}), false);
  INFO(dense.status().ToString());
  REQUIRE(dense.ok());
  const Tensor& d = (*dense)[0].tensor;
  CHECK(d.shape() == TensorShape({3, 2}));
  CHECK(std::vector<int64_t>(d.data<int64_t>(), d.data<int64_t>() + 6) ==
        std::vector<int64_t>{1, 2, 3, 4, 5, 300});
  // Sparse: steps of 2, 0 and 1 values.
  auto sparse = run(SequenceOf("ids", {ints("\x01\x02"), "", ints("\x09")}), DType::kInt64,
                    PartialShape(), true);
  REQUIRE(sparse.ok());
  const Tensor& idx = (*sparse)[0].tensor;
  CHECK(std::vector<int64_t>(idx.data<int64_t>(), idx.data<int64_t>() + 6) ==
        std::vector<int64_t>{0, 0, 0, 1, 2, 0});
  const Tensor& shape = (*sparse)[2].tensor;
  CHECK(std::vector<int64_t>(shape.data<int64_t>(), shape.data<int64_t>() + 2) ==
        std::vector<int64_t>{3, 2});
  // A missing list: required, or no steps when it may be missing.
  const std::string other = SequenceOf("other", {ints("\x01")});
  const Status missing = run(other, DType::kInt64, PartialShape({2}), false).status();
  CHECK(missing.code() == Code::kInvalidArgument);
  CHECK_THAT(missing.message(), Catch::Contains("sequence example 'ex7': feature list 'ids' is "
                                                "required but missing"));
  auto empty = run(other, DType::kInt64, PartialShape({2}), false, {"ids"});
  REQUIRE(empty.ok());
  CHECK((*empty)[0].tensor.shape() == TensorShape({0, 2}));
  const Status wrong = run(seq, DType::kInt64, PartialShape({3}), false).status();
  CHECK_THAT(wrong.message(), Catch::Contains("feature list 'ids' step 0 has 2 values"));
  const Status kind = run(seq, DType::kFloat32, PartialShape({2}), false).status();
  CHECK_THAT(kind.message(), Catch::Contains("step 0 is not a float32 list"));
  // A type no feature holds is refused when the kernel is made, never copied into.
  const Status int32 = run(seq, DType::kInt32, PartialShape({2}), false).status();
  CHECK(int32.code() == Code::kInvalidArgument);
  CHECK_THAT(int32.message(), Catch::Contains("float32, int64 or string, not int32"));
  CHECK_THAT(run(seq, DType::kInt64, PartialShape({-1}), false).status().message(),
             Catch::Contains("dense_shapes must be fully defined; got [?]"));
  const Status bad =
      run(seq.substr(0, seq.size() - 2), DType::kInt64, PartialShape({2}), false).status();
  CHECK(bad.code() == Code::kInvalidArgument);
  CHECK_THAT(bad.message(), Catch::Contains("sequence example 'ex7'"));
}

}  // namespace
}  // namespace tfd::testing
