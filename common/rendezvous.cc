#include "common/rendezvous.h"

#include "common/rendezvous_key.h"

namespace tfd {

std::string Rendezvous::MakeKey(const std::string& src_device, const std::string& dst_device,
                                const std::string& edge) {
  return src_device + ";" + dst_device + ";" + edge;
}

StatusOr<Rendezvous::ParsedKey> Rendezvous::ParseKey(const std::string& key) {
  TFD_ASSIGN_OR_RETURN(RendezvousKeyParts k, SplitRendezvousKey(key));
  return ParsedKey{std::move(k.src_device), std::move(k.dst_device), std::move(k.edge)};
}

}  // namespace tfd
