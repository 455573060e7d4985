// jemalloc options compiled into the `tessera` binary (decision D31); linked
// only when the binary links jemalloc. MALLOC_CONF in the environment still
// overrides them.
//
//  * oversize_threshold:0 — jemalloc serves requests of 8 MiB and more from
//    a dedicated arena that returns freed pages to the kernel at once. The
//    S3 data path allocates its 8 MiB blobs and buffers exactly there, so
//    every blob cost an madvise on free and a page fault per 4 KiB on the
//    next allocation (22% of the router's CPU during a 256 MiB upload).
//    Disabled, such buffers are reused from arenas whose freed pages age
//    out after jemalloc's decay time (10 s): since D45 the huge-page arena
//    of huge_page_buffers.cc for every buffer of 2 MiB and more.
//  * background_thread:true — that aging (purging) runs on jemalloc's own
//    thread, not inside an io thread's free().
//  * muzzy_decay_ms:-1 — aged pages are handed back lazily and only lazily
//    (D57): the background thread advises them MADV_FREE and never
//    MADV_DONTNEED. The kernel takes such pages whenever it needs memory
//    (they are clean to it: no swap, no write-back); until then the next
//    allocation reuses them without a fault or zeroing a (huge) page. With
//    jemalloc's default the same pages were dropped for good another 10 s
//    later, and the first upload after a pause faulted every page of its
//    buffers back in. What a process holds this way never exceeds its peak
//    of memory in use, which the data path's limits bound.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's (see `man jemalloc`).
const char* malloc_conf = "oversize_threshold:0,background_thread:true,muzzy_decay_ms:-1";
}
