// StringToHashBucketFast and the FarmHash Fingerprint64 under it: published
// Fingerprint64 values (the ones Guava's and other ports' tests check against
// Google's reference code) for every length class, the example in
// TensorFlow's documentation, and the op's shapes.
#include <string>

#include "kernels/array/fingerprint.h"
#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

using kernels::array::Fingerprint64;

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST_CASE("Fingerprint64 gives FarmHash's published values at every length class") {
  CHECK(Fingerprint64("") == 11160318154034397263ULL);       // 0 bytes
  CHECK(Fingerprint64("Q") == 13816109650407654260ULL);      // 1..3
  CHECK(Fingerprint64("test") == 8581389452482819506ULL);    // 4..7
  CHECK(Fingerprint64("#cDR^sLO") == 328147020574120176ULL);  // 8..16
  CHECK(Fingerprint64("/dWQW6&i7h$1@") == 11452602314494946942ULL);
  CHECK(Fingerprint64("dXB@tDQ-v5<H]rq2Pcc*s>nC-[Mdy") == 8365906589669344754ULL);  // 17..32
  CHECK(Fingerprint64(Repeat("test", 8)) == 14250503356343785354ULL);                // 32
  CHECK(Fingerprint64("2/?98ns)xbzEVL^:wCS$7l3@_g!zP^<D.-bd6") == 9728733090894310797ULL);
  CHECK(Fingerprint64("F7479877-4690-4A44-AFC9-8FE987EA512F:some_other_id") ==
        6862335115798125349ULL);  // 33..64
  // Past 64 bytes: 73 (one block and a tail) and 256 (four blocks, no tail).
  CHECK(Fingerprint64("0376d8dc-a717-425a-9dd2-d4b36bcaddac:65d52a5d-4f88-4a78-97c9-08464d44bbb6") ==
        14340110469024474010ULL);
  CHECK(Fingerprint64(Repeat("test", 64)) == 3500507768004279527ULL);
}

TEST_CASE("StringToHashBucketFast buckets as TensorFlow does") {
  // tf.strings.to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3) in TF's docs.
  CheckTensor(RunOne("StringToHashBucketFast", {{"num_buckets", int64_t{3}}},
                     {Str({"Hello", "TensorFlow", "2.x"}, TensorShape({3}))}),
              DType::kInt64, TensorShape({3}), {0, 2, 2});
  // The bucket is the unsigned fingerprint modulo num_buckets, never negative.
  const int64_t big = int64_t{1} << 62;
  const std::string s = Repeat("test", 64);
  const Tensor out = RunOne("StringToHashBucketFast", {{"num_buckets", big}},
                            {Str({s, s, "", "Q"}, TensorShape({2, 2}))});
  REQUIRE(out.shape() == TensorShape({2, 2}));
  CHECK(out.data<int64_t>()[0] == static_cast<int64_t>(3500507768004279527ULL % big));
  CHECK(out.data<int64_t>()[2] == static_cast<int64_t>(11160318154034397263ULL % big));
  CHECK(out.data<int64_t>()[3] == static_cast<int64_t>(13816109650407654260ULL % big));
  CheckTensor(RunOne("StringToHashBucketFast", {{"num_buckets", int64_t{1}}},
                     {Str({}, TensorShape({0, 3}))}),
              DType::kInt64, TensorShape({0, 3}), {});
  CHECK(!Run("StringToHashBucketFast", {{"num_buckets", int64_t{0}}},
             {Str({"a"}, TensorShape({1}))})
             .ok());
}

}  // namespace
}  // namespace tfd::array_test
