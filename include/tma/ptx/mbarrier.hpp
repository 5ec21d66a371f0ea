// tmakit ptx/: the cluster-remote mbarrier arrive, and st.async (a 4-byte store into a peer CTA's
// shared memory that completes on the peer's mbarrier).
//
// CCCL has mbarrier.arrive.release.cluster.shared::cluster, but its wrapper takes a generic pointer
// and converts it with cvta.to.shared, which the PTX ISA defines for the executing CTA's own shared
// memory only. A peer CTA's barrier is named here the documented way: mapa.shared::cluster turns
// this CTA's 32-bit shared address into the peer's 32-bit .shared::cluster address.
#pragma once

#include <cstdint>

namespace tma::ptx {

// mapa.shared::cluster.u32 remote, local, rank;   PTX ISA 7.8, sm_90. Any thread.
// The .shared::cluster address of the variable at shared address `local` in CTA `cta_rank` of the
// cluster (every CTA of a kernel has the same shared-memory layout).
__device__ __forceinline__ std::uint32_t mapa_shared_cluster(std::uint32_t local,
                                                             std::uint32_t cta_rank) {
  std::uint32_t remote;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(cta_rank));
  return remote;
}

// mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];   PTX ISA 8.0, sm_90.
// One arrival on an mbarrier that may live in another CTA of the cluster. Any thread.
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote_bar)
               : "memory");
}

// mbarrier.arrive.release.cta.shared::cluster.b64 _, [remote];   PTX ISA 8.0, sm_90.
// As mbarrier_arrive_cluster, with release at CTA scope: it orders this thread's earlier accesses
// as seen from its own CTA only, and costs no fence. The .cluster form compiles to MEMBAR.ALL.CTA +
// MEMBAR.ALL.GPU before the arrival (sm_90a SASS, nvcc 13.0), a GPU-wide fence per call. Enough
// for handing back a buffer the caller only read (a consumer's release in a multicast pipeline),
// not for publishing data the caller wrote for a peer. Any thread.
__device__ __forceinline__ void mbarrier_arrive_cluster_cta_release(std::uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];" ::"r"(remote_bar)
               : "memory");
}

// mbarrier.arrive.expect_tx.release.cta.shared::cluster.b64 _, [remote], bytes;   PTX ISA 8.0,
// sm_90. One arrival on an mbarrier that may live in another CTA of the cluster, announcing `bytes`
// of asynchronous transactions (st_async_cluster, bulk copies) that complete its phase. Release at
// CTA scope: the data reaches the peer through those transactions, not through this arrival.
__device__ __forceinline__ void mbarrier_arrive_expect_tx_cluster(std::uint32_t remote_bar,
                                                                  std::uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.release.cta.shared::cluster.b64 _, [%0], %1;" ::"r"(remote_bar),
      "r"(bytes)
      : "memory");
}

// st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [remote], value, [remote_bar];
// PTX ISA 8.1, sm_90. Stores 4 bytes at `remote` (a .shared::cluster address, mapa_shared_cluster)
// and completes 4 bytes of transactions on the mbarrier `remote_bar` of the same CTA: a waiter on
// that barrier's phase reads the value after its wait. The barrier's phase must expect them
// (mbarrier_arrive_expect_tx_cluster). Any thread.
__device__ __forceinline__ void st_async_cluster(std::uint32_t remote, std::uint32_t value,
                                                 std::uint32_t remote_bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote),
      "r"(value), "r"(remote_bar)
      : "memory");
}

}  // namespace tma::ptx
