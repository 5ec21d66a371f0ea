// tmakit device/: Barrier, an mbarrier in shared memory, and Phase, its parity tracker.
//
// An mbarrier counts pending arrivals and pending transaction bytes (tx-count) of its current
// phase; the phase completes when both reach zero, and the barrier moves to the next phase with the
// arrival count it was initialized with. TMA loads add bytes with complete_tx; a producer announces
// them first with expect_tx (usually fused with its arrival: arrive_expect_tx).
//
// Parity: a freshly initialized barrier is in phase 0. try_wait_parity(p) is true once the phase of
// parity p has completed, that is while the current phase's parity differs from p: right after init
// try_wait_parity(0) is false until phase 0 completes and try_wait_parity(1) is already true (it
// names the "preceding" phase; pipeline producers rely on this for their first pass). A waiter
// therefore waits for parity 0, then 1, then 0 ...: Phase below (or PipelineState) keeps the count.
//
// Limits (PTX ISA, mbarrier): arrival count 1 .. 2^20 - 1; tx-count within +-(2^20 - 1), so at most
// 1 MiB - 1 of expected bytes per phase.
#pragma once

#include <cstdint>
#include <cstdio>

#include <cuda/ptx>

#include "tma/config.hpp"
#include "tma/device/debug.hpp"
#include "tma/ptx/common.hpp"
#include "tma/ptx/cp_async.hpp"
#include "tma/ptx/mbarrier.hpp"

namespace tma {

// The parity a waiter waits for next. Starts at 0; flip() after each completed wait.
struct Phase {
  std::uint32_t parity = 0;
  TMA_HOST_DEVICE constexpr void flip() { parity ^= 1u; }
};

struct Barrier;

namespace detail {

// Prints where a wait gave up and traps (TMA_DEBUG_HANG_BOUND). `stage` is -1 outside a pipeline.
__device__ __noinline__ inline void report_hang(const void* bar, std::uint32_t parity, int stage,
                                                unsigned long long polls) {
  // One line per warp: the lowest lane among those giving up together prints it.
  const unsigned active = __activemask();
  const unsigned leader = static_cast<unsigned>(__ffs(static_cast<int>(active)) - 1);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  if (cuda::ptx::get_sreg_laneid() == leader) {
    printf(
        "tmakit: mbarrier wait gave up after %llu polls (TMA_DEBUG_HANG_BOUND): block (%d,%d,%d) "
        "warp %u (lanes 0x%08x), barrier at shared 0x%x, stage %d, waiting for phase parity %u. "
        "Usual causes: expect_tx bytes differ from what the copies deliver (check the Box / "
        "transaction_bytes), a copy that never issued or faulted, fewer arrivals than the count "
        "given to init, or the wrong parity.\n",
        polls, blockIdx.x, blockIdx.y, blockIdx.z, thread / 32, active, ptx::smem_addr(bar), stage,
        parity);
  }
  __syncwarp(active);  // the line is out before any lane of this warp traps
  cuda::ptx::trap();
}

// mbarrier.try_wait.parity.acquire.{cta,cluster}.shared::cta.b64 (cuda::ptx). One poll.
template <bool kCluster>
__device__ __forceinline__ bool try_wait_parity(std::uint64_t* word, std::uint32_t parity) {
  if constexpr (kCluster) {
    return cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cluster,
                                               word, parity);
  } else {
    return cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cta, word,
                                               parity);
  }
}

// Spins on try_wait until the phase of `parity` completes; with TMA_DEBUG_HANG_BOUND, gives up
// after that many polls and reports `stage`.
#if defined(TMA_DEBUG_HANG_BOUND)
inline constexpr unsigned long long kHangBoundPolls = TMA_DEBUG_HANG_BOUND;
#else
inline constexpr unsigned long long kHangBoundPolls = 0;
#endif

// (kBound is a template parameter so that the bound-0 case does not compile a comparison with 0.)
template <bool kCluster, unsigned long long kBound = kHangBoundPolls>
__device__ __forceinline__ void wait_parity(std::uint64_t* word, std::uint32_t parity, int stage) {
  if constexpr (kBound != 0) {
    unsigned long long polls = 0;
    while (!try_wait_parity<kCluster>(word, parity)) {
      if (++polls >= kBound) report_hang(word, parity, stage, polls);
    }
    return;
  }
  (void)stage;
  while (!try_wait_parity<kCluster>(word, parity)) {
  }
}

}  // namespace detail

// An mbarrier in shared memory (8 bytes, 8-byte aligned). Place it in a __shared__ variable or in
// dynamic shared memory; never copy it. No constructor: __shared__ variables cannot have one.
struct Barrier {
  std::uint64_t word;

  // mbarrier.init.shared::cta.b64 [bar], arrivals;   PTX ISA 7.0, sm_80 (cuda::ptx::mbarrier_init).
  // One thread, before any use; then fence_barrier_init() and __syncthreads() (cluster_sync() when
  // other CTAs or multicast copies touch it). `arrivals`: arrive() calls per phase, 1 .. 2^20 - 1.
  __device__ __forceinline__ void init(std::uint32_t arrivals) {
    detail::check_shared(this, 8, "Barrier address");
    cuda::ptx::mbarrier_init(&word, arrivals);
  }

