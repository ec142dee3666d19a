// LoginThrottle: when the answer to a failed login may go. It is asked only
// about failures: the Gate compares every token it is given and answers the
// right one at once, so no number of wrong guesses keeps the holder of the
// token out (a peer task, a restarted trainer on the same host as the
// guesser). A wrong one waits for two things, in turn:
//   - its address's backoff: nothing for the first free_failures recent
//     failures, then first_backoff, doubling with each further failure up to
//     max_backoff; an address with no failure for forget_after starts over;
//   - a slot of the global pace: at most `rate` failed answers a second
//     across all addresses (after a burst of as many), first come first
//     served. A failure whose login is cancelled while it waits (its
//     connection closed) gives its place back unused.
//
// What that bounds: a connection has one login in flight (GateService), so a
// guesser that waits for its answers gets at most `rate` guesses a second
// over all its connections and addresses, after a first burst. One that
// hangs up instead of waiting needs a new connection per guess and is
// bounded only by how fast the task accepts connections; the 128 bits every
// token must carry (common/token_file.h) are what make guessing hopeless
// either way: half of 2^128 guesses at a million a second take 5 x 10^24
// years.
//
//   LoginThrottle throttle(timer, {.rate = 10});
//   if (token is wrong) return throttle.Failed("10.0.0.7").then([] { return refusal; });
//
// Memory: at most kMaxAddresses addresses (the one that failed least
// recently goes first, in constant time), and one entry per failure waiting for
// its slot (cancelled ones are swept as the queue grows).
//
// Thread-safety: none; TaskServer keeps it on the event-loop thread. The
// promises it returns fail, rather than touch it, once it is destroyed.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <deque>
#include <list>
#include <string>
#include <unordered_map>

namespace tfd {

class LoginThrottle {
 public:
  static constexpr size_t kMaxAddresses = 10000;

  struct Options {
    // Recent failures of an address answered without a backoff: room for a
    // person retrying with a corrected --token-file.
    int free_failures = 3;
    kj::Duration first_backoff = 100 * kj::MILLISECONDS;
    kj::Duration max_backoff = 5 * kj::SECONDS;  // --failed-login-max-delay
    kj::Duration forget_after = 60 * kj::SECONDS;
    // Failed answers a second, all addresses together (--failed-login-rate);
    // 0: no global pace.
    int rate = 10;
  };

  LoginThrottle(kj::Timer& timer, Options options);

  // Records a failed login from `address`; resolves when its answer may go.
  kj::Promise<void> Failed(const std::string& address);

  // The backoff of an address's `failures`-th recent failure (from 1).
  kj::Duration Backoff(int failures) const;

  size_t addresses() const { return addresses_.size(); }
  // Failures waiting for a slot of the global pace, cancelled ones included
  // until they are swept.
  size_t queued() const { return queue_.size(); }

 private:
  struct Address {
    int failures = 0;
    kj::TimePoint last = kj::origin<kj::TimePoint>();
    std::list<std::string>::iterator recency;  // its place in recency_
  };

  // Counts a failure of `address` now; returns its backoff.
  kj::Duration Record(const std::string& address, kj::TimePoint now);
  // Waits for a slot of the global pace.
  kj::Promise<void> Pace();
  // Whether a slot is free at `now`, and taking it.
  bool SlotFree(kj::TimePoint now) const;
  void TakeSlot(kj::TimePoint now);
  // Answers the queue's failures as slots free; ends when it is empty.
  kj::Promise<void> Pump();

  kj::Timer& timer_;
  const Options options_;
  const kj::Duration interval_;   // between slots: 1 s / rate
  const kj::Duration tolerance_;  // how far ahead slots may be taken: the burst

  std::unordered_map<std::string, Address> addresses_;
  std::list<std::string> recency_;  // addresses, least recent failure first

  kj::TimePoint next_slot_;  // the theoretical time of the next slot (GCRA)
  std::deque<kj::Own<kj::PromiseFulfiller<void>>> queue_;
  size_t sweep_at_;  // queue size at which cancelled entries are swept out
  bool pumping_ = false;
  kj::Promise<void> pump_ = nullptr;
  // Last: destroyed first, so no promise given out outlives what it uses.
  kj::Canceler canceler_;
};

}  // namespace tfd
