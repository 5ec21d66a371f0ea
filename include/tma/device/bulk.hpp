// tmakit device/: non-tensor bulk copies (cp.async.bulk) and bulk-group completion.
//
// Bulk copies move a contiguous byte range without a tensor map: both addresses 16-byte aligned,
// the size a non-zero multiple of 16 (checked in debug builds, TMA_DEBUG_CHECKS). Loads complete
// their bytes on an mbarrier like tensor loads; stores (and tensor stores / reduces, copy.hpp)
// belong to the issuing thread's current bulk group: commit_group() closes it, wait_group<N>()
// waits for completion and wait_group_read<N>() only until the shared-memory sources are read.
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "tma/config.hpp"
#include "tma/device/barrier.hpp"
#include "tma/device/debug.hpp"
#include "tma/ptx/prefetch.hpp"

namespace tma {

// Copies `bytes` from global memory to this CTA's shared memory, completing them on `bar`.
//   cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [gmem], bytes, [bar];
//                                                  PTX ISA 8.0, sm_90 (cuda::ptx). One thread.
__device__ __forceinline__ void bulk_load(void* smem, const void* gmem, std::uint32_t bytes,
                                          Barrier& bar) {
  detail::check_shared(smem, 16, "bulk_load: shared-memory destination");
  detail::check_aligned(gmem, 16, "bulk_load: global source");
  detail::check_bulk_size(bytes, "bulk_load: bytes");
  detail::check_shared(&bar, 8, "bulk_load: mbarrier");
  cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, smem, gmem, bytes,
                           &bar.word);
}

// As bulk_load, written to the same offset in every CTA of the cluster in `cta_mask` and completed
// on the barrier at `bar`'s offset in each (see load_multicast).
//   cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
//       [smem], [gmem], bytes, [bar], ctaMask;     PTX ISA 8.0; cuda::ptx: sm_90a. One thread.
__device__ __forceinline__ void bulk_load_multicast(void* smem, const void* gmem,
                                                    std::uint32_t bytes, Barrier& bar,
                                                    std::uint16_t cta_mask) {
  detail::check_shared(smem, 16, "bulk_load_multicast: shared-memory destination");
  detail::check_aligned(gmem, 16, "bulk_load_multicast: global source");
  detail::check_bulk_size(bytes, "bulk_load_multicast: bytes");
  detail::check_shared(&bar, 8, "bulk_load_multicast: mbarrier");
  cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, smem, gmem, bytes,
                           &bar.word, cta_mask);
}

// Copies `bytes` from shared to global memory in the current bulk group. Writers of `smem` run
// fence_proxy_async_shared() and a barrier first.
//   cp.async.bulk.global.shared::cta.bulk_group [gmem], [smem], bytes;
//                                                  PTX ISA 8.0, sm_90 (cuda::ptx). One thread.
__device__ __forceinline__ void bulk_store(void* gmem, const void* smem, std::uint32_t bytes) {
  detail::check_aligned(gmem, 16, "bulk_store: global destination");
  detail::check_shared(smem, 16, "bulk_store: shared-memory source");
  detail::check_bulk_size(bytes, "bulk_store: bytes");
  cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, gmem, smem, bytes);
}

// Prefetches `bytes` of global memory into L2.
//   cp.async.bulk.prefetch.L2.global [gmem], bytes;  PTX ISA 8.0, sm_90 (ptx/ shim). One thread.
__device__ __forceinline__ void bulk_prefetch(const void* gmem, std::uint32_t bytes) {
  detail::check_aligned(gmem, 16, "bulk_prefetch: global source");
  detail::check_bulk_size(bytes, "bulk_prefetch: bytes");
  ptx::bulk_prefetch_l2(gmem, bytes);
}

// Closes this thread's current bulk group (its stores / reduces since the last commit).
//   cp.async.bulk.commit_group;                    PTX ISA 8.0, sm_90 (cuda::ptx).
// The thread that issued them.
__device__ __forceinline__ void commit_group() {
  cuda::ptx::cp_async_bulk_commit_group();
}

// Waits until all but the N most recent committed bulk groups of this thread are complete (their
// writes done and visible). N = 0: all.
//   cp.async.bulk.wait_group N;                    PTX ISA 8.0, sm_90 (cuda::ptx).
// The thread that committed them.
template <int N>
__device__ __forceinline__ void wait_group() {
  static_assert(N >= 0, "wait_group<N>: N is the number of groups left pending, >= 0");
  cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<N>{});
}

// Waits until all but the N most recent committed bulk groups have read their shared-memory
// sources, so those buffers may be written again (the global writes may still be in flight).
//   cp.async.bulk.wait_group.read N;               PTX ISA 8.0, sm_90 (cuda::ptx).
// The thread that committed them.
template <int N>
__device__ __forceinline__ void wait_group_read() {
  static_assert(N >= 0, "wait_group_read<N>: N is the number of groups left pending, >= 0");
  cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<N>{});
}

}  // namespace tma
