// tmakit device/: Pipeline, a ring of kStages shared-memory stages between TMA producers and
// consumers, with one full and one empty mbarrier per stage.
//
//   producer (one elected thread)              consumers (warps or threads)
//   ---------------------------------          ---------------------------------
//   producer_acquire(s)   waits empty[i]       consumer_wait(s)      waits full[i]
//   producer_commit(s, bytes)                   ... read stage i ...
//     = full[i].arrive_expect_tx(bytes)        consumer_release(s)   arrives on empty[i]
//   load(..., full(s), ...)  TMA completes
//     the bytes on full[i]
//   s.advance()                                s.advance()
//   ... after the last fill:
//   producer_drain(s)     waits until every
//     stage's last fill is released
//
// Multicast: when CTA A's multicast copies land in CTA B's stage i, A must not refill stage i until
// B's consumers are done with it, so B's consumers release to A as well: consumer_release(s, mask)
// arrives on empty[i] of every CTA in `mask` (the CTAs whose copies land in this CTA's buffer,
// itself included if its own producer fills it), or the releasing threads split the destinations
// among themselves (consumer_release_to: one arrival on one CTA's barrier each). Each empty barrier
// then expects
//   consumer_arrivals = (releasing threads per CTA) x (CTAs that release into it),
// and each CTA's producer commits the total bytes that land in its own stage, from every CTA.
//
// All phase arithmetic lives in PipelineState (pipeline_state.hpp); kernels only call advance().
#pragma once

#include <cstdint>

#include "tma/config.hpp"
#include "tma/device/barrier.hpp"
#include "tma/device/debug.hpp"
#include "tma/device/fence.hpp"
#include "tma/device/pipeline_state.hpp"

namespace tma {

template <int kStages>
class Pipeline {
 public:
  static_assert(kStages >= 1, "a pipeline has at least one stage");

  Barrier full_bar[kStages];   // (kStages): completed by the producer's arrival + the TMA bytes
  Barrier empty_bar[kStages];  // (kStages): completed by the consumers' releases

  // The state both roles start from: stage 0, phase 0.
  TMA_HOST_DEVICE static constexpr PipelineState start() { return PipelineState::start(kStages); }

  // One thread, before any other use. full_bar[i] expects `producer_arrivals` arrivals per phase
  // (usually 1: the committing thread), empty_bar[i] `consumer_arrivals` (see the multicast note
  // above). Issues fence_barrier_init(); the caller then runs __syncthreads() (cluster launch:
  // cluster_sync(), or cluster_arrive_relaxed() in every thread and cluster_wait() before each
  // thread's first use: cluster.hpp) before any thread, copy or peer CTA touches the pipeline.
  __device__ __forceinline__ void init(std::uint32_t producer_arrivals,
                                       std::uint32_t consumer_arrivals) {
#pragma unroll
    for (int i = 0; i < kStages; ++i) {
      full_bar[i].init(producer_arrivals);
      empty_bar[i].init(consumer_arrivals);
    }
    fence_barrier_init();
  }

  // Producer: waits until the consumers released stage s.index (at once on the first pass).
  // Acquires at cluster scope, so releases from peer CTAs are ordered before the next copy.
  // The producer thread (or every thread of a producer warp).
  __device__ __forceinline__ void producer_acquire(PipelineState s) {
    check(s);
    detail::wait_parity<true>(&empty_bar[s.index].word, s.phase ^ 1u, static_cast<int>(s.index));
  }

  // Producer: one poll of producer_acquire; true when the stage is free.
  __device__ __forceinline__ bool producer_try_acquire(PipelineState s) {
    check(s);
    return empty_bar[s.index].try_wait_parity_cluster(s.phase ^ 1u);
  }

  // The barrier the copies of stage s.index complete on (pass it to load / load_multicast).
  __device__ __forceinline__ Barrier& full(PipelineState s) {
    return full_bar[s.index];
  }

  // Producer: announces the `bytes` that land in this CTA's stage s.index and arrives once
  // (full_bar.arrive_expect_tx). One thread per producer arrival; before or after the copies.
  __device__ __forceinline__ void producer_commit(PipelineState s, std::uint32_t bytes) {
    check(s);
    full_bar[s.index].arrive_expect_tx(bytes);
  }

