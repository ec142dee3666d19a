// Graph versions: which tfd wrote a graph and which tfds may run it, as
// TensorFlow's GraphDef.versions. A graph carries the graph version of the
// tfd that wrote it (producer), the oldest graph version that may run it
// (min_consumer) and any that may not (bad_consumers); this file holds this
// build's numbers, the one place they are written down.
//
//   GraphDef g = ...;                       // g.versions: this build's, unless loaded
//   TFD_RETURN_IF_ERROR(CheckGraphVersions(g.versions));  // Graph::Build does this first
//
// Graph versions count changes to what a graph file means, not releases.
// Bump kGraphVersion when graphs written by this tfd may mean something an
// older one would get wrong or cannot tell (say, an op's new attr that
// writers cannot leave out); raise kGraphMinConsumer with it when older
// tfds must refuse such graphs, and kGraphMinProducer when this tfd can no
// longer run graphs written before some version. History:
//   0  graphs written before tfd recorded versions (the field is absent)
//   1  graphs carry versions; writers leave out attrs equal to their op's
//      default (common/op_registry.h StripDefaultAttrs), so an older tfd
//      runs any graph that sets no attr it lacks
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace tfd {

// The graph version of this build: what it writes as producer.
inline constexpr int32_t kGraphVersion = 1;
// The oldest producer this build runs: 0 runs every graph file ever written.
inline constexpr int32_t kGraphMinProducer = 0;
// What this build writes as min_consumer: the oldest graph version that
// runs what it writes. 0 while writers leave out the attrs older tfds lack.
inline constexpr int32_t kGraphMinConsumer = 0;

static_assert(kGraphMinProducer <= kGraphVersion && kGraphMinConsumer <= kGraphVersion,
              "this build must run the graphs it writes");

// A graph's versions. The defaults are this build's: a graph built in this
// process was written by it. A graph loaded from a file or the wire has the
// versions it carries (producer 0, min_consumer 0 when it carries none).
struct GraphVersions {
  int32_t producer = kGraphVersion;
  int32_t min_consumer = kGraphMinConsumer;
  std::vector<int32_t> bad_consumers;

  bool operator==(const GraphVersions&) const = default;
};

// OK when this build may run a graph with `versions`; otherwise
// FAILED_PRECONDITION naming the graph's version and this build's, and
// which to upgrade: min_consumer above kGraphVersion, kGraphVersion among
// bad_consumers, or producer below kGraphMinProducer.
Status CheckGraphVersions(const GraphVersions& versions);

// True when the graph was written by a newer tfd than this one: what it
// names that this build does not know (an op, an attr, an attr value kind)
// is then most likely newer than this build rather than a mistake.
bool WrittenByNewerTfd(const GraphVersions& versions);

// For an error about something in a graph this build does not know: `why`
// ("op X has no attr 'y'") turned into FAILED_PRECONDITION that says the
// graph comes from a newer tfd and this one must be upgraded. Call it only
// when WrittenByNewerTfd(versions).
Status NewerGraphError(const GraphVersions& versions, const std::string& why);

// The versions of a graph made of two (a session's graph and an extension):
// the newer producer, the higher min_consumer, both lists of bad consumers.
GraphVersions CombineGraphVersions(const GraphVersions& a, const GraphVersions& b);

// "producer 1, min consumer 0" (and ", bad consumers 2, 3" when there are
// any), for `tfctl graph show` and messages.
std::string GraphVersionsToString(const GraphVersions& versions);

}  // namespace tfd
