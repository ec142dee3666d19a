// A libFuzzer target run without libFuzzer, so the ordinary build (gcc, no
// sanitizers) exercises every target in CI: each seed of the corpus
// directories given, then random mutations of them for a few seconds. The
// generator's seed is fixed, so a failure repeats run after run. A crash,
// an abort or an escaping exception fails the test (the input is saved as
// fuzz-crash-NAME in the working directory first); a hang meets meson's
// timeout. The clang lane (scripts/fuzz-smoke.sh) is the real fuzzer, with
// coverage guidance and ASan/UBSan; this catches what a change breaks.
//
//   tests/fuzz/npy_fuzz_smoke [--seconds S] CORPUS_DIR...
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;

constexpr size_t kMaxSize = 1 << 16;

// The input being run, for the crash handler.
const Bytes* current = nullptr;
std::string crash_file;

void OnCrash(int signal) {
  if (current != nullptr) {
    const int fd = ::open(crash_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, current->data(), current->size());
      ::close(fd);
    }
    const char note[] = "fuzz smoke: crashed; the input is in fuzz-crash-*\n";
    (void)!::write(STDERR_FILENO, note, sizeof note - 1);
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

Bytes ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Values that sit on the edges parsers get wrong: lengths of 0, -1, 2^31,
// 2^32 - 1 and the like, written over 1, 2, 4 or 8 bytes in either order.
uint64_t Interesting(std::mt19937_64& rng) {
  static const uint64_t values[] = {0,          1,          0x7f,       0x80,
                                    0xff,       0x7fff,     0x8000,     0xffff,
                                    0x7fffffff, 0x80000000, 0xffffffff, 0x7fffffffffffffff,
                                    ~uint64_t{0}};
  return values[rng() % std::size(values)];
}

void Mutate(Bytes& b, const std::vector<Bytes>& seeds, std::mt19937_64& rng) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t at = b.empty() ? 0 : rng() % b.size();
    switch (rng() % 7) {
      case 0:  // flip a bit
        if (!b.empty()) b[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // a random byte
        if (!b.empty()) b[at] = static_cast<uint8_t>(rng());
        break;
      case 2: {  // an edge value over 1-8 bytes, either byte order
        const size_t width = size_t{1} << (rng() % 4);
        const uint64_t v = Interesting(rng);
        const bool big = rng() % 2;
        for (size_t i = 0; i < width && at + i < b.size(); ++i) {
          const size_t shift = 8 * (big ? width - 1 - i : i);
          b[at + i] = static_cast<uint8_t>(shift < 64 ? v >> shift : 0);
        }
        break;
      }
      case 3:  // insert random bytes
        if (b.size() < kMaxSize) {
          const size_t n = 1 + rng() % 16;
          for (size_t i = 0; i < n; ++i) b.insert(b.begin() + at, static_cast<uint8_t>(rng()));
        }
        break;
      case 4:  // delete a range
        if (!b.empty()) b.erase(b.begin() + at, b.begin() + std::min(b.size(), at + 1 + rng() % 16));
        break;
      case 5:  // cut short: a frame or file that claims more than it holds
        b.resize(at);
        break;
      case 6: {  // splice in a piece of another seed
        const Bytes& other = seeds[rng() % seeds.size()];
        if (other.empty() || b.size() >= kMaxSize) break;
        const size_t from = rng() % other.size();
        const size_t n = std::min<size_t>(other.size() - from, 1 + rng() % 64);
        b.insert(b.begin() + at, other.begin() + from, other.begin() + from + n);
        break;
      }
    }
  }
}

void RunOne(const Bytes& input) {
  current = &input;
  LLVMFuzzerTestOneInput(input.data(), input.size());
  current = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  std::vector<Bytes> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
      continue;
    }
    std::error_code error;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(arg, error)) {
      if (entry.is_regular_file()) seeds.push_back(ReadFile(entry.path()));
    }
    if (error) {
      std::fprintf(stderr, "fuzz smoke: cannot read corpus '%s': %s\n", arg.c_str(),
                   error.message().c_str());
      return 2;
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "usage: %s [--seconds S] CORPUS_DIR... (with at least one seed)\n", argv[0]);
    return 2;
  }
  crash_file = "fuzz-crash-" + std::filesystem::path(argv[0]).filename().string();
  for (int s : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) ::signal(s, OnCrash);

  for (const Bytes& seed : seeds) RunOne(seed);
  RunOne({});  // the empty input
  std::mt19937_64 rng(20261125);
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  uint64_t mutated = 0;
  while (std::chrono::steady_clock::now() < end) {
    Bytes input = seeds[rng() % seeds.size()];
    Mutate(input, seeds, rng);
    RunOne(input);
    ++mutated;
  }
  std::printf("%zu seeds, %llu mutated inputs, no crash\n", seeds.size(),
              static_cast<unsigned long long>(mutated));
  return 0;
}