  // As above with the bytes of kCount boxes of BoxT (box.hpp).
  template <class BoxT, int kCount = 1>
  __device__ __forceinline__ void producer_commit(PipelineState s) {
    check(s);
    full_bar[s.index].template arrive_expect_tx<BoxT, kCount>();
  }

  // Producer, after its last producer_commit: waits until every stage's last fill has been
  // released by all consumer_arrivals consumers (one producer_acquire per stage from s, the state
  // after the last fill; stages never filled pass at once). The producer thread (or every thread
  // of a producer warp).
  //
  // What it guarantees: no consumer release (consumer_release, local or from a peer CTA through
  // the mask form) still targets this CTA's empty barriers, and, because the consumers of every
  // CTA a copy lands in release to the CTA that issued it, every copy this producer issued
  // (multicast ones included) has landed and been read. A cluster kernel whose producers end with
  // producer_drain and whose consumers waited for every fill of their own stages (consumer_wait)
  // may therefore exit without a final cluster_sync(): no CTA leaves while a peer's copy or
  // release still targets its shared memory. (tmakit's GEMM: a CTA leaves ~140 cycles after its
  // consumers instead of 1,200-1,800 behind a final cluster barrier.)
  __device__ __forceinline__ void producer_drain(PipelineState s) {
#pragma unroll 1
    for (int i = 0; i < kStages; ++i) {
      producer_acquire(s);
      s.advance();
    }
  }

  // Consumer: waits until stage s.index holds the data of this pass. Every consumer thread that
  // reads the stage.
  __device__ __forceinline__ void consumer_wait(PipelineState s) {
    check(s);
    detail::wait_parity<false>(&full_bar[s.index].word, s.phase, static_cast<int>(s.index));
  }

  // Consumer: one poll of consumer_wait; true when the data is there.
  __device__ __forceinline__ bool consumer_try_wait(PipelineState s) {
    check(s);
    return full_bar[s.index].try_wait_parity(s.phase);
  }

  // Consumer: done reading stage s.index in this CTA; one arrival on this CTA's empty_bar. Each of
  // the consumer_arrivals participants calls it once per pass (one elected thread per warp, or
  // every thread, as init counted them).
  __device__ __forceinline__ void consumer_release(PipelineState s) {
    check(s);
    empty_bar[s.index].arrive();
  }

  // Consumer, cluster-aware: one arrival on empty_bar[s.index] of CTA rank `cta_rank` only (this
  // CTA's own rank included). For consumers that split the destinations among themselves, e.g.
  // one lane per destination CTA, instead of each looping over a mask (below).
  __device__ __forceinline__ void consumer_release_to(PipelineState s, std::uint32_t cta_rank) {
    check(s);
    empty_bar[s.index].arrive_remote_after_reads(cta_rank);
  }

  // Consumer, cluster-aware: one arrival on empty_bar[s.index] of every CTA rank in `cta_mask`
  // (bit r = cluster rank r; include this CTA's own bit when its producer fills the stage).
  __device__ __forceinline__ void consumer_release(PipelineState s, std::uint16_t cta_mask) {
    check(s);
    for (std::uint32_t m = cta_mask; m != 0; m &= m - 1) {
      // The consumers only read the stage: a CTA-scope release suffices (see
      // Barrier::arrive_remote_after_reads) and avoids a GPU-wide fence per arrival.
      empty_bar[s.index].arrive_remote_after_reads(
          static_cast<std::uint32_t>(__ffs(static_cast<int>(m)) - 1));
    }
  }

 private:
  // Debug check: the state belongs to a ring of this length (a default-constructed PipelineState
  // has stages == 0 and would run off the end of the barrier arrays).
  __device__ __forceinline__ static void check(PipelineState s) {
#if TMA_DEBUG_CHECKS
    if (s.stages != static_cast<std::uint32_t>(kStages) || s.index >= s.stages) {
      detail::device_fail("PipelineState.stages", s.stages,
                          "does not match Pipeline<kStages> (or index >= stages): start from "
                          "Pipeline<kStages>::start()");
    }
#else
    (void)s;
#endif
  }
};

}  // namespace tma
