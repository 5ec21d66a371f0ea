// gemm_trace: an experiment, not a benchmark of record. Where does a GEMM tile's time go outside
// its k-loop? Links a copy of the GEMM built with TMA_GEMM_TRACE=1 (tmakit_ops_trace), whose
// kernel stamps clock64 at fixed points of every unit (gemm_kernel.cuh: trace), runs one
// data-parallel product and prints, averaged over every CTA's steady-state units (the first and
// last of each CTA left out), in SM cycles:
//   consumer warpgroups: turn wait (ping-pong order barrier), first-stage wait, k-loop (issue of
//   the last wgmma), drain (its completion), finish (handoff + epilogue), and the period between
//   two units' starts;
//   producer: wait for its unit's first free stage, and its lead (first stage loaded ... used);
//   inside the epilogue: chunk 0's steps (its wait split into entry, the leader's
//   wait_group_read and the barrier), chunk 1, the rest; how far warpgroup 1 trails warpgroup 0;
//   whole kernel: units per CTA, each consumer warpgroup's first unit and its span (first unit's
//   start .. last unit's end), mean and max over the CTAs (max / mean: the cost of the last
//   partial wave); each CTA's lifetime (entry, barrier setup, the consumers' first unit, the
//   tail after the last unit, the exit) and, by %globaltimer, how the CTAs' entries and exits
//   spread against the launch's event time.
//   gemm_trace [config=0] [k=2048] [m=8192] [n=8192] [stream_k=1] [cluster=2] [max_ctas=0: all]
//              [cold=0: operands in L2; 1: the L2 flushed before each run by writing a 3x-L2
//              buffer (its dirty lines are written back as the GEMM's operands come in); 2: by
//              reading one (clean lines, as after tma-bench's rotation of read-mostly buffers)]
//              [pdl=1: launched with programmatic dependent launch (GemmTuning::pdl); 0: without]
//              [evict=0; 1: before each run, after the flush, two small products on the ordinary
//              path (other kernels, ~100 KiB of code each) replace the SMs' instruction caches,
//              as the peers' kernels between two of ours do in tma-bench; evict given (0 or 1),
//              each run is queued behind a ~0.5 ms spin kernel, so the host's enqueueing is not
//              timed]
//              [peer=0; 1: time cuBLAS's product of the same shape (cublasGemmEx, bf16, fp32
//              compute, the same operands and layout) instead of ours, with the same flush and
//              evict steps, so that both pay the same cold start; only the events are printed]
//   (max_ctas: GemmTuning::max_ctas, e.g. to see whether a k-loop speeds up with fewer SMs loading)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "experiment.cuh"
#include "gemm_config.hpp"  // src/ops: trace_slot, kTraceUnits, kTracePoints
#include "tma/ops/gemm.hpp"

// cold = 2's flush: reads every 16 bytes of the buffer (a sum the compiler cannot drop).
__global__ void read_all(const uint4* p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 v = p[i];
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}

