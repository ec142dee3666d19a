// Refuses to start a binary on a CPU that lacks instructions it was built to
// use (-Dcpu=native or x86-64-v3 run elsewhere), with a message that names
// them, instead of dying of SIGILL somewhere in a kernel, or worse, in the
// middle of a step.
//
// It is linked whole into every executable that links tfd's common library
// (common_dep's link_whole: an archive merely searched would drop an object
// that nothing references), and runs as a constructor of the highest priority, so
// before the binary's other static initializers. The function is compiled for
// the x86-64 baseline whatever -march says: it must not itself execute what
// it checks for.
#if defined(__x86_64__) && defined(__GNUC__)
#include <errno.h>
#include <unistd.h>

#include <cstring>

namespace {

#define TFD_BASELINE __attribute__((target("arch=x86-64")))

TFD_BASELINE void Put(const char* s) {
  size_t left = std::strlen(s);
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, s, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s += n;
    left -= static_cast<size_t>(n);
  }
}

__attribute__((constructor(101), used)) TFD_BASELINE void RefuseCpuWithoutBuiltFeatures() {
  __builtin_cpu_init();
  bool missing = false;
#define TFD_CPU_FEATURE(name)                                                                \
  if (!__builtin_cpu_supports(name)) {                                                       \
    if (!missing) {                                                                          \
      Put(program_invocation_short_name);                                                    \
      Put(": error: FAILED_PRECONDITION: this binary was built for CPU instructions that "   \
          "this machine lacks:");                                                            \
    }                                                                                        \
    missing = true;                                                                          \
    Put(" " name);                                                                           \
  }
#include "common/cpu_feature_list.h"
#undef TFD_CPU_FEATURE
  if (missing) {
    Put(". Build it on this machine (-Dcpu=native), or for all the machines it runs on "
        "(-Dcpu=x86-64-v3, or -Dcpu=portable).\n");
    _exit(1);
  }
}

}  // namespace
#endif
