// libFuzzer target: any bytes as a checkpoint file. Opening it and reading
// every tensor its index lists must end in tensors or an error status —
// never a crash, a hang, a leak, or an allocation the file does not back
// (an index entry may claim a shape of gigabytes).
//
//   ./build-fuzz/tests/fuzz/checkpoint_fuzz -max_total_time=60 tests/fuzz/corpus/checkpoint_fuzz
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/tensor_bundle/checkpoint_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path: an anonymous in-memory file has one.
  const int fd = memfd_create("checkpoint_fuzz", MFD_CLOEXEC);
  if (fd < 0) abort();
  for (size_t written = 0; written < size;) {
    const ssize_t n = write(fd, data + written, size - written);
    if (n <= 0) abort();
    written += static_cast<size_t>(n);
  }
  auto reader = tfd::kernels::CheckpointReader::Open("/proc/self/fd/" + std::to_string(fd));
  if (reader.ok()) {
    for (const tfd::kernels::CheckpointEntry& entry : (*reader)->entries()) {
      (void)(*reader)->ReadTensor(entry);
    }
  }
  close(fd);
  return 0;
}