// evict given: one thread spins for `cycles` first, so that the GPU, not the host's
// enqueueing (the ordinary-path products' and our launch's host work), paces what follows. (Not
// tma-bench's launch_spin: tma_bench_core links the library's own GEMM, which would clash with
// the traced copy this program links.)
__global__ void spin(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

namespace tma::ops::detail::gemm {
void set_trace(unsigned long long* buffer);  // gemm.cu, TMA_GEMM_TRACE builds only
}

namespace {

struct Mean {
  double sum = 0;
  long count = 0;
  void add(double x) { sum += x, ++count; }
  double get() const { return count > 0 ? sum / count : 0.0; }
};

}  // namespace

int main(int argc, char** argv) {
  namespace d = tma::ops::detail::gemm;
  const int config = argc > 1 ? std::atoi(argv[1]) : 0;
  const std::int64_t k = argc > 2 ? std::atoll(argv[2]) : 2048;
  const std::int64_t m = argc > 3 ? std::atoll(argv[3]) : 8192;
  const std::int64_t n = argc > 4 ? std::atoll(argv[4]) : 8192;
  // GemmTuning::stream_k: 1 data-parallel (default), 2 split the last waves, 0 the heuristic's.
  const int split = argc > 5 ? std::atoi(argv[5]) : 1;
  const int cluster = argc > 6 ? std::atoi(argv[6]) : 2;
  const int max_ctas = argc > 7 ? std::atoi(argv[7]) : 0;
  // cold = 1: a 3x-L2 buffer is written before each run, so A and B come from DRAM (tma-bench's
  // regime), and the L2 holds dirty lines; 2: the same buffer read instead (clean lines); 0:
  // back-to-back runs on the same buffers (operands in L2).
  const int cold = argc > 8 ? std::atoi(argv[8]) : 0;
  // pdl = 0: launched without programmatic dependent launch (GemmTuning::pdl = false).
  const int pdl = argc > 9 ? std::atoi(argv[9]) : 1;
  const int evict = argc > 10 ? std::atoi(argv[10]) : 0;
  const bool queued = argc > 10;  // evict given (0 or 1): every run behind the spin kernel
  const int peer = argc > 11 ? std::atoi(argv[11]) : 0;
  if (config < 0 || config >= tma::ops::kNumGemmConfigs || k < 1 || m < 1 || n < 1 ||
      (cluster != 1 && cluster != 2 && cluster != 4) || max_ctas < 0 || cold < 0 || cold > 2 ||
      evict < 0 || evict > 1 || peer < 0 || peer > 1) {
    std::fprintf(stderr,
                 "usage: gemm_trace [config 0..%d] [k] [m] [n] [stream_k 0..2] [cluster 1|2|4] "
                 "[max_ctas >= 0] [cold 0|1|2] [pdl 1|0] [evict 0|1] [peer 0|1]\n",
                 tma::ops::kNumGemmConfigs - 1);
    return 2;
  }
  const experiment::Operands ops = experiment::make_operands(m, n, k, 2);
  const int sms = experiment::device_attribute(cudaDevAttrMultiProcessorCount, "SM count");
  const std::int64_t slots = d::trace_slot(sms, 0, 0, 0);
  unsigned long long* trace = nullptr;
  experiment::check(cudaMalloc(&trace, slots * sizeof(unsigned long long)), "malloc trace");
  experiment::check(cudaMemset(trace, 0, slots * sizeof(unsigned long long)), "memset trace");
  d::set_trace(trace);

  const tma::ops::GemmArgs g = experiment::rc_args(ops, m, n, k);
  tma::ops::GemmTuning t;
  t.config = config, t.cluster_m = cluster, t.stream_k = split, t.max_ctas = max_ctas;
  t.pdl = pdl != 0;
  tma::ops::GemmPlan plan{};
  cudaEvent_t e0, e1;
  experiment::check(cudaEventCreate(&e0), "event");
  experiment::check(cudaEventCreate(&e1), "event");
  float ms = 0;
  int l2_bytes = 0;
  experiment::check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0), "L2 size");
  void* flush = nullptr;
  const std::size_t flush_bytes = 3 * static_cast<std::size_t>(l2_bytes);
  if (cold != 0) experiment::check(cudaMalloc(&flush, flush_bytes), "malloc flush");
  if (cold == 2) experiment::check(cudaMemset(flush, 1, flush_bytes), "fill flush buffer");
  cublasHandle_t blas = nullptr;
  if (peer != 0 && cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gemm_trace: cublasCreate failed\n");
    return 1;
  }
  // D (m x n row-major) = A (m x k row-major) B (B stored n x k): in cuBLAS's column-major terms
  // D^T (n x m) = B^T (n x k, the buffer as k x n with ld k, transposed) A^T (k x m, ld k).
  const auto run_peer = [&] {
    const float one = 1.0f, zero = 0.0f;
    if (cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                     static_cast<int>(k), &one, ops.b, CUDA_R_16BF, static_cast<int>(k), ops.a,
                     CUDA_R_16BF, static_cast<int>(k), &zero, ops.d, CUDA_R_16BF,
                     static_cast<int>(n), CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "gemm_trace: cublasGemmEx failed\n");
      std::exit(1);
    }
  };
  if (peer != 0) run_peer();  // its first call (handle setup, kernel load) outside the runs
  // evict: 256 x 256 x 256 on the operands' first rows (correct or not, D is overwritten after).
  const tma::ops::GemmArgs small = experiment::rc_args(ops, 256, 256, 256);
  unsigned* sink = nullptr;
  experiment::check(cudaMalloc(&sink, sizeof(unsigned)), "malloc sink");
  for (int r = 0; r < 5; ++r) {  // the last run's stamps are kept
    if (queued) {
      spin<<<1, 1>>>(1000000);  // ~0.5 ms: the host queues the rest meanwhile
      experiment::check(cudaGetLastError(), "spin");
    }
    if (cold == 1) experiment::check(cudaMemset(flush, r + 1, flush_bytes), "flush L2");
    if (cold == 2) {
      read_all<<<1056, 256>>>(static_cast<const uint4*>(flush), flush_bytes / sizeof(uint4), sink);
      experiment::check(cudaGetLastError(), "flush L2 (read)");
    }
    if (evict != 0) {
      for (const int c : {0, 1}) {
        tma::ops::GemmTuning o;
        o.config = c;
        tma::ops::gemm_tuned(small, nullptr, tma::ops::Path::kOrdinary, o);
      }
      experiment::check(cudaGetLastError(), "evict (ordinary path)");
    }
    // Cleared before every run: the exit stamps are maxima (atomicMax) of per-SM clocks.
    experiment::check(cudaMemset(trace, 0, slots * sizeof(unsigned long long)), "memset trace");
    experiment::check(cudaEventRecord(e0), "record");
    if (peer != 0) {
      run_peer();
    } else {
      tma::ops::gemm_tuned(g, nullptr, tma::ops::Path::kTma, t, &plan);
    }
    experiment::check(cudaEventRecord(e1), "record");
    experiment::check(cudaEventSynchronize(e1), "sync");
    experiment::check(cudaGetLastError(), "gemm");
  }
  experiment::check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
  if (peer != 0) {
    std::printf(
        "gemm_trace: %lld x %lld x %lld, cuBLAS (cublasGemmEx) %s: events around the "
        "launch %.2f us\n",
        static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
        evict != 0 ? "after two ordinary-path products" : "after the flush only", ms * 1000.0);
    return 0;
  }
  std::vector<unsigned long long> h(slots);
  experiment::check(
      cudaMemcpy(h.data(), trace, slots * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
      "copy trace");
  const auto at = [&](int cta, int role, int unit, int point) {
    return static_cast<double>(h[d::trace_slot(cta, role, unit, point)]);
  };
  const auto units_of = [&](int cta, int role) {
    int u = 0;
    while (u < d::kTraceUnits && h[d::trace_slot(cta, role, u, 0)] != 0)
      ++u;
    return u;
  };

  Mean turn, first, loop, drain, finish, period, p_wait, lead, span;
  // Inside the epilogue (the unit's last half; points 6..10 of gemm_epilogue.cuh): chunk 0's
  // wait for a free buffer, its writes, fence + barrier, store issue; chunk 1 until chunk 2's
  // buffer is free; the rest.
  Mean e_wait0, e_write0, e_fence0, e_store0, e_to2, e_rest;
  // Whole-kernel view: each consumer warpgroup's first unit (its first-stage wait and k-loop) and
  // its span (first unit's start .. last unit's end); units per CTA.
  Mean first0, loop0, c_span, e_entry, e_wgr, e_bar, lag_issue, lag_start;
  double c_span_max = 0;
  int units_min = 1 << 30, units_max = 0;
  // Every unit (first and last included) by kind (point 13: (kind << 24) | k-blocks): its
  // first-stage wait, k-loop issue per k-block, drain and finish (handoff + epilogue).
  Mean k_first[3], k_per_kb[3], k_drain[3], k_finish[3];
  // The stream-K handoff (points 14..17): a partial unit's stores (issue), then the warpgroup's
  // barrier (+ fence and flag on the ordinary path; TMA path: its arrive for the flag warp, and
  // the flag warp's publication, role 0's point 14 + half, after that arrive);
  // a finish unit's wait for its first peer's flag, the peers' reads and adds, its epilogue.
  Mean h_store, h_flag, h_pub, h_wait, h_add, h_epi;
  long k_blocks_of[3] = {0, 0, 0};
  for (int cta = 0; cta < plan.ctas; ++cta) {
    for (int role = 1; role <= 2; ++role) {
      int last = -1;
      for (int u = 0; u < d::kTraceUnits; ++u) {
        if (h[d::trace_slot(cta, role, u, 0)] == 0) continue;
        last = u;
        const unsigned long long tag = h[d::trace_slot(cta, role, u, 13)];
        const int kind = static_cast<int>(tag >> 24), kb = static_cast<int>(tag & 0xFFFFFF);
        if (kind > 2 || kb == 0) continue;
        k_first[kind].add(at(cta, role, u, 2) - at(cta, role, u, 1));
        k_per_kb[kind].add((at(cta, role, u, 3) - at(cta, role, u, 2)) / kb);
        k_drain[kind].add(at(cta, role, u, 4) - at(cta, role, u, 3));
        k_finish[kind].add(at(cta, role, u, 5) - at(cta, role, u, 4));
        k_blocks_of[kind] += kb;
        if (kind == 1 && at(cta, role, u, 15) != 0) {
          h_store.add(at(cta, role, u, 14) - at(cta, role, u, 4));
          h_flag.add(at(cta, role, u, 15) - at(cta, role, u, 14));
          const int half = role - 1;  // cooperative: warpgroup w holds half w
          if (!tma::ops::kGemmConfigs[plan.config].pingpong && at(cta, 0, u, 14 + half) != 0)
            h_pub.add(at(cta, 0, u, 14 + half) - at(cta, role, u, 15));
        }
        if (kind == 2 && at(cta, role, u, 17) != 0) {
          if (at(cta, role, u, 16) != 0) {
            h_wait.add(at(cta, role, u, 16) - at(cta, role, u, 4));
            h_add.add(at(cta, role, u, 17) - at(cta, role, u, 16));
          }
          h_epi.add(at(cta, role, u, 5) - at(cta, role, u, 17));
        }
      }
      if (last < 0) continue;
      first0.add(at(cta, role, 0, 2) - at(cta, role, 0, 1));
      loop0.add(at(cta, role, 0, 3) - at(cta, role, 0, 2));
      const double sp = at(cta, role, last, 5) - at(cta, role, 0, 0);
      c_span.add(sp);
      c_span_max = std::max(c_span_max, sp);
    }
    for (int u = 1; u + 1 < units_of(cta, 1) && u + 1 < units_of(cta, 2); ++u) {
      lag_issue.add(at(cta, 2, u, 3) - at(cta, 1, u, 3));
      lag_start.add(at(cta, 2, u, 2) - at(cta, 1, u, 2));
    }
    units_min = std::min(units_min, units_of(cta, 0));
    units_max = std::max(units_max, units_of(cta, 0));
  }
  for (int cta = 0; cta < plan.ctas; ++cta) {
    const int pu = units_of(cta, 0);
    if (pu > 0) span.add(at(cta, 0, pu - 1, 2) - at(cta, 0, 0, 0));
    for (int u = 1; u + 1 < pu; ++u)
      p_wait.add(at(cta, 0, u, 1) - at(cta, 0, u, 0));
    for (int role = 1; role <= 2; ++role) {
      std::vector<int> mine;  // the units this warpgroup ran (ping-pong: every other one)
      for (int u = 0; u < d::kTraceUnits; ++u)
        if (h[d::trace_slot(cta, role, u, 0)] != 0) mine.push_back(u);
      for (std::size_t j = 1; j + 1 < mine.size(); ++j) {
        const int u = mine[j];
        turn.add(at(cta, role, u, 1) - at(cta, role, u, 0));
        first.add(at(cta, role, u, 2) - at(cta, role, u, 1));
        loop.add(at(cta, role, u, 3) - at(cta, role, u, 2));
        drain.add(at(cta, role, u, 4) - at(cta, role, u, 3));
        finish.add(at(cta, role, u, 5) - at(cta, role, u, 4));
        period.add(at(cta, role, mine[j + 1], 0) - at(cta, role, u, 0));
        if (at(cta, role, u, 6) != 0) {
          e_wait0.add(at(cta, role, u, 6) - at(cta, role, u, 4));
          if (at(cta, role, u, 12) != 0) {
            e_entry.add(at(cta, role, u, 12) - at(cta, role, u, 4));
            e_wgr.add(at(cta, role, u, 11) - at(cta, role, u, 12));
            e_bar.add(at(cta, role, u, 6) - at(cta, role, u, 11));
          }
          e_write0.add(at(cta, role, u, 7) - at(cta, role, u, 6));
          e_fence0.add(at(cta, role, u, 8) - at(cta, role, u, 7));
          e_store0.add(at(cta, role, u, 9) - at(cta, role, u, 8));
          if (at(cta, role, u, 10) != 0) {
            e_to2.add(at(cta, role, u, 10) - at(cta, role, u, 9));
            e_rest.add(at(cta, role, u, 5) - at(cta, role, u, 10));
          }
        }
        // The producer's first acquire of unit u (its loads follow) until the consumers found
        // the stage full: how early the producer was.
        if (u < pu) lead.add(at(cta, role, u, 2) - at(cta, 0, u, 1));
      }
    }
  }
  const double mhz = span.get() / (ms * 1e3);
  std::printf(
      "gemm_trace: %lld x %lld x %lld, config %d (%s%s), cluster %d, %d CTAs: %.1f us, %.1f "
      "TFLOP/s; SM clock ~%.0f MHz (producer span / kernel time); operands %s\n",
      static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), plan.config,
      tma::ops::kGemmConfigs[plan.config].pingpong ? "ping-pong" : "cooperative",
      plan.plain_epilogue ? ", plain kernel" : "", plan.cluster_m, plan.ctas, ms * 1e3,
      2.0 * m * n * k / (ms * 1e-3) / 1e12, mhz,
      cold == 1   ? "cold (L2 flushed before each run, dirty)"
      : cold == 2 ? "cold (L2 flushed before each run by reads, clean)"
                  : "warm (back-to-back runs)");
  std::printf("  consumer warpgroup, per unit (cycles; %ld samples):\n", loop.count);
  std::printf("    turn wait      %8.0f\n    first stage    %8.0f\n    k-loop issue   %8.0f\n",
              turn.get(), first.get(), loop.get());
  std::printf("    drain          %8.0f\n    finish (epi)   %8.0f\n    period         %8.0f\n",
              drain.get(), finish.get(), period.get());
  std::printf(
      "    epilogue (last half): chunk 0 wait %.0f, writes %.0f, fence + barrier %.0f, store "
      "issue %.0f; until chunk 2's buffer %.0f; the rest %.0f\n",
      e_wait0.get(), e_write0.get(), e_fence0.get(), e_store0.get(), e_to2.get(), e_rest.get());
  std::printf("    warpgroup 1 behind warpgroup 0: k-loop start %.0f, last issue %.0f cycles\n",
              lag_start.get(), lag_issue.get());
  std::printf("    chunk 0 wait = entry %.0f + leader's wait_group_read %.0f + barrier %.0f\n",
              e_entry.get(), e_wgr.get(), e_bar.get());
  std::printf("  producer: first-stage wait %.0f, lead over the consumers %.0f cycles\n",
              p_wait.get(), lead.get());
  std::printf(
      "  whole kernel: %d..%d units per CTA; first unit: first-stage wait %.0f, k-loop issue %.0f; "
      "consumer span mean %.0f, max %.0f cycles; kernel %.0f cycles at that clock\n",
      units_min, units_max, first0.get(), loop0.get(), c_span.get(), c_span_max, ms * 1e3 * mhz);
  // The first CTA's entry (%globaltimer) of the CTAs that exited: the origin of the exit times.
  double entry_min = 1e30;
  for (int cta = 0; cta < plan.ctas; ++cta)
    if (at(cta, d::kTraceKernel, 0, d::kExit) != 0)
      entry_min = std::min(entry_min, at(cta, d::kTraceKernel, 0, d::kEntryNs));
  // The CTAs' lifetimes (role kTraceKernel): clock64 steps on each SM, %globaltimer across SMs.
  {
    Mean init, to_consumer, to_first, tail, wg1_later, to_exit, life, prod_tail, to_unit, to_load;
    Mean to_ready, to_cursor;  // the producer: after setmaxnreg + PDL wait; first unit walked
    Mean to_regs, to_cregs;    // the producer / consumer warpgroup 0: after setmaxnreg
    double life_max = 0, entry_max = 0, exit_min = 1e30, exit_max = 0;
    const auto kt = [&](int cta, int point) { return at(cta, d::kTraceKernel, 0, point); };
    for (int cta = 0; cta < plan.ctas; ++cta) {
      if (kt(cta, d::kExit) == 0) continue;
      init.add(kt(cta, d::kInitSynced) - kt(cta, d::kEntry));
      to_consumer.add(kt(cta, d::kConsumerStart) - kt(cta, d::kInitSynced));
      if (at(cta, 0, 0, 0) != 0) to_unit.add(at(cta, 0, 0, 0) - kt(cta, d::kEntry));
      if (kt(cta, d::kProducerReady) != 0)
        to_ready.add(kt(cta, d::kProducerReady) - kt(cta, d::kEntry));
      if (kt(cta, d::kProducerCursor) != 0)
        to_cursor.add(kt(cta, d::kProducerCursor) - kt(cta, d::kEntry));
      if (kt(cta, d::kProducerRegAlloc) != 0)
        to_regs.add(kt(cta, d::kProducerRegAlloc) - kt(cta, d::kEntry));
      if (kt(cta, d::kConsumerRegAlloc) != 0)
        to_cregs.add(kt(cta, d::kConsumerRegAlloc) - kt(cta, d::kEntry));
      if (at(cta, 0, 0, 1) != 0) to_load.add(at(cta, 0, 0, 1) - kt(cta, d::kEntry));
      if (at(cta, 1, 0, 0) != 0) to_first.add(at(cta, 1, 0, 0) - kt(cta, d::kConsumerStart));
      int last = -1;
      for (int u = 0; u < d::kTraceUnits; ++u)
        if (h[d::trace_slot(cta, 1, u, 0)] != 0) last = u;
      if (last >= 0) tail.add(kt(cta, d::kConsumerDone) - at(cta, 1, last, 5));
      wg1_later.add(kt(cta, d::kConsumerDone1) - kt(cta, d::kConsumerDone));
      to_exit.add(kt(cta, d::kExit) -
                  std::max(kt(cta, d::kConsumerDone), kt(cta, d::kConsumerDone1)));
      prod_tail.add(kt(cta, d::kExit) - kt(cta, d::kProducerDone));
      const double l = kt(cta, d::kExit) - kt(cta, d::kEntry);
      life.add(l);
      life_max = std::max(life_max, l);
      entry_max = std::max(entry_max, kt(cta, d::kEntryNs));
      exit_min = std::min(exit_min, kt(cta, d::kExitNs));
      exit_max = std::max(exit_max, kt(cta, d::kExitNs));
    }
    std::printf(
        "  CTA lifetime (cycles, mean): entry .. barriers + cluster sync %.0f; .. consumer "
        "start %.0f; .. its first unit %.0f; entry .. the producer's first unit %.0f, .. its first "
        "load %.0f; last unit's end .. wait_group_read done %.0f "
        "(warpgroup 1 done %.0f later); the later one .. exit %.0f (producer done .. exit %.0f); "
        "lifetime mean %.0f, max %.0f\n",
        init.get(), to_consumer.get(), to_first.get(), to_unit.get(), to_load.get(), tail.get(),
        wg1_later.get(), to_exit.get(), prod_tail.get(), life.get(), life_max);
    std::printf(
        "  producer from entry (cycles, mean): setmaxnreg done %.0f, + PDL wait done %.0f, first "
        "unit walked %.0f, its tile coordinates %.0f, first load issued %.0f; consumer "
        "warpgroup 0's setmaxnreg done %.0f\n",
        to_regs.get(), to_ready.get(), to_cursor.get(), to_unit.get(), to_load.get(),
        to_cregs.get());
    std::printf(
        "  globaltimer: CTA entries spread over %.2f us, exits over %.2f us; first entry .. last "
        "exit %.2f us; events around the launch %.2f us\n",
        (entry_max - entry_min) * 1e-3, (exit_max - exit_min) * 1e-3, (exit_max - entry_min) * 1e-3,
        ms * 1e3);
  }
  // Stream-K: the CTAs by the kinds of their units in order (W whole, P partial, F finish; the
  // consumer warpgroup 0's units), each pattern's count, lifetime and exit (%globaltimer after
  // the first CTA's entry): which pattern ends the launch.
  if (plan.stream_k_tiles > 0) {
    struct Pattern {
      Mean life, exit_us, kb;
      double life_max = 0, exit_max = 0;
    };
    std::vector<std::pair<std::string, Pattern>> pats;
    for (int cta = 0; cta < plan.ctas; ++cta) {
      if (at(cta, d::kTraceKernel, 0, d::kExit) == 0) continue;
      std::string name;
      double kbs = 0;
      for (int u = 0; u < d::kTraceUnits; ++u) {
        if (h[d::trace_slot(cta, 1, u, 0)] == 0) continue;
        const unsigned long long tag = h[d::trace_slot(cta, 1, u, 13)];
        const int kind = static_cast<int>(tag >> 24);
        name += kind == 0 ? 'W' : kind == 1 ? 'P' : 'F';
        kbs += static_cast<double>(tag & 0xFFFFFF);
      }
      if (name.size() > 6) name = name.substr(0, 2) + "..." + name.substr(name.size() - 3);
      auto it =
          std::find_if(pats.begin(), pats.end(), [&](const auto& p) { return p.first == name; });
      if (it == pats.end()) it = pats.insert(pats.end(), {name, Pattern{}});
      const double l =
          at(cta, d::kTraceKernel, 0, d::kExit) - at(cta, d::kTraceKernel, 0, d::kEntry);
      const double x = (at(cta, d::kTraceKernel, 0, d::kExitNs) - entry_min) * 1e-3;
      it->second.life.add(l);
      it->second.exit_us.add(x);
      it->second.kb.add(kbs);
      it->second.life_max = std::max(it->second.life_max, l);
      it->second.exit_max = std::max(it->second.exit_max, x);
    }
    for (const auto& [name, p] : pats)
      std::printf(
          "  CTAs %-9s %4ld: k-blocks %5.1f, lifetime mean %7.0f max %7.0f cycles, exit mean "
          "%6.2f max %6.2f us after the first entry\n",
          name.c_str(), p.life.count, p.kb.get(), p.life.get(), p.life_max, p.exit_us.get(),
          p.exit_max);
  }
  static const char* const kKinds[3] = {"whole", "partial", "finish"};
  for (int kind = 0; kind < 3; ++kind) {
    if (k_per_kb[kind].count == 0) continue;
    std::printf(
        "  %-7s units: %5ld (%ld k-blocks); first-stage wait %6.0f, k-loop issue per k-block "
        "%6.0f, drain %5.0f, finish %6.0f cycles\n",
        kKinds[kind], k_per_kb[kind].count, k_blocks_of[kind], k_first[kind].get(),
        k_per_kb[kind].get(), k_drain[kind].get(), k_finish[kind].get());
  }
  if (h_store.count > 0 || h_epi.count > 0)
    std::printf(
        "  handoff: partial: stores issued %.0f, barrier (+ flag) %.0f, flag warp's flag %.0f "
        "later; finish: first peer's flag (incl. its wait) %.0f, peers read + added %.0f, "
        "epilogue %.0f cycles\n",
        h_store.get(), h_flag.get(), h_pub.get(), h_wait.get(), h_add.get(), h_epi.get());
  return 0;
}
