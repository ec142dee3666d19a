#include "common/rendezvous.h"

namespace tfd {

std::string Rendezvous::MakeKey(const std::string& src_device, const std::string& dst_device,
                                const std::string& edge) {
  return src_device + ";" + dst_device + ";" + edge;
}

StatusOr<Rendezvous::ParsedKey> Rendezvous::ParseKey(const std::string& key) {
  const size_t a = key.find(';');
  const size_t b = a == std::string::npos ? a : key.find(';', a + 1);
  if (b == std::string::npos) {
    return errors::InvalidArgument("rendezvous key '", key, "' is not SRC;DST;EDGE");
  }
  return ParsedKey{key.substr(0, a), key.substr(a + 1, b - a - 1), key.substr(b + 1)};
}

}  // namespace tfd
