#include "common/rendezvous_key.h"

#include <algorithm>
#include <string_view>

namespace tfd {
namespace {

// FrameRendezvous::Suffix writes the frame instance as 16 hex digits.
constexpr size_t kFrameDigits = 16;

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool AllOf(std::string_view s, bool (*is)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is);
}

// Takes a ";FRAME:ITER" suffix off `k.edge` into `k.frame` and `k.iter`,
// when the edge ends with one.
void TakeFrameSuffix(RendezvousKeyParts& k) {
  const size_t semi = k.edge.rfind(';');
  if (semi == std::string::npos) return;
  const std::string_view suffix = std::string_view(k.edge).substr(semi + 1);
  const size_t colon = suffix.find(':');
  if (colon != kFrameDigits || !AllOf(suffix.substr(0, colon), IsHex)) return;
  const std::string_view iter = suffix.substr(colon + 1);
  if (!AllOf(iter, IsDigit) || iter.size() > 18) return;  // fits in int64
  k.frame = std::string(suffix.substr(0, colon));
  k.iter = std::stoll(std::string(iter));
  k.edge.resize(semi);
}

}  // namespace

StatusOr<RendezvousKeyParts> SplitRendezvousKey(const std::string& key) {
  const size_t a = key.find(';');
  const size_t b = a == std::string::npos ? a : key.find(';', a + 1);
  if (b == std::string::npos) {
    return errors::InvalidArgument("rendezvous key '", key, "' is not SRC;DST;EDGE");
  }
  RendezvousKeyParts k{key.substr(0, a), key.substr(a + 1, b - a - 1), key.substr(b + 1)};
  TakeFrameSuffix(k);
  return k;
}

std::string DescribeRendezvousKey(const std::string& key) {
  auto k = SplitRendezvousKey(key);
  if (!k.ok()) return "'" + key + "'";
  std::string out =
      "edge '" + k->edge + "' from " + k->src_device + " to " + k->dst_device;
  if (k->iter >= 0) out += " in iteration " + std::to_string(k->iter) + " of a while loop";
  return out;
}

}  // namespace tfd
