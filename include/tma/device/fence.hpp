// tmakit device/: the proxy and initialization fences that TMA code needs.
//
// TMA reads and writes memory through the "async proxy"; ordinary loads and stores use the
// "generic proxy". A barrier (__syncthreads, mbarrier) orders memory only within one proxy, so data
// crossing between them needs a proxy fence first (PTX ISA, "Proxies" and "membar/fence").
#pragma once

#include <cuda/ptx>

#include "tma/config.hpp"

namespace tma {

// fence.proxy.async.shared::cta;            PTX ISA 8.0, sm_90 (cuda::ptx::fence_proxy_async).
// Makes this thread's earlier generic-proxy writes to shared memory visible to the async proxy.
// Every thread that wrote the buffer calls it, then a barrier (__syncthreads), then one thread
// issues the TMA store / reduce that reads the buffer.
__device__ __forceinline__ void fence_proxy_async_shared() {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
}

// fence.proxy.async.global;                 PTX ISA 8.0, sm_90.
// As above for global memory: a TMA load in the same kernel reads data that this thread wrote with
// ordinary stores (then a grid-wide or stream-order synchronization, as the data flow needs).
__device__ __forceinline__ void fence_proxy_async_global() {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
}

// fence.proxy.async;                        PTX ISA 8.0, sm_90. All state spaces.
__device__ __forceinline__ void fence_proxy_async() {
  cuda::ptx::fence_proxy_async();
}

// fence.mbarrier_init.release.cluster;      PTX ISA 8.0, sm_90.
// The thread that ran Barrier::init calls it so the initialization is visible to the async proxy
// (TMA's complete_tx) and to the other CTAs of the cluster; then __syncthreads() (cluster launch:
// cluster_sync()) before any thread or copy uses the barrier.
__device__ __forceinline__ void fence_barrier_init() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}

}  // namespace tma
