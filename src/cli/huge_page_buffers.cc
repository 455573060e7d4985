// Large buffers on transparent huge pages (decision D45). Linked into the
// `tessera` binary only when it links jemalloc, like jemalloc_conf.cc.
//
// Every operator new of kHugePageBufferMin bytes or more (the S3 data path's
// 8 MiB blobs, frames, parsed requests and O_DIRECT buffers, its 2 MiB read
// pieces and their frames) is served by one jemalloc arena of its own whose
// extents are advised MADV_HUGEPAGE, so the kernel backs them with 2 MiB
// pages where it can. Reason, measured: in the VMs this runs on a 4 KiB page
// fault costs about 15 µs (touching 256 MiB of fresh memory: 1.0 s with
// 4 KiB pages, 0.02 s with huge pages), and a 256 MiB upload faulted ~130k
// pages across the router and nodes, about 2 s of CPU. Smaller allocations
// keep the ordinary arenas on 4 KiB pages: D44 measured what huge pages
// cost them (resident memory, tail latency).
//
// Contract:
//  - Only the size decides the arena; free()/operator delete work for
//    memory of either (jemalloc finds an allocation's arena itself). Code
//    that wants a large aligned buffer (O_DIRECT) asks operator new with
//    an alignment, not aligned_alloc, to get one.
//  - The arena is created by a static initializer, before main; allocations
//    made before it exists (or if creating it failed) come from the
//    ordinary arenas. It decays like every other arena (D31, D57): freed
//    buffers are reused for 10 s, then handed back to the kernel lazily
//    (MADV_FREE) by jemalloc's background thread.
//  - Where the kernel has THP disabled, madvise fails harmlessly and the
//    buffers are ordinary 4 KiB pages.
#include <jemalloc/jemalloc.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;
// The smallest allocation served from the huge-page arena: one huge page.
// Below it stay RocksDB's 1 MiB memtable arena blocks: on huge pages they
// cost the KV path resident memory and tail latency, as in D44.
constexpr size_t kHugePageBufferMin = kHugePageBytes;

extent_hooks_t huge_page_hooks;
extent_alloc_t* default_extent_alloc = nullptr;
// 0 until the arena exists (arena 0 is never this one).
unsigned huge_page_arena = 0;

// jemalloc's own extent allocation, on a 2 MiB boundary and advised for
// huge pages. The default hook does not look at its hooks argument.
void* AllocHugePageExtent(extent_hooks_t* hooks, void* new_addr, size_t size, size_t alignment,
                          bool* zero, bool* commit, unsigned arena_ind) {
  const size_t aligned = alignment < kHugePageBytes ? kHugePageBytes : alignment;
  void* extent = default_extent_alloc(hooks, new_addr, size, aligned, zero, commit, arena_ind);
  if (extent == nullptr && new_addr == nullptr && aligned != alignment) {
    extent = default_extent_alloc(hooks, new_addr, size, alignment, zero, commit, arena_ind);
  }
  if (extent != nullptr) ::madvise(extent, size, MADV_HUGEPAGE);
  return extent;
}

unsigned CreateHugePageArena() {
  extent_hooks_t* defaults = nullptr;
  size_t length = sizeof(defaults);
  if (mallctl("arena.0.extent_hooks", &defaults, &length, nullptr, 0) != 0 ||
      defaults == nullptr || defaults->alloc == nullptr) {
    return 0;
  }
  huge_page_hooks = *defaults;
  default_extent_alloc = defaults->alloc;
  huge_page_hooks.alloc = AllocHugePageExtent;
  extent_hooks_t* hooks = &huge_page_hooks;
  unsigned arena = 0;
  length = sizeof(arena);
  if (mallctl("arenas.create", &arena, &length, &hooks, sizeof(hooks)) != 0) return 0;
  return arena;
}

// Creates the arena during static initialization, before main.
const bool huge_page_arena_created = [] {
  huge_page_arena = CreateHugePageArena();
  return huge_page_arena != 0;
}();

// `alignment` 0 for the default one, else a power of two.
void* AllocateOrNull(size_t bytes, size_t alignment) {
  if (bytes == 0) bytes = 1;
  int flags = alignment == 0 ? 0 : MALLOCX_ALIGN(alignment);
  if (bytes >= kHugePageBufferMin && huge_page_arena != 0) {
    flags |= MALLOCX_ARENA(huge_page_arena) | MALLOCX_TCACHE_NONE;
  }
  return flags == 0 ? malloc(bytes) : mallocx(bytes, flags);
}

void* AllocateOrThrow(size_t bytes, size_t alignment) {
  for (;;) {
    if (void* memory = AllocateOrNull(bytes, alignment)) return memory;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

// The replaceable global allocation functions ([new.delete]): libstdc++'s
// own array and nothrow forms may not reach a replaced single form, so all
// are replaced. Deallocation stays libstdc++'s: free(), which serves memory
// from any jemalloc arena, aligned or not.
void* operator new(size_t bytes) { return AllocateOrThrow(bytes, 0); }
void* operator new[](size_t bytes) { return AllocateOrThrow(bytes, 0); }
void* operator new(size_t bytes, std::align_val_t alignment) {
  return AllocateOrThrow(bytes, static_cast<size_t>(alignment));
}
void* operator new[](size_t bytes, std::align_val_t alignment) {
  return AllocateOrThrow(bytes, static_cast<size_t>(alignment));
}

void* operator new(size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return AllocateOrThrow(bytes, 0);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t bytes, const std::nothrow_t& nothrow) noexcept {
  return ::operator new(bytes, nothrow);
}
void* operator new(size_t bytes, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  try {
    return AllocateOrThrow(bytes, static_cast<size_t>(alignment));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t bytes, std::align_val_t alignment,
                     const std::nothrow_t& nothrow) noexcept {
  return ::operator new(bytes, alignment, nothrow);
}
