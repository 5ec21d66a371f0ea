// tmakit device/: thread-block-cluster helpers for multicast copies and cluster-wide barriers.
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "tma/config.hpp"

namespace tma {

// This CTA's rank in its cluster, 0 .. cluster_size() - 1 (the bit it has in a multicast mask).
//   mov.u32 r, %cluster_ctarank;                   PTX ISA 7.8, sm_90 (cuda::ptx). Any thread.
__device__ __forceinline__ std::uint32_t cluster_cta_rank() {
  return cuda::ptx::get_sreg_cluster_ctarank();
}

// Number of CTAs in this cluster (1 when the kernel was launched without clusters).
//   mov.u32 r, %cluster_nctarank;                  PTX ISA 7.8, sm_90 (cuda::ptx). Any thread.
__device__ __forceinline__ std::uint32_t cluster_size() {
  return cuda::ptx::get_sreg_cluster_nctarank();
}

// This CTA's cluster's index along x in the grid (blockIdx.x / cluster_size() in a 1-D grid; the
// block index itself without clusters), read from a register instead of divided out.
//   mov.u32 r, %clusterid.x;                       PTX ISA 7.8, sm_90 (cuda::ptx). Any thread.
__device__ __forceinline__ std::uint32_t cluster_id_x() {
  return cuda::ptx::get_sreg_clusterid_x();
}

// Arrive half of cluster_sync (release: this thread's earlier writes, e.g. mbarrier.init, become
// visible to the cluster).   barrier.cluster.arrive.release;   PTX ISA 8.0, sm_90 (cuda::ptx).
// Every thread of every CTA of the cluster (barrier.cluster counts all non-exited threads).
__device__ __forceinline__ void cluster_arrive() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
}

// Arrive half of a cluster barrier without memory ordering: barrier.cluster.arrive.relaxed;
// PTX ISA 8.0, sm_90 (cuda::ptx). The cheap start of a cluster kernel: the thread that
// initialized the barriers calls fence_barrier_init() (which orders mbarrier.init before this
// arrival), then every thread calls cluster_arrive_relaxed(), does work that touches no barrier
// and no peer CTA (role split, setmaxnreg, index arithmetic), and calls cluster_wait() before its
// first use of a barrier or of a peer's shared memory. Nothing else written before the arrival
// is ordered by it: use cluster_arrive() when other threads must see such writes. (cluster_sync's
// release arrival compiles to MEMBAR.ALL.GPU in every thread.)
__device__ __forceinline__ void cluster_arrive_relaxed() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
}

// Wait half of cluster_sync.  barrier.cluster.wait.acquire;    PTX ISA 8.0, sm_90 (cuda::ptx).
__device__ __forceinline__ void cluster_wait() {
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

// All threads of all CTAs in the cluster meet here. Use it after barrier initialization (so peers
// and multicast copies find initialized barriers) and before exit (so no CTA leaves while a peer's
// copy or remote arrival still targets its shared memory; a Pipeline whose consumers release to
// every CTA that fills their stages may end with Pipeline::producer_drain instead). Every thread
// of the cluster.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// A multicast mask of `count` consecutive ranks starting at `first` (bit r = rank r).
TMA_HOST_DEVICE constexpr std::uint16_t cta_mask_range(std::uint32_t first, std::uint32_t count) {
  return static_cast<std::uint16_t>(((count >= 16 ? 0xFFFFu : ((1u << count) - 1u)) << first) &
                                    0xFFFFu);
}

// The multicast mask of every CTA in a cluster of `size` CTAs (size <= 16).
TMA_HOST_DEVICE constexpr std::uint16_t cta_mask_all(std::uint32_t size) {
  return cta_mask_range(0, size);
}

// A generic pointer to the variable at `local`'s shared-memory offset in CTA `cta_rank` of this
// cluster (distributed shared memory; mapa). Ordinary loads and stores may use it. Any thread.
template <class T>
__device__ __forceinline__ T* peer_shared(T* local, std::uint32_t cta_rank) {
  return static_cast<T*>(__cluster_map_shared_rank(local, cta_rank));
}

}  // namespace tma
