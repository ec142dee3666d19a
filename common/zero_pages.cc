#include "common/zero_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>
#include <utility>
#include <vector>

namespace tfd {
namespace {

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

ZeroPages::ZeroPages(size_t bytes) {
  if (bytes == 0) return;
  const size_t page = PageSize();
  const size_t size = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                 -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = p;
  size_ = size;
}

ZeroPages::~ZeroPages() {
  if (data_ != nullptr) munmap(data_, size_);
}

ZeroPages::ZeroPages(ZeroPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

ZeroPages& ZeroPages::operator=(ZeroPages&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

size_t ZeroPages::resident_bytes() const {
  if (data_ == nullptr) return 0;
  const size_t page = PageSize();
  std::vector<unsigned char> in_core(size_ / page);
  if (mincore(data_, size_, in_core.data()) != 0) return 0;
  size_t pages = 0;
  for (unsigned char c : in_core) pages += c & 1;
  return pages * page;
}

}  // namespace tfd
