// The heap policy of a process that runs steps: freed heap memory stays for
// the next step instead of going back to the kernel after each one.
//
// glibc starts out returning the top of its heap once more than 128 KiB there
// is free, and serving blocks of 128 KiB and more with fresh mmaps; it raises
// both limits only after a large mmapped block is freed. tfd's tensors of
// 64 KiB and more never come from malloc (common/buffer_pool.h), so a task
// rarely frees such a block, and the limits stay where they started. Eigen's
// packing buffers for a MatMul (a few hundred KiB, taken and freed in every
// product) then sat at the top of the heap, went back to the kernel after
// every step and were faulted in again on the next: 22 minor faults per step
// of the classic model on a worker (bench/NOTES.md, "A worker faulted its
// heap in again on every step").
//
// KeepHeapForSteps() starts the process at the limits glibc's own adjustment
// ends at: blocks up to 32 MiB from the heap, and the heap's top trimmed only
// beyond 64 MiB free. Memory a step freed is reused by the next one; what a
// process keeps is bounded by its peak use, as before. A limit the user set in
// GLIBC_TUNABLES (glibc.malloc.trim_threshold, glibc.malloc.mmap_threshold)
// is left as the user set it.
//
// Call it once, early in main, before threads start. Under another allocator
// (LD_PRELOAD of jemalloc or mimalloc) it changes nothing that is used.
#pragma once

#include <cstddef>
#include <string_view>

namespace tfd {

void KeepHeapForSteps();

// Faults in `bytes` at the top of the heap in one call and leaves them there,
// free, so that the allocations of start-up (the op registry's definitions,
// about half a MiB) land in pages already in memory instead of faulting them
// in one at a time: a fault costs 10-15 us on a virtual machine, and 130 of
// them were a fourteenth of a task's start (bench/NOTES.md, "spdlog, fmt and
// libstdc++ linked in"). Call it after KeepHeapForSteps, whose trim limit
// keeps the pages. Returns false, having changed nothing, where the kernel
// cannot populate (before Linux 5.14) or the heap has no room.
bool FaultInHeap(size_t bytes);

// Whether `glibc_tunables` (the value of GLIBC_TUNABLES) sets either limit.
bool TunablesSetHeapLimits(std::string_view glibc_tunables);

}  // namespace tfd