  // mbarrier.arrive.release.cta.shared::cta.b64 state, [bar];   PTX ISA 8.0, sm_90.
  // One arrival. Any thread; each of the `arrivals` participants calls it once per phase.
  __device__ __forceinline__ void arrive() {
    (void)cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                     cuda::ptx::space_shared, &word);
  }

  // mbarrier.arrive.release.cta.shared::cta.b64 state, [bar], count;   PTX ISA 8.0, sm_90.
  // `count` arrivals at once. Any thread.
  __device__ __forceinline__ void arrive(std::uint32_t count) {
    (void)cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                     cuda::ptx::space_shared, &word, count);
  }

  // cp.async.mbarrier.arrive.noinc.shared::cta.b64 [bar];   PTX ISA 7.0, sm_80.
  // One arrival, made when every cp.async the calling thread issued before has completed; the
  // thread goes on at once. Each of the `arrivals` participants calls it once per phase. Waiters
  // see the copied bytes through the generic proxy; before async-proxy reads of them (wgmma, TMA
  // store) they run fence_proxy_async_shared().
  __device__ __forceinline__ void arrive_on_cp_async() {
    ptx::cp_async_mbarrier_arrive_noinc(ptx::smem_addr(&word));
  }

  // mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 state, [bar], bytes;  PTX ISA 8.0, sm_90.
  // Announces `bytes` of copies completing this phase and arrives once. Usually the one thread
  // that issues the copies, before or after issuing them (both are legal within a phase).
  __device__ __forceinline__ void arrive_expect_tx(std::uint32_t bytes) {
    (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                               cuda::ptx::space_shared, &word, bytes);
  }

  // As above with the byte count of kCount loads of BoxT (box.hpp): the count comes from the type.
  template <class BoxT, int kCount = 1>
  __device__ __forceinline__ void arrive_expect_tx() {
    constexpr std::uint64_t kBytes = std::uint64_t{BoxT::kBytes} * kCount;
    static_assert(kCount >= 1, "expect at least one box");
    static_assert(kBytes < (1u << 20),
                  "an mbarrier phase can expect at most 2^20 - 1 bytes (tx-count range): split the "
                  "copies over more phases or barriers");
    arrive_expect_tx(static_cast<std::uint32_t>(kBytes));
  }

  // mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], bytes;   PTX ISA 8.0, sm_90.
  // Adds `bytes` to the current phase's expected transactions without arriving. One thread.
  __device__ __forceinline__ void expect_tx(std::uint32_t bytes) {
    cuda::ptx::mbarrier_expect_tx(cuda::ptx::sem_relaxed, cuda::ptx::scope_cta,
                                  cuda::ptx::space_shared, &word, bytes);
  }

  // mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [bar], parity;  PTX ISA 8.0, sm_90.
  // One poll: true once the phase of parity `phase` (0 or 1) has completed. The hardware may
  // suspend the thread for a short time before answering false. Any thread.
  __device__ __forceinline__ bool try_wait_parity(std::uint32_t phase) {
    return detail::try_wait_parity<false>(&word, phase);
  }

  // As try_wait_parity with .acquire.cluster: also acquires what other CTAs of the cluster
  // released by arriving on this barrier (arrive_remote). Any thread.
  __device__ __forceinline__ bool try_wait_parity_cluster(std::uint32_t phase) {
    return detail::try_wait_parity<true>(&word, phase);
  }

  // Spins on try_wait_parity(phase) until the phase completes. Any thread (typically all that
  // read the data the phase delivers). Debug builds give up after TMA_DEBUG_HANG_BOUND polls:
  // they print block, warp, barrier address and phase, and trap.
  __device__ __forceinline__ void wait(std::uint32_t phase) {
    detail::wait_parity<false>(&word, phase, -1);
  }

  // wait() with .acquire.cluster (see try_wait_parity_cluster).
  __device__ __forceinline__ void wait_cluster(std::uint32_t phase) {
    detail::wait_parity<true>(&word, phase, -1);
  }

  // Waits for the phase `phase` names, then flips it to the next one. Any thread.
  __device__ __forceinline__ void wait_next(Phase& phase) {
    wait(phase.parity);
    phase.flip();
  }

  // mapa.shared::cluster.u32 r, [bar], cta_rank;
  // mbarrier.arrive.release.cluster.shared::cluster.b64 _, [r];   PTX ISA 8.0, sm_90.
  // One arrival on this same barrier (same shared-memory offset) in CTA `cta_rank` of the cluster,
  // this CTA included. Any thread. The peer must have initialized it (fence_barrier_init +
  // cluster_sync) and must not exit before the arrival lands (cluster_sync before exit).
  __device__ __forceinline__ void arrive_remote(std::uint32_t cta_rank) {
    ptx::mbarrier_arrive_cluster(ptx::mapa_shared_cluster(ptx::smem_addr(&word), cta_rank));
  }

  // mapa.shared::cluster.u32 r, [bar], cta_rank;
  // mbarrier.arrive.release.cta.shared::cluster.b64 _, [r];   PTX ISA 8.0, sm_90.
  // arrive_remote for a caller that only READ the data the barrier guards (a consumer handing a
  // buffer back to the CTAs that refill it): release at CTA scope, no fence. arrive_remote's
  // cluster-scope release compiles to MEMBAR.ALL.CTA + MEMBAR.ALL.GPU before every arrival, which
  // a GEMM's per-k-block release cannot afford. Not for publishing writes to a peer: use
  // arrive_remote. Any thread; same conditions as arrive_remote.
  __device__ __forceinline__ void arrive_remote_after_reads(std::uint32_t cta_rank) {
    ptx::mbarrier_arrive_cluster_cta_release(
        ptx::mapa_shared_cluster(ptx::smem_addr(&word), cta_rank));
  }
};

static_assert(sizeof(Barrier) == 8 && alignof(Barrier) == 8,
              "Barrier is exactly one 8-byte mbarrier word");

}  // namespace tma
