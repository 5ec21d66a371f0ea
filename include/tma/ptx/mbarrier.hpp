// tmakit ptx/: the cluster-remote mbarrier arrive.
//
// CCCL has mbarrier.arrive.release.cluster.shared::cluster, but its wrapper takes a generic pointer
// and converts it with cvta.to.shared, which the PTX ISA defines for the executing CTA's own shared
// memory only. A peer CTA's barrier is named here the documented way: mapa.shared::cluster turns
// this CTA's 32-bit shared address into the peer's 32-bit .shared::cluster address.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

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

}  // namespace tma::ptx
