// gpu_bulk: the device operations that no other GPU test runs, on the hardware, byte for byte.
//
// Six parts, each on fresh random data with every destination poisoned before the copies:
//   1 bulk_load         bulk_load of 16 B .. 100 KiB (multiples of 16) from random 16-byte-aligned
//                       global offsets to random 16-byte-aligned shared offsets, in 1..4 pieces
//                       completing one barrier phase (arrive_expect_tx before or after issuing, or
//                       expect_tx per piece + arrive), half of them after bulk_prefetch of the
//                       source. The whole shared region (guards, tail) is copied out and compared.
//   2 bulk_store        a source staged through 1 or 2 shared buffers, chunk by chunk: bulk_store,
//                       commit_group, wait_group_read<0> (one buffer) or <1> (two) before a
//                       buffer is refilled; at the end wait_group_read<0>, the buffers are
//                       overwritten with poison, wait_group<0>, and the issuing thread reads the
//                       destination back. Destination and poisoned guards around it are compared.
//   3 bulk_multicast    bulk_load_multicast in clusters of 2 and 4: 1..8 pieces, each issued by a
//                       random CTA to a random mask; every CTA's barrier expects the bytes that
//                       land in it. Receivers hold exactly their pieces, the rest stays poison.
//   4 prefetch_load     prefetch_descriptor, prefetch_tile (with and without an L2 hint) or
//                       prefetch_im2col of the box and of an unrelated one (out of bounds too),
//                       then load / load_im2col with every CacheHint, against model::load_box /
//                       model::load_im2col. Specs draw every L2 promotion.
//   5 tensor_multicast  load_im2col_multicast and load_multicast with every CacheHint, in clusters
//                       of 2 and 4, issued by a random CTA (in the mask or not), against the model.
//   6 store_hint        store with every CacheHint (wait_group<0>, or wait_group_read<0> and the
//                       source overwritten), against model::store_box over the whole destination.
//
// Case i of part p has the seed derive_seed(derive_seed(seed, salt(p)), i): `--only I` runs case I
// of every part. `--count N` sets every part's count. Mismatch records name the part and the case.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../common/random_spec.hpp"
#include "device_util.hpp"
#include "gpu_common.hpp"
#include "load_harness.hpp"
#include "spec_draw.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/model/model.hpp"

namespace {

using namespace tma;
using namespace tma::testing;

__global__ void probe_kernel() {}

constexpr unsigned kThreads = 128;
constexpr std::uint32_t kMaxBulkBytes = 100 * 1024;  // one bulk copy, and one CTA's area
constexpr int kMaxPieces = 4;                        // bulk_load: copies into one barrier phase
constexpr int kMaxMcPieces = 8;                      // bulk_multicast: copies per cluster
constexpr std::uint32_t kMaxStoreChunks = 64;        // bulk_store: staged chunks per case
constexpr int kMaxCluster = 4;

// ---- parts ----------------------------------------------------------------------------------

enum class Part : int {
  kBulkLoad,
  kBulkStore,
  kBulkMulticast,
  kPrefetchLoad,
  kTensorMulticast,
  kStoreHint,
};
constexpr int kParts = 6;
constexpr std::array<const char*, kParts> kPartNames = {
    "bulk_load", "bulk_store", "bulk_multicast", "prefetch_load", "tensor_multicast", "store_hint"};
// Cases (full run, --quick) per part. --quick is what runs under compute-sanitizer.
constexpr std::array<std::int64_t, kParts> kFullCases = {2000, 1500, 1000, 1500, 800, 800};
constexpr std::array<std::int64_t, kParts> kQuickCases = {150, 120, 80, 120, 60, 60};
// Cases per launch (clusters for the multicast parts).
constexpr std::array<std::size_t, kParts> kBatch = {512, 512, 256, 256, 256, 256};

const char* part_name(Part p) {
  return kPartNames[static_cast<std::size_t>(p)];
}

std::uint64_t case_seed(std::uint64_t seed, Part p, std::int64_t index) {
  return derive_seed(derive_seed(seed, 0xB01C0000u + static_cast<std::uint64_t>(p)),
                     static_cast<std::uint64_t>(index));
}

std::string_view hint_name(CacheHint h) {
  switch (h) {
    case CacheHint::kNone:
      return "none";
    case CacheHint::kEvictNormal:
      return "evict_normal";
    case CacheHint::kEvictFirst:
      return "evict_first";
    case CacheHint::kEvictLast:
      return "evict_last";
  }
  return "?";
}

struct PartTotals {
  std::int64_t cases = 0, mismatches = 0, timeouts = 0, skipped = 0;
};

struct Totals {
  std::array<PartTotals, kParts> part{};
  std::map<std::string, std::int64_t> coverage;  // what the tensor parts exercised
  long long wait_cycles = 0;                     // bound of every barrier wait

  PartTotals& operator[](Part p) { return part[static_cast<std::size_t>(p)]; }
};

// ---- shared host helpers --------------------------------------------------------------------

// The case indices of a part that this run executes.
std::vector<std::int64_t> part_indices(const Context& ctx, Part p) {
  const auto k = static_cast<std::size_t>(p);
  const std::int64_t total = ctx.args.count_or(kFullCases[k], kQuickCases[k]);
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < std::max(total, ctx.args.only + 1); ++i) {
    if (ctx.selected(i)) out.push_back(i);
  }
  return out;
}

// Runs `make(index, seed)` for every selected case of part `p` and hands the cases to `run` in
// batches.
template <class Case, class Make, class Run>
void run_part(Context& ctx, Part p, Make&& make, Run&& run) {
  const std::vector<std::int64_t> indices = part_indices(ctx, p);
  const std::size_t batch = kBatch[static_cast<std::size_t>(p)];
  for (std::size_t first = 0; first < indices.size(); first += batch) {
    const std::size_t n = std::min(batch, indices.size() - first);
    std::vector<Case> cases(n);
    parallel_for(n, [&](std::size_t k) {
      const std::int64_t index = indices[first + k];
      cases[k] = make(index, case_seed(ctx.report.seed(), p, index));
    });
    run(cases);
  }
}

// Launches `kernel` on `blocks` blocks of kThreads threads, in clusters of `cluster` CTAs when
// cluster > 1, and waits for it (watchdog). A CUDA error is recorded under the part, then rethrown.
template <class... P, class... A>
void launch(Context& ctx, Part p, const std::string& what, void (*kernel)(P...), std::size_t blocks,
            unsigned cluster, std::size_t smem, A&&... args) {
  try {
    TMA_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem)));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1]{};
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = cluster > 1 ? 1 : 0;
    TMA_CHECK_CUDA(cudaLaunchKernelEx(&config, kernel, std::forward<A>(args)...));
    TMA_CHECK_LAUNCH();
    sync_with_watchdog(nullptr, ctx.args.timeout_s, what, ctx.report);
  } catch (const CudaError& e) {
    // A fault poisons the context: say which part and batch did it, then give up.
    Json j;
    j.str("part", part_name(p)).str("batch", what).str("error", e.what());
    ctx.report.failure("launch-error", std::string("launch-error/") + part_name(p), j);
    throw;
  }
}

std::string batch_name(Part p, std::int64_t first, std::int64_t last, int cluster = 1) {
  std::string s =
      std::string(part_name(p)) + " cases " + std::to_string(first) + ".." + std::to_string(last);
  if (cluster > 1) s += " (clusters of " + std::to_string(cluster) + ")";
  return s;
}

std::vector<std::uint32_t> download_status(const DeviceBuffer& d, std::size_t n) {
  std::vector<std::uint32_t> s(n);
  if (n > 0) {
    TMA_CHECK_CUDA(
        cudaMemcpy(s.data(), d.data(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  }
  return s;
}

// Compares one result with its expectation; records a mismatch or timeout under `category`.
// Returns true when it matched and the wait did not give up.
bool check_result(Report& report, const std::string& category, const Json& rec,
                  std::span<const std::byte> hw, std::span<const std::byte> expected,
                  bool timed_out, std::span<const std::byte> source = {}) {
  const auto diff = compare_bytes(hw, expected);
  if (!diff && !timed_out) return true;
  if (!diff) {
    report.failure("timeout", "timeout/" + category, rec);
  } else {
    report.mismatch(timed_out ? "timeout" : "mismatch", (timed_out ? "timeout/" : "") + category,
                    rec, hw, expected, *diff, source);
  }
  return false;
}

// Adds a batch's results to the part's totals; shortens the waits once any gave up, so that a
// broken run still ends quickly (the first timeouts were recorded with the full bound).
void tally(Context& ctx, Totals& t, Part p, std::int64_t cases, std::int64_t bad,
           std::int64_t timeouts) {
  t[p].cases += cases;
  t[p].mismatches += bad;
  t[p].timeouts += timeouts;
  if (timeouts > 0) t.wait_cycles = ctx.cycles(0.05);
}

// A multiple of 16 in [16 * lo, 16 * hi], log-uniform (small and large sizes equally likely).
std::uint32_t log_multiple_of_16(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return static_cast<std::uint32_t>(16 * rng.log_range(lo, hi));
}
// A multiple of 16 in [16 * lo, 16 * hi], uniform.
std::uint32_t multiple_of_16(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return static_cast<std::uint32_t>(16 * rng.range(lo, hi));
}

// A bulk copy's source slot in an input arena: `lead` bytes, the source, then slack (256-byte
// aligned), all of it random.
std::size_t source_slot_bytes(std::uint32_t lead, std::uint32_t bytes) {
  return align_up(std::size_t{lead} + bytes, 256) + 256;
}

// =============================================================================================
// Part 1: bulk_load (+ bulk_prefetch)
// =============================================================================================

enum ExpectMode : std::int32_t {
  kExpectBefore = 0,    // arrive_expect_tx(bytes), then the copies
  kExpectAfter = 1,     // the copies, then arrive_expect_tx(bytes)
  kExpectPerPiece = 2,  // expect_tx(piece bytes) before each copy, arrive() after the last
};
constexpr std::array<const char*, 3> kExpectNames = {"expect-before", "expect-after",
                                                     "expect-per-piece"};

struct BulkLoadJob {
  std::uint64_t src_offset;    // source: input arena + src_offset (16-byte aligned)
  std::uint64_t out_offset;    // where the block's region goes in the output arena
  std::uint32_t region_bytes;  // kGuardBytes | area | kGuardBytes
  std::uint32_t dst_offset;    // destination: area + dst_offset (16-byte aligned)
  std::uint32_t bytes;
  std::uint32_t pieces;                 // bulk_load k copies [split[k], split[k + 1])
  std::uint32_t split[kMaxPieces + 1];  // split[0] = 0, split[pieces] = bytes
  std::int32_t expect;                  // ExpectMode
  std::int32_t prefetch;                // 1: bulk_prefetch of the source first
};

// One block per job. status[block] = 1 when the barrier wait gave up.
__global__ void __launch_bounds__(kThreads)
    bulk_load_kernel(const std::byte* in, const BulkLoadJob* jobs, std::byte* out,
                     std::uint32_t* status, long long wait_cycles) {
  __shared__ Barrier bar;
  const BulkLoadJob& job = jobs[blockIdx.x];
  std::byte* region = aligned_dynamic_smem();
  fill_words(region, job.region_bytes, kPoisonWord);
  // Poison (generic proxy) before the copies' bytes (async proxy).
  fence_proxy_async_shared();
  if (threadIdx.x == 0) {
    bar.init(1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    std::byte* dst = region + kGuardBytes + job.dst_offset;
    const std::byte* src = in + job.src_offset;
    if (job.prefetch != 0) bulk_prefetch(src, job.bytes);
    if (job.expect == kExpectBefore) bar.arrive_expect_tx(job.bytes);
    for (std::uint32_t k = 0; k < job.pieces; ++k) {
      const std::uint32_t lo = job.split[k];
      const std::uint32_t n = job.split[k + 1] - lo;
      if (job.expect == kExpectPerPiece) bar.expect_tx(n);
      bulk_load(dst + lo, src + lo, n, bar);
    }
    if (job.expect == kExpectAfter) bar.arrive_expect_tx(job.bytes);
    if (job.expect == kExpectPerPiece) bar.arrive();
  }
  if (!wait_bounded(bar, 0, wait_cycles)) status[blockIdx.x] = 1;
  __syncthreads();
  copy_words(out + job.out_offset, region, job.region_bytes);
}

struct BulkLoadCase {
  std::int64_t index = 0;
  std::uint64_t seed = 0;
  std::uint32_t bytes = 0, lead = 0, dst_offset = 0, tail = 0;
  std::vector<std::uint32_t> split;  // 0 = split[0] < ... < split.back() = bytes
  ExpectMode expect = kExpectBefore;
  bool prefetch = false;
};

BulkLoadCase make_bulk_load_case(std::int64_t index, std::uint64_t seed) {
  BulkLoadCase c;
  c.index = index;
  c.seed = seed;
  Rng rng(seed);
  c.bytes = log_multiple_of_16(rng, 1, kMaxBulkBytes / 16);
  c.lead = multiple_of_16(rng, 0, 255);       // source offset within its 256-byte-aligned slot
  c.dst_offset = multiple_of_16(rng, 0, 63);  // destination offset within the area
  c.tail = multiple_of_16(rng, 1, 16);        // poisoned bytes after the destination
  c.split = {0, c.bytes};
  const auto pieces =
      static_cast<int>(std::min<std::int64_t>(rng.range(1, kMaxPieces), c.bytes / 16));
  for (int k = 1; k < pieces; ++k)
    c.split.push_back(multiple_of_16(rng, 1, c.bytes / 16 - 1));
  std::sort(c.split.begin(), c.split.end());
  c.split.erase(std::unique(c.split.begin(), c.split.end()), c.split.end());
  c.expect = static_cast<ExpectMode>(rng.range(0, 2));
  c.prefetch = rng.chance(0.5);
  return c;
}

void run_bulk_load_batch(Context& ctx, Totals& totals, std::vector<BulkLoadCase>& cases) {
  Report& report = ctx.report;
  std::vector<std::size_t> src(cases.size()), out_at(cases.size());
  std::vector<std::uint32_t> region(cases.size());
  std::size_t arena = 0, out_bytes = 0, max_region = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const BulkLoadCase& c = cases[k];
    src[k] = arena + c.lead;
    arena += source_slot_bytes(c.lead, c.bytes);
    region[k] =
        static_cast<std::uint32_t>(kGuardBytes + c.dst_offset + c.bytes + c.tail + kGuardBytes);
    out_at[k] = out_bytes;
    out_bytes += region[k];
    max_region = std::max<std::size_t>(max_region, region[k]);
  }
  std::vector<std::byte> input(arena);
  parallel_for(cases.size(), [&](std::size_t k) {
    Rng data(derive_seed(cases[k].seed, 0xDA7Au));
    data.fill(std::span<std::byte>(input).subspan(
        src[k] - cases[k].lead, source_slot_bytes(cases[k].lead, cases[k].bytes)));
  });
  std::vector<BulkLoadJob> jobs(cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const BulkLoadCase& c = cases[k];
    BulkLoadJob& j = jobs[k];
    j.src_offset = src[k];
    j.out_offset = out_at[k];
    j.region_bytes = region[k];
    j.dst_offset = c.dst_offset;
    j.bytes = c.bytes;
    j.pieces = static_cast<std::uint32_t>(c.split.size() - 1);
    for (std::size_t i = 0; i < c.split.size(); ++i)
      j.split[i] = c.split[i];
    j.expect = c.expect;
    j.prefetch = c.prefetch ? 1 : 0;
  }
  DeviceBuffer d_in(arena), d_jobs(jobs.size() * sizeof(BulkLoadJob)), d_out(out_bytes);
  DeviceBuffer d_status(jobs.size() * sizeof(std::uint32_t));
  d_in.upload(input);
  d_jobs.upload(bytes_of(jobs));
  TMA_CHECK_CUDA(cudaMemset(d_out.data(), 0x5A, out_bytes));  // blocks that never ran show up
  TMA_CHECK_CUDA(cudaMemset(d_status.data(), 0, d_status.size()));
  launch(ctx, Part::kBulkLoad, batch_name(Part::kBulkLoad, cases.front().index, cases.back().index),
         bulk_load_kernel, jobs.size(), 1, dynamic_smem_for(max_region), d_in.data(),
         d_jobs.as<BulkLoadJob>(), d_out.data(), d_status.as<std::uint32_t>(), totals.wait_cycles);
  std::vector<std::byte> out(out_bytes);
  d_out.download(out);
  const auto status = download_status(d_status, jobs.size());

  std::atomic<std::int64_t> bad{0}, timeouts{0};
  parallel_for(cases.size(), [&](std::size_t k) {
    const BulkLoadCase& c = cases[k];
    std::vector<std::byte> expected(region[k], kPoison);
    std::copy_n(input.begin() + static_cast<std::ptrdiff_t>(src[k]), c.bytes,
                expected.begin() + static_cast<std::ptrdiff_t>(kGuardBytes + c.dst_offset));
    const bool timed_out = status[k] != 0;
    if (timed_out) ++timeouts;
    Json rec;
    rec.str("part", "bulk_load")
        .num("case", c.index)
        .num("case_seed", c.seed)
        .num("copy_bytes", c.bytes)
        .num("src_offset_in_slot", c.lead)
        .num("dst_offset", c.dst_offset)
        .num("image_offset", kGuardBytes)
        .nums("split", std::span<const std::uint32_t>(c.split))
        .str("expect", kExpectNames[static_cast<std::size_t>(c.expect)])
        .num("prefetch", c.prefetch);
    const std::string cat = std::string("bulk_load/pieces") + std::to_string(c.split.size() - 1) +
                            "/" + kExpectNames[static_cast<std::size_t>(c.expect)] +
                            (c.prefetch ? "/prefetch" : "");
    if (!check_result(report, cat, rec,
                      std::span<const std::byte>(out).subspan(out_at[k], region[k]), expected,
                      timed_out)) {
      ++bad;
    }
  });
  tally(ctx, totals, Part::kBulkLoad, static_cast<std::int64_t>(cases.size()), bad, timeouts);
}

// =============================================================================================
// Part 2: bulk_store, commit_group, wait_group_read<0/1>, wait_group<0>
// =============================================================================================

struct BulkStoreJob {
  std::uint64_t src_offset;       // the source bytes in the input arena
  std::uint64_t dst_offset;       // the destination in the output arena (16-byte aligned)
  std::uint64_t readback_offset;  // where the issuing thread copies the destination it reads back
  std::uint32_t bytes;
  std::uint32_t chunk_bytes;  // one staging buffer (a multiple of 16)
  std::uint32_t buffers;      // 1 or 2 staging buffers
  std::uint32_t smem_offset;  // of the first buffer in dynamic shared memory (16-byte aligned)
};

// One block per job.
__global__ void __launch_bounds__(kThreads)
    bulk_store_kernel(const std::byte* in, const BulkStoreJob* jobs, std::byte* out,
                      std::byte* readback) {
  const BulkStoreJob& job = jobs[blockIdx.x];
  std::byte* stage = aligned_dynamic_smem() + job.smem_offset;
  const std::uint32_t chunks = (job.bytes + job.chunk_bytes - 1) / job.chunk_bytes;
  for (std::uint32_t k = 0; k < chunks; ++k) {
    std::byte* buf = stage + (k % job.buffers) * job.chunk_bytes;
    const std::uint32_t lo = k * job.chunk_bytes;
    const std::uint32_t n = min(job.chunk_bytes, job.bytes - lo);
    // The store that read `buf` last has finished reading it (the wait at the end of the
    // previous iteration), so it may be refilled.
    copy_words(buf, in + job.src_offset + lo, n);
    fence_proxy_async_shared();  // the ordinary writes of `buf`, before the store reads it
    __syncthreads();
    if (threadIdx.x == 0) {
      bulk_store(out + job.dst_offset + lo, buf, n);
      commit_group();
      // The next iteration refills the buffer that the store of chunk k + 1 - buffers read:
      // wait until at most buffers - 1 groups (this one, with two buffers) are still reading.
      if (job.buffers == 1) {
        wait_group_read<0>();
      } else {
        wait_group_read<1>();
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) wait_group_read<0>();
  __syncthreads();
  // Every store has read its source: overwrite the buffers. A store still reading would write
  // poison to the destination and the comparison would show it.
  fill_words(stage, std::size_t{job.buffers} * job.chunk_bytes, kPoisonWord);
  if (threadIdx.x == 0) {
    wait_group<0>();
    // The writes are complete and visible to this thread: read them back with ordinary loads.
    const auto* d = reinterpret_cast<const uint4*>(out + job.dst_offset);
    auto* r = reinterpret_cast<uint4*>(readback + job.readback_offset);
    for (std::uint32_t i = 0; i < job.bytes / 16; ++i)
      r[i] = d[i];
  }
}

struct BulkStoreCase {
  std::int64_t index = 0;
  std::uint64_t seed = 0;
  std::uint32_t bytes = 0, chunk_bytes = 0, buffers = 1, smem_offset = 0;
  std::uint32_t lead = 0, guard_before = 0, guard_after = 0;
};

BulkStoreCase make_bulk_store_case(std::int64_t index, std::uint64_t seed) {
  BulkStoreCase c;
  c.index = index;
  c.seed = seed;
  Rng rng(seed);
  c.bytes = log_multiple_of_16(rng, 1, kMaxBulkBytes / 16);
  c.buffers = rng.chance(0.5) ? 2u : 1u;
  // At most kMaxStoreChunks chunks, both buffers within kMaxBulkBytes.
  const std::uint32_t min_chunk =
      static_cast<std::uint32_t>(align_up((c.bytes + kMaxStoreChunks - 1) / kMaxStoreChunks, 16));
  const std::uint32_t max_chunk = std::min(c.bytes, kMaxBulkBytes / c.buffers / 16 * 16);
  c.chunk_bytes = std::clamp(log_multiple_of_16(rng, 1, max_chunk / 16), min_chunk, max_chunk);
  c.smem_offset = multiple_of_16(rng, 0, 63);
  c.lead = multiple_of_16(rng, 0, 255);
  c.guard_before = multiple_of_16(rng, 1, 32);
  c.guard_after = multiple_of_16(rng, 1, 32);
  return c;
}

void run_bulk_store_batch(Context& ctx, Totals& totals, std::vector<BulkStoreCase>& cases) {
  Report& report = ctx.report;
  const std::size_t n = cases.size();
  std::vector<std::size_t> src(n), slot(n), slot_bytes(n), back(n);
  std::size_t arena = 0, out_bytes = 0, back_bytes = 0, max_smem = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const BulkStoreCase& c = cases[k];
    src[k] = arena + c.lead;
    arena += source_slot_bytes(c.lead, c.bytes);
    slot[k] = out_bytes;
    slot_bytes[k] = align_up(std::size_t{c.guard_before} + c.bytes + c.guard_after, 256);
    out_bytes += slot_bytes[k];
    back[k] = back_bytes;
    back_bytes += c.bytes;
    max_smem = std::max<std::size_t>(max_smem, c.smem_offset + c.buffers * c.chunk_bytes);
  }
  std::vector<std::byte> input(arena);
  parallel_for(n, [&](std::size_t k) {
    Rng data(derive_seed(cases[k].seed, 0xDA7Au));
    data.fill(std::span<std::byte>(input).subspan(
        src[k] - cases[k].lead, source_slot_bytes(cases[k].lead, cases[k].bytes)));
  });
  std::vector<BulkStoreJob> jobs(n);
  for (std::size_t k = 0; k < n; ++k) {
    const BulkStoreCase& c = cases[k];
    jobs[k] = BulkStoreJob{
        src[k],       slot[k] + c.guard_before, back[k], c.bytes, c.chunk_bytes, c.buffers,
        c.smem_offset};
  }
  DeviceBuffer d_in(arena), d_jobs(n * sizeof(BulkStoreJob)), d_out(out_bytes), d_back(back_bytes);
  d_in.upload(input);
  d_jobs.upload(bytes_of(jobs));
  TMA_CHECK_CUDA(cudaMemset(d_out.data(), std::to_integer<int>(kPoison), out_bytes));
  TMA_CHECK_CUDA(cudaMemset(d_back.data(), std::to_integer<int>(kPoison), back_bytes));
  launch(ctx, Part::kBulkStore,
         batch_name(Part::kBulkStore, cases.front().index, cases.back().index), bulk_store_kernel,
         n, 1, dynamic_smem_for(max_smem), d_in.data(), d_jobs.as<BulkStoreJob>(), d_out.data(),
         d_back.data());
  std::vector<std::byte> out(out_bytes), readback(back_bytes);
  d_out.download(out);
  d_back.download(readback);

  std::atomic<std::int64_t> bad{0};
  parallel_for(n, [&](std::size_t k) {
    const BulkStoreCase& c = cases[k];
    const std::span<const std::byte> source(input.data() + src[k], c.bytes);
    std::vector<std::byte> expected(slot_bytes[k], kPoison);
    std::copy(source.begin(), source.end(),
              expected.begin() + static_cast<std::ptrdiff_t>(c.guard_before));
    const std::uint32_t chunks = (c.bytes + c.chunk_bytes - 1) / c.chunk_bytes;
    Json rec;
    rec.str("part", "bulk_store")
        .num("case", c.index)
        .num("case_seed", c.seed)
        .num("copy_bytes", c.bytes)
        .num("chunk_bytes", c.chunk_bytes)
        .num("chunks", chunks)
        .num("buffers", c.buffers)
        .num("smem_offset", c.smem_offset)
        .num("src_offset_in_slot", c.lead)
        .num("dst_offset_in_slot", c.guard_before);
    const std::string cat =
        "bulk_store/buffers" + std::to_string(c.buffers) + (chunks == 1 ? "/one-chunk" : "/chunks");
    bool ok = check_result(report, cat, rec,
                           std::span<const std::byte>(out).subspan(slot[k], slot_bytes[k]),
                           expected, false, source);
    // What the issuing thread read back right after wait_group<0>.
    ok = check_result(report, cat + "/readback-after-wait_group", rec,
                      std::span<const std::byte>(readback).subspan(back[k], c.bytes), source,
                      false) &&
         ok;
    if (!ok) ++bad;
  });
  tally(ctx, totals, Part::kBulkStore, static_cast<std::int64_t>(n), bad, 0);
}

// =============================================================================================
// Part 3: bulk_load_multicast
// =============================================================================================

struct BulkMcPiece {
  std::uint32_t src;  // from the cluster's source slot
  std::uint32_t dst;  // offset in every receiver's area
  std::uint32_t bytes;
  std::uint16_t issuer;  // the CTA rank that issues it
  std::uint16_t mask;    // the receivers
};

struct BulkMcJob {
  std::uint64_t src_offset;    // the cluster's source slot in the input arena
  std::uint64_t out_offset;    // CTA 0's region; CTA r's follows at r * region_bytes
  std::uint32_t region_bytes;  // kGuardBytes | area | kGuardBytes
  std::uint32_t pieces;
  std::uint32_t expect[kMaxCluster];  // bytes landing in CTA rank r
  BulkMcPiece piece[kMaxMcPieces];
};

// One cluster per job.
__global__ void __launch_bounds__(kThreads)
    bulk_multicast_kernel(const std::byte* in, const BulkMcJob* jobs, std::byte* out,
                          std::uint32_t* status, long long wait_cycles) {
  __shared__ Barrier bar;
  const std::uint32_t me = cluster_cta_rank();
  const BulkMcJob& job = jobs[blockIdx.x / cluster_size()];
  std::byte* region = aligned_dynamic_smem();
  std::byte* area = region + kGuardBytes;
  fill_words(region, job.region_bytes, kPoisonWord);
  fence_proxy_async_shared();
  if (threadIdx.x == 0) {
    bar.init(1);
    fence_barrier_init();
  }
  __syncthreads();
  // Every CTA's barrier is initialized and its poison written before any copy targets it.
  cluster_sync();
  if (threadIdx.x == 0) {
    // Pieces from other CTAs may land before this; the pending arrival keeps the phase open.
    bar.arrive_expect_tx(job.expect[me]);
    for (std::uint32_t k = 0; k < job.pieces; ++k) {
      const BulkMcPiece& p = job.piece[k];
      if (p.issuer == me) {
        bulk_load_multicast(area + p.dst, in + job.src_offset + p.src, p.bytes, bar, p.mask);
      }
    }
  }
  if (!wait_bounded(bar, 0, wait_cycles)) status[blockIdx.x] = 1;
  __syncthreads();
  copy_words(out + job.out_offset + std::size_t{me} * job.region_bytes, region, job.region_bytes);
  // No CTA leaves while a peer's multicast may still target its shared memory.
  cluster_sync();
}

struct BulkMcCase {
  std::int64_t index = 0;
  std::uint64_t seed = 0;
  int cluster = 2;
  std::vector<BulkMcPiece> pieces;
  std::uint32_t area_bytes = 0, src_bytes = 0;
};

BulkMcCase make_bulk_mc_case(std::int64_t index, std::uint64_t seed) {
  BulkMcCase c;
  c.index = index;
  c.seed = seed;
  c.cluster = index % 2 == 0 ? 2 : 4;
  Rng rng(seed);
  const auto pieces = static_cast<int>(rng.range(1, kMaxMcPieces));
  const std::uint32_t max_piece = kMaxBulkBytes / static_cast<std::uint32_t>(pieces) / 16 * 16;
  c.src_bytes = static_cast<std::uint32_t>(align_up(max_piece, 256)) + multiple_of_16(rng, 0, 255);
  std::uint32_t cursor = multiple_of_16(rng, 0, 8);
  for (int k = 0; k < pieces; ++k) {
    BulkMcPiece p{};
    p.bytes = log_multiple_of_16(rng, 1, max_piece / 16);
    p.src = multiple_of_16(rng, 0, (c.src_bytes - p.bytes) / 16);
    p.dst = cursor;
    cursor += p.bytes + multiple_of_16(rng, 0, 8);  // gaps stay poison in every CTA
    p.issuer = static_cast<std::uint16_t>(rng.range(0, c.cluster - 1));
    p.mask = static_cast<std::uint16_t>(rng.range(1, (1 << c.cluster) - 1));
    c.pieces.push_back(p);
  }
  c.area_bytes = cursor + multiple_of_16(rng, 1, 8);
  return c;
}

void run_bulk_mc_group(Context& ctx, Totals& totals, const std::vector<BulkMcCase>& cases,
                       int cluster) {
  Report& report = ctx.report;
  const std::size_t n = cases.size();
  const auto ctas = static_cast<std::size_t>(cluster);
  std::vector<std::size_t> src(n), out_at(n);
  std::vector<std::uint32_t> region(n);
  std::size_t arena = 0, out_bytes = 0, max_region = 0;
  for (std::size_t k = 0; k < n; ++k) {
    src[k] = arena;
    arena += align_up(cases[k].src_bytes, 256);
    region[k] = static_cast<std::uint32_t>(kGuardBytes + cases[k].area_bytes + kGuardBytes);
    out_at[k] = out_bytes;
    out_bytes += region[k] * ctas;
    max_region = std::max<std::size_t>(max_region, region[k]);
  }
  std::vector<std::byte> input(arena);
  parallel_for(n, [&](std::size_t k) {
    Rng data(derive_seed(cases[k].seed, 0xDA7Au));
    data.fill(std::span<std::byte>(input).subspan(src[k], cases[k].src_bytes));
  });
  std::vector<BulkMcJob> jobs(n);
  std::vector<std::array<std::uint32_t, kMaxCluster>> expect(n);
  for (std::size_t k = 0; k < n; ++k) {
    const BulkMcCase& c = cases[k];
    BulkMcJob& j = jobs[k];
    j = BulkMcJob{};
    j.src_offset = src[k];
    j.out_offset = out_at[k];
    j.region_bytes = region[k];
    j.pieces = static_cast<std::uint32_t>(c.pieces.size());
    for (std::size_t i = 0; i < c.pieces.size(); ++i) {
      j.piece[i] = c.pieces[i];
      for (int r = 0; r < cluster; ++r) {
        if ((c.pieces[i].mask >> r) & 1u) j.expect[r] += c.pieces[i].bytes;
      }
    }
    std::copy(std::begin(j.expect), std::end(j.expect), expect[k].begin());
  }
  DeviceBuffer d_in(arena), d_jobs(n * sizeof(BulkMcJob)), d_out(out_bytes);
  DeviceBuffer d_status(n * ctas * sizeof(std::uint32_t));
  d_in.upload(input);
  d_jobs.upload(bytes_of(jobs));
  TMA_CHECK_CUDA(cudaMemset(d_out.data(), 0x5A, out_bytes));
  TMA_CHECK_CUDA(cudaMemset(d_status.data(), 0, d_status.size()));
  launch(ctx, Part::kBulkMulticast,
         batch_name(Part::kBulkMulticast, cases.front().index, cases.back().index, cluster),
         bulk_multicast_kernel, n * ctas, static_cast<unsigned>(cluster),
         dynamic_smem_for(max_region), d_in.data(), d_jobs.as<BulkMcJob>(), d_out.data(),
         d_status.as<std::uint32_t>(), totals.wait_cycles);
  std::vector<std::byte> out(out_bytes);
  d_out.download(out);
  const auto status = download_status(d_status, n * ctas);

  std::atomic<std::int64_t> bad{0}, timeouts{0};
  parallel_for(n, [&](std::size_t k) {
    const BulkMcCase& c = cases[k];
    std::vector<std::uint32_t> piece_fields;  // src, dst, bytes, issuer, mask per piece
    for (const BulkMcPiece& p : c.pieces)
      piece_fields.insert(piece_fields.end(), {p.src, p.dst, p.bytes, p.issuer, p.mask});
    bool ok = true;
    for (int r = 0; r < cluster; ++r) {
      std::vector<std::byte> expected(region[k], kPoison);
      for (const BulkMcPiece& p : c.pieces) {
        if (((p.mask >> r) & 1u) == 0) continue;
        std::copy_n(input.begin() + static_cast<std::ptrdiff_t>(src[k] + p.src), p.bytes,
                    expected.begin() + static_cast<std::ptrdiff_t>(kGuardBytes + p.dst));
      }
      const bool timed_out = status[k * ctas + static_cast<std::size_t>(r)] != 0;
      if (timed_out) ++timeouts;
      Json rec;
      rec.str("part", "bulk_multicast")
          .num("case", c.index)
          .num("case_seed", c.seed)
          .num("cluster", cluster)
          .num("cta", r)
          .num("expect_tx", expect[k][static_cast<std::size_t>(r)])
          .nums("pieces_src_dst_bytes_issuer_mask", std::span<const std::uint32_t>(piece_fields))
          .num("image_offset", kGuardBytes);
      const std::string cat =
          "bulk_multicast/c" + std::to_string(cluster) +
          (expect[k][static_cast<std::size_t>(r)] == 0 ? "/receives-nothing" : "/receives");
      ok = check_result(report, cat, rec,
                        std::span<const std::byte>(out).subspan(
                            out_at[k] + static_cast<std::size_t>(r) * region[k], region[k]),
                        expected, timed_out) &&
           ok;
    }
    if (!ok) ++bad;
  });
  tally(ctx, totals, Part::kBulkMulticast, static_cast<std::int64_t>(n), bad, timeouts);
}

void run_bulk_mc_batch(Context& ctx, Totals& totals, std::vector<BulkMcCase>& cases) {
  for (const int cluster : {2, 4}) {
    std::vector<BulkMcCase> group;
    for (const BulkMcCase& c : cases) {
      if (c.cluster == cluster) group.push_back(c);
    }
    if (!group.empty()) run_bulk_mc_group(ctx, totals, group, cluster);
  }
}

// =============================================================================================
// Parts 4-6: tensor copies (prefetches, cache hints, im2col multicast, hinted stores)
// =============================================================================================

enum PrefetchKind : std::int32_t {
  kNoPrefetch = 0,
  kPrefetchPlain = 1,  // prefetch_tile / prefetch_im2col
  kPrefetchHint = 2,   // prefetch_tile with an L2 hint (tiled only)
};
constexpr std::array<const char*, 3> kPrefetchNames = {"no-prefetch", "prefetch", "prefetch-hint"};

// One tensor copy, as a kernel sees it.
struct TensorJob {
  std::uint32_t map;
  std::int32_t rank;
  std::int32_t im2col;  // 0: tiled, 1: im2col
  std::int32_t coords[kMaxRank];
  std::int32_t extra_coords[kMaxRank];  // prefetch_load: an unrelated box, prefetched too
  std::uint16_t offsets[3];             // im2col: W first
  std::uint16_t extra_offsets[3];
  std::int32_t prefetch;       // PrefetchKind
  std::int32_t prefetch_hint;  // CacheHint of a kPrefetchHint prefetch (never kNone)
  std::int32_t hint;           // CacheHint of the load / multicast load / store
  std::int32_t wait_read;      // store_hint: 1 wait_group_read<0> then poison, 0 wait_group<0>
  std::uint32_t mask;          // tensor_multicast: the receivers
  std::uint32_t issuer;        // tensor_multicast: the issuing CTA rank
  std::uint32_t expect_tx;     // loads: transaction_bytes(spec)
  std::uint32_t region_bytes;  // loads: guard | image | guard; store: the image (16-byte rounded)
  std::uint64_t out_offset;    // loads: the region in the output arena; store: the image's source
};

// Copies the job's coordinates (and offsets) into the fixed-size arrays a copy takes. (Constant
// indices only after unrolling: no local memory.)
template <int R>
__device__ __forceinline__ void job_coords(const std::int32_t (&from)[kMaxRank],
                                           std::int32_t (&to)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
    to[i] = from[i];
}
template <int R>
__device__ __forceinline__ void job_offsets(const std::uint16_t (&from)[3],
                                            std::uint16_t (&to)[R - 2]) {
#pragma unroll
  for (int i = 0; i < R - 2; ++i)
    to[i] = from[i];
}

// The start shared by the tensor load kernels: poison the region, init the barrier.
__device__ __forceinline__ std::byte* poison_and_init(const TensorJob& job, Barrier& bar) {
  std::byte* region = aligned_dynamic_smem();
  fill_words(region, job.region_bytes, kPoisonWord);
  fence_proxy_async_shared();
  if (threadIdx.x == 0) {
    bar.init(1);
    fence_barrier_init();
  }
  __syncthreads();
  return region;
}

// Part 4: one block per job.
__global__ void __launch_bounds__(kThreads)
    prefetch_load_kernel(const TensorMap* maps, const TensorJob* jobs, std::byte* out,
                         std::uint32_t* status, long long wait_cycles) {
  __shared__ Barrier bar;
  const TensorJob& job = jobs[blockIdx.x];
  std::byte* region = poison_and_init(job, bar);
  std::byte* image = region + kGuardBytes;
  if (threadIdx.x == 0) {
    const TensorMap* map = maps + job.map;
    // The batch's descriptors are rewritten by cudaMemcpy between launches at the same addresses:
    // acquire through the tensormap proxy so that no copy uses one cached from an earlier batch.
    acquire_descriptor(map);
    prefetch_descriptor(map);
    const auto hint = static_cast<CacheHint>(job.hint);
    if (job.im2col != 0) {
      dispatch_rank<3>(job.rank, [&](auto r) {
        constexpr int R = decltype(r)::value;
        std::int32_t c[R], e[R];
        std::uint16_t o[R - 2], eo[R - 2];
        job_coords<R>(job.coords, c);
        job_coords<R>(job.extra_coords, e);
        job_offsets<R>(job.offsets, o);
        job_offsets<R>(job.extra_offsets, eo);
        if (job.prefetch != kNoPrefetch) {
          prefetch_im2col<R>(map, e, eo);
          prefetch_im2col<R>(map, c, o);
        }
        bar.arrive_expect_tx(job.expect_tx);
        load_im2col<R>(image, map, bar, c, o, hint);
      });
    } else {
      dispatch_rank(job.rank, [&](auto r) {
        constexpr int R = decltype(r)::value;
        std::int32_t c[R], e[R];
        job_coords<R>(job.coords, c);
        job_coords<R>(job.extra_coords, e);
        if (job.prefetch == kPrefetchPlain) {
          prefetch_tile<R>(map, e);
          prefetch_tile<R>(map, c);
        } else if (job.prefetch == kPrefetchHint) {
          const auto ph = static_cast<CacheHint>(job.prefetch_hint);
          prefetch_tile<R>(map, e, ph);
          prefetch_tile<R>(map, c, ph);
        }
        bar.arrive_expect_tx(job.expect_tx);
        load<R>(image, map, bar, c, hint);
      });
    }
  }
  if (!wait_bounded(bar, 0, wait_cycles)) status[blockIdx.x] = 1;
  __syncthreads();
  copy_words(out + job.out_offset, region, job.region_bytes);
}

// Part 5: one cluster per job; CTA `issuer` issues one multicast copy to `mask`.
__global__ void __launch_bounds__(kThreads)
    tensor_multicast_kernel(const TensorMap* maps, const TensorJob* jobs, std::byte* out,
                            std::uint32_t* status, long long wait_cycles) {
  __shared__ Barrier bar;
  const std::uint32_t me = cluster_cta_rank();
  const TensorJob& job = jobs[blockIdx.x / cluster_size()];
  std::byte* region = poison_and_init(job, bar);
  std::byte* image = region + kGuardBytes;
  cluster_sync();  // every receiver's barrier and poison are in place before the copy
  const bool receiver = ((job.mask >> me) & 1u) != 0;
  if (threadIdx.x == 0) {
    if (receiver) bar.arrive_expect_tx(job.expect_tx);
    if (me == job.issuer) {
      const TensorMap* map = maps + job.map;
      acquire_descriptor(map);
      const auto mask = static_cast<std::uint16_t>(job.mask);
      if (job.im2col != 0) {
        dispatch_rank<3>(job.rank, [&](auto r) {
          constexpr int R = decltype(r)::value;
          std::int32_t c[R];
          std::uint16_t o[R - 2];
          job_coords<R>(job.coords, c);
          job_offsets<R>(job.offsets, o);
          load_im2col_multicast<R>(image, map, bar, c, o, mask);
        });
      } else {
        dispatch_rank(job.rank, [&](auto r) {
          constexpr int R = decltype(r)::value;
          std::int32_t c[R];
          job_coords<R>(job.coords, c);
          load_multicast<R>(image, map, bar, c, mask, static_cast<CacheHint>(job.hint));
        });
      }
    }
  }
  if (receiver && !wait_bounded(bar, 0, wait_cycles)) status[blockIdx.x] = 1;
  __syncthreads();
  copy_words(out + job.out_offset + std::size_t{me} * job.region_bytes, region, job.region_bytes);
  cluster_sync();  // no CTA leaves while the multicast may still target its shared memory
}

// Part 6: one block per job.
__global__ void __launch_bounds__(kThreads)
    store_hint_kernel(const TensorMap* maps, const TensorJob* jobs, const std::byte* images) {
  const TensorJob& job = jobs[blockIdx.x];
  std::byte* smem = aligned_dynamic_smem();
  copy_words(smem, images + job.out_offset, job.region_bytes);
  fence_proxy_async_shared();  // ordinary writes of the source, before the store reads it
  __syncthreads();
  if (threadIdx.x == 0) {
    const TensorMap* map = maps + job.map;
    acquire_descriptor(map);
    dispatch_rank(job.rank, [&](auto r) {
      constexpr int R = decltype(r)::value;
      std::int32_t c[R];
      job_coords<R>(job.coords, c);
      store<R>(map, smem, c, static_cast<CacheHint>(job.hint));
    });
    commit_group();
    if (job.wait_read != 0) {
      wait_group_read<0>();
    } else {
      wait_group<0>();
    }
  }
  __syncthreads();
  // After wait_group_read the source may be reused: a store still reading it would write poison.
  if (job.wait_read != 0) fill_words(smem, job.region_bytes, kPoisonWord);
}

// One descriptor and one copy through it.
struct TensorCase : DrawnSpec {
  std::int64_t index = 0;
  std::uint64_t seed = 0;
  Part part = Part::kPrefetchLoad;
  std::array<std::int32_t, kMaxRank> coords{}, extra_coords{};
  std::array<std::uint16_t, kMaxRank - 2> offsets{}, extra_offsets{};
  PrefetchKind prefetch = kNoPrefetch;
  CacheHint prefetch_hint = CacheHint::kEvictNormal;
  CacheHint hint = CacheHint::kNone;
  bool wait_read = false;
  int cluster = 1;
  std::uint16_t mask = 1;
  int issuer = 0;

  // Filled when the batch is laid out.
  std::size_t footprint = 0, slot_bytes = 0, global_offset = 0;
  TensorMap map{};
  bool encoded = false;

  bool im2col() const { return spec.mode == Mode::kIm2col; }
  std::span<const std::int32_t> coord_span() const {
    return {coords.data(), static_cast<std::size_t>(spec.rank)};
  }
  std::span<const std::uint16_t> offset_span() const {
    return {offsets.data(), static_cast<std::size_t>(im2col() ? spec.rank - 2 : 0)};
  }
};

// Draws a valid spec of the mode (tiled, or im2col rank 3..5) within the tests' size budgets.
void draw_tensor_spec(Rng& rng, TensorCase& c, bool im2col) {
  SpecOptions o;
  o.interleave_chance = 0;  // interleaved layouts are open: tests/gpu/probes.txt group D
  o.max_box_bytes = 64 * 1024;
  o.max_footprint_bytes = 256 * 1024;
  if (im2col) {
    o.mode = Mode::kIm2col;
    o.min_rank = 3;
    draw_valid_spec(rng, c, [&](Rng& r) { return random_im2col_spec(r, o); });
  } else {
    draw_valid_spec(rng, c, [&](Rng& r) { return random_tiled_spec(r, o); });
  }
}

// Coordinates (and offsets) of a load: anywhere for tiled boxes (out of bounds included), in the
// pixel bounding box for im2col (outside it the PTX ISA leaves the result undefined).
void draw_load_coords(Rng& rng, const TensorCase& c, std::array<std::int32_t, kMaxRank>& coords,
                      std::array<std::uint16_t, kMaxRank - 2>& offsets) {
  if (c.im2col()) {
    coords = random_im2col_coords(rng, c.spec);
    offsets = random_im2col_offsets(rng, c.spec);
  } else {
    coords = random_tiled_coords(rng, c.spec, Where::kAnywhere);
  }
}

CacheHint random_hint(Rng& rng) {
  return static_cast<CacheHint>(rng.range(0, 3));
}

TensorCase make_prefetch_case(std::int64_t index, std::uint64_t seed) {
  TensorCase c;
  c.index = index;
  c.seed = seed;
  c.part = Part::kPrefetchLoad;
  Rng rng(seed);
  draw_tensor_spec(rng, c, index % 5 >= 3);  // 40% im2col
  if (!c.valid) return c;
  draw_load_coords(rng, c, c.coords, c.offsets);
  draw_load_coords(rng, c, c.extra_coords, c.extra_offsets);
  c.hint = random_hint(rng);
  const std::int64_t p = rng.range(0, 99);
  c.prefetch = p < 15 ? kNoPrefetch : (p < 55 || c.im2col()) ? kPrefetchPlain : kPrefetchHint;
  c.prefetch_hint = static_cast<CacheHint>(rng.range(1, 3));
  return c;
}

TensorCase make_tensor_mc_case(std::int64_t index, std::uint64_t seed) {
  TensorCase c;
  c.index = index;
  c.seed = seed;
  c.part = Part::kTensorMulticast;
  c.cluster = index % 2 == 0 ? 2 : 4;
  Rng rng(seed);
  c.mask = static_cast<std::uint16_t>(rng.range(1, (1 << c.cluster) - 1));
  c.issuer = static_cast<int>(rng.range(0, c.cluster - 1));
  draw_tensor_spec(rng, c, index % 5 < 3);  // 60% im2col
  if (!c.valid) return c;
  draw_load_coords(rng, c, c.coords, c.offsets);
  if (!c.im2col()) c.hint = random_hint(rng);  // load_im2col_multicast has no hinted form
  return c;
}

TensorCase make_store_hint_case(std::int64_t index, std::uint64_t seed) {
  TensorCase c;
  c.index = index;
  c.seed = seed;
  c.part = Part::kStoreHint;
  Rng rng(seed);
  draw_tensor_spec(rng, c, false);
  if (!c.valid) return c;
  // Start coordinates >= 0: the PTX ISA leaves negative starts undefined for tensor stores.
  c.coords = random_tiled_coords(rng, c.spec, Where::kNonNegative);
  c.hint = random_hint(rng);
  c.wait_read = rng.chance(0.5);
  return c;
}

std::string tensor_category(const TensorCase& c) {
  std::string cat = part_name(c.part);
  if (c.part == Part::kTensorMulticast) cat += "/c" + std::to_string(c.cluster);
  if (c.part == Part::kPrefetchLoad) cat += "/" + std::string(kPrefetchNames[c.prefetch]);
  if (c.part != Part::kTensorMulticast || !c.im2col())
    cat += "/hint-" + std::string(hint_name(c.hint));
  cat += "/" + load_category(c.spec, c.coord_span());
  if (c.part == Part::kStoreHint && c.wait_read) cat += "/wait-read";
  return cat;
}

Json tensor_record(const TensorCase& c) {
  Json rec;
  rec.str("part", part_name(c.part))
      .num("case", c.index)
      .num("case_seed", c.seed)
      .str("spec", to_string(c.spec))
      .nums("coords", c.coord_span())
      .str("hint", hint_name(c.hint))
      .str("l2_promotion", to_string(c.spec.l2_promotion));
  if (c.im2col()) rec.nums("offsets", c.offset_span());
  if (c.part == Part::kPrefetchLoad) {
    rec.str("prefetch", kPrefetchNames[c.prefetch])
        .nums("extra_coords", std::span<const std::int32_t>(c.extra_coords.data(),
                                                            static_cast<std::size_t>(c.spec.rank)));
    if (c.prefetch == kPrefetchHint) rec.str("prefetch_hint", hint_name(c.prefetch_hint));
    if (c.im2col()) {
      rec.nums("extra_offsets",
               std::span<const std::uint16_t>(c.extra_offsets.data(),
                                              static_cast<std::size_t>(c.spec.rank - 2)));
    }
  }
  if (c.part == Part::kTensorMulticast) {
    rec.num("cluster", c.cluster).num("mask", c.mask).num("issuer", c.issuer);
  }
  if (c.part == Part::kStoreHint) rec.num("wait_read", c.wait_read);
  return rec;
}

// Lays the tensors of `cases` out in one arena (256-byte-aligned slots), fills each slot with the
// case's random data (or poison: the destination of a store), uploads it and encodes each case's
// descriptor at its slot. Cases without a valid spec, or whose encoding fails, are left out
// (counted / recorded). Returns the host copy of the arena.
std::vector<std::byte> prepare_tensors(Context& ctx, Totals& totals, std::vector<TensorCase>& cases,
                                       DeviceBuffer& d_global, bool poison) {
  std::size_t arena = 0;
  for (TensorCase& c : cases) {
    if (!c.valid) continue;
    c.footprint = model::global_footprint_bytes(c.spec);
    c.slot_bytes = align_up(std::max<std::size_t>(c.footprint, span_bytes(c.spec)) + 256, 256);
    c.global_offset = arena;
    arena += c.slot_bytes;
  }
  arena += 4096;  // L2 promotion may fetch a little past the last tensor
  std::vector<std::byte> data(arena, kPoison);
  if (!poison) {
    parallel_for(cases.size(), [&](std::size_t k) {
      const TensorCase& c = cases[k];
      if (!c.valid) return;
      Rng rng(derive_seed(c.seed, 0xDA7Au));
      rng.fill(std::span<std::byte>(data).subspan(c.global_offset, c.slot_bytes));
    });
  }
  d_global.resize(arena);
  d_global.upload(data);
  for (TensorCase& c : cases) {
    if (!c.valid) {
      ++totals[c.part].skipped;
      continue;
    }
    c.spec.address = d_global.data() + c.global_offset;
    try {
      c.map = make_tensor_map(c.spec);
      c.encoded = true;
    } catch (const Error& e) {
      Json j = tensor_record(c);
      j.num("driver_code", e.driver_code()).str("error", e.what());
      ctx.report.failure("encode-failed", std::string("encode-failed/") + part_name(c.part), j);
    }
  }
  return data;
}

// The job of a case (map index and layout fields are set by the caller).
TensorJob tensor_job(const TensorCase& c) {
  TensorJob j{};
  j.rank = c.spec.rank;
  j.im2col = c.im2col() ? 1 : 0;
  for (int d = 0; d < kMaxRank; ++d) {
    j.coords[d] = c.coords[static_cast<std::size_t>(d)];
    j.extra_coords[d] = c.extra_coords[static_cast<std::size_t>(d)];
  }
  for (int d = 0; d < 3; ++d) {
    j.offsets[d] = c.offsets[static_cast<std::size_t>(d)];
    j.extra_offsets[d] = c.extra_offsets[static_cast<std::size_t>(d)];
  }
  j.prefetch = c.prefetch;
  j.prefetch_hint = static_cast<std::int32_t>(c.prefetch_hint);
  j.hint = static_cast<std::int32_t>(c.hint);
  j.wait_read = c.wait_read ? 1 : 0;
  j.mask = c.mask;
  j.issuer = static_cast<std::uint32_t>(c.issuer);
  j.expect_tx = static_cast<std::uint32_t>(transaction_bytes(c.spec));
  return j;
}

void add_coverage(Totals& totals, const TensorCase& c) {
  const std::string part = part_name(c.part);
  const std::string mode = c.im2col() ? "im2col" : "tiled";
  ++totals.coverage[part + "/" + mode + "/hint-" + std::string(hint_name(c.hint))];
  ++totals.coverage[part + "/l2-" + std::string(to_string(c.spec.l2_promotion))];
  if (c.part == Part::kPrefetchLoad) {
    ++totals.coverage[part + "/" + mode + "/" + kPrefetchNames[c.prefetch]];
  }
  if (!c.im2col()) {
    ++totals.coverage[part + "/box-" +
                      std::string(to_string(tiled_placement(c.spec, c.coord_span())))];
  }
}

// The model's image of the case's load into `image` (smem_bytes(spec) bytes).
void model_load(const TensorCase& c, std::span<const std::byte> global,
                std::span<std::byte> image) {
  if (c.im2col()) {
    model::load_im2col(c.spec, global, c.coord_span(), c.offset_span(), image);
  } else {
    model::load_box(c.spec, global, c.coord_span(), image);
  }
}

// Parts 4 and 5: loads into poisoned regions (one per CTA), compared with the model.
void run_tensor_load_group(Context& ctx, Totals& totals, std::vector<TensorCase>& cases, Part part,
                           int cluster) {
  Report& report = ctx.report;
  DeviceBuffer d_in;
  const std::vector<std::byte> input = prepare_tensors(ctx, totals, cases, d_in, false);
  const auto ctas = static_cast<std::size_t>(cluster);
  const std::size_t max_dynamic = static_cast<std::size_t>(ctx.prop.sharedMemPerBlockOptin) - 64;
  std::vector<TensorMap> maps;
  std::vector<TensorJob> jobs;
  std::vector<std::size_t> job_case;
  std::size_t out_bytes = 0, max_region = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const TensorCase& c = cases[k];
    if (!c.encoded) continue;
    const std::size_t region = kGuardBytes + align_up(model::smem_bytes(c.spec), 16) + kGuardBytes;
    if (dynamic_smem_for(region) > max_dynamic) {
      Json j = tensor_record(c);
      j.num("region_bytes", region);
      report.write("too-large-for-smem", "info", j, false);
      ++totals[part].skipped;
      continue;
    }
    TensorJob j = tensor_job(c);
    j.map = static_cast<std::uint32_t>(maps.size());
    j.region_bytes = static_cast<std::uint32_t>(region);
    j.out_offset = out_bytes;
    out_bytes += region * ctas;
    max_region = std::max(max_region, region);
    maps.push_back(c.map);
    jobs.push_back(j);
    job_case.push_back(k);
    add_coverage(totals, c);
  }
  if (jobs.empty()) return;
  const std::size_t n = jobs.size();
  DeviceBuffer d_maps(n * sizeof(TensorMap)), d_jobs(n * sizeof(TensorJob)), d_out(out_bytes);
  DeviceBuffer d_status(n * ctas * sizeof(std::uint32_t));
  d_maps.upload(bytes_of(maps));
  d_jobs.upload(bytes_of(jobs));
  TMA_CHECK_CUDA(cudaMemset(d_out.data(), 0x5A, out_bytes));
  TMA_CHECK_CUDA(cudaMemset(d_status.data(), 0, d_status.size()));
  const std::string what =
      batch_name(part, cases[job_case.front()].index, cases[job_case.back()].index, cluster);
  if (part == Part::kPrefetchLoad) {
    launch(ctx, part, what, prefetch_load_kernel, n, 1, dynamic_smem_for(max_region),
           d_maps.as<const TensorMap>(), d_jobs.as<const TensorJob>(), d_out.data(),
           d_status.as<std::uint32_t>(), totals.wait_cycles);
  } else {
    launch(ctx, part, what, tensor_multicast_kernel, n * ctas, static_cast<unsigned>(cluster),
           dynamic_smem_for(max_region), d_maps.as<const TensorMap>(), d_jobs.as<const TensorJob>(),
           d_out.data(), d_status.as<std::uint32_t>(), totals.wait_cycles);
  }
  std::vector<std::byte> out(out_bytes);
  d_out.download(out);
  const auto status = download_status(d_status, n * ctas);

  std::atomic<std::int64_t> bad{0}, timeouts{0};
  parallel_for(n, [&](std::size_t j) {
    const TensorCase& c = cases[job_case[j]];
    const TensorJob& job = jobs[j];
    const std::string cat = tensor_category(c);
    const Json rec = tensor_record(c);
    // The image every receiver must hold, between poisoned guards.
    std::vector<std::byte> loaded(job.region_bytes, kPoison);
    try {
      model_load(c, std::span<const std::byte>(input).subspan(c.global_offset, c.footprint),
                 std::span<std::byte>(loaded).subspan(kGuardBytes, model::smem_bytes(c.spec)));
    } catch (const std::exception& e) {
      Json r = rec;
      r.str("error", e.what());
      report.failure("model-error", "model-error/" + cat, r);
      ++bad;
      return;
    }
    const std::vector<std::byte> untouched(job.region_bytes, kPoison);
    bool ok = true;
    for (std::size_t r = 0; r < ctas; ++r) {
      const bool receiver = part == Part::kPrefetchLoad || ((c.mask >> r) & 1u) != 0;
      const bool timed_out = status[j * ctas + r] != 0;
      if (timed_out) ++timeouts;
      Json rr = rec;
      rr.num("expect_tx", job.expect_tx)
          .num("smem_bytes", model::smem_bytes(c.spec))
          .num("image_offset", kGuardBytes);
      if (ctas > 1) rr.num("cta", r).num("receiver", receiver);
      ok = check_result(report, cat + (ctas > 1 ? (receiver ? "/receiver" : "/non-receiver") : ""),
                        rr,
                        std::span<const std::byte>(out).subspan(
                            job.out_offset + r * job.region_bytes, job.region_bytes),
                        receiver ? loaded : untouched, timed_out) &&
           ok;
    }
    if (!ok) ++bad;
  });
  tally(ctx, totals, part, static_cast<std::int64_t>(n), bad, timeouts);
}

void run_prefetch_batch(Context& ctx, Totals& totals, std::vector<TensorCase>& cases) {
  run_tensor_load_group(ctx, totals, cases, Part::kPrefetchLoad, 1);
}

void run_tensor_mc_batch(Context& ctx, Totals& totals, std::vector<TensorCase>& cases) {
  for (const int cluster : {2, 4}) {
    std::vector<TensorCase> group;
    for (const TensorCase& c : cases) {
      if (c.cluster == cluster) group.push_back(c);
    }
    if (!group.empty()) run_tensor_load_group(ctx, totals, group, Part::kTensorMulticast, cluster);
  }
}

// Part 6: stores from random images into poisoned tensors, compared with model::store_box.
void run_store_hint_batch(Context& ctx, Totals& totals, std::vector<TensorCase>& cases) {
  Report& report = ctx.report;
  DeviceBuffer d_global;
  const std::vector<std::byte> before = prepare_tensors(ctx, totals, cases, d_global, true);
  const std::size_t max_dynamic = static_cast<std::size_t>(ctx.prop.sharedMemPerBlockOptin) - 64;
  std::vector<TensorMap> maps;
  std::vector<TensorJob> jobs;
  std::vector<std::size_t> job_case;
  std::size_t image_arena = 0, max_image = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const TensorCase& c = cases[k];
    if (!c.encoded) continue;
    const std::size_t image = align_up(model::smem_bytes(c.spec), 16);
    if (dynamic_smem_for(image) > max_dynamic) {
      Json j = tensor_record(c);
      j.num("smem_bytes", image);
      report.write("too-large-for-smem", "info", j, false);
      ++totals[Part::kStoreHint].skipped;
      continue;
    }
    TensorJob j = tensor_job(c);
    j.map = static_cast<std::uint32_t>(maps.size());
    j.region_bytes = static_cast<std::uint32_t>(image);
    j.out_offset = image_arena;
    image_arena += image;
    max_image = std::max(max_image, image);
    maps.push_back(c.map);
    jobs.push_back(j);
    job_case.push_back(k);
    add_coverage(totals, c);
  }
  if (jobs.empty()) return;
  const std::size_t n = jobs.size();
  std::vector<std::byte> images(image_arena);
  parallel_for(n, [&](std::size_t j) {
    Rng rng(derive_seed(cases[job_case[j]].seed, 0x1AA6Eu));
    rng.fill(std::span<std::byte>(images).subspan(jobs[j].out_offset, jobs[j].region_bytes));
  });
  DeviceBuffer d_maps(n * sizeof(TensorMap)), d_jobs(n * sizeof(TensorJob)), d_images(image_arena);
  d_maps.upload(bytes_of(maps));
  d_jobs.upload(bytes_of(jobs));
  d_images.upload(images);
  launch(ctx, Part::kStoreHint,
         batch_name(Part::kStoreHint, cases[job_case.front()].index, cases[job_case.back()].index),
         store_hint_kernel, n, 1, dynamic_smem_for(max_image), d_maps.as<const TensorMap>(),
         d_jobs.as<const TensorJob>(), static_cast<const std::byte*>(d_images.data()));
  std::vector<std::byte> after(d_global.size());
  d_global.download(after);

  std::atomic<std::int64_t> bad{0};
  parallel_for(n, [&](std::size_t j) {
    const TensorCase& c = cases[job_case[j]];
    const std::string cat = tensor_category(c);
    Json rec = tensor_record(c);
    rec.num("footprint", c.footprint);
    const std::span<const std::byte> image(images.data() + jobs[j].out_offset,
                                           model::smem_bytes(c.spec));
    std::vector<std::byte> expected(
        before.begin() + static_cast<std::ptrdiff_t>(c.global_offset),
        before.begin() + static_cast<std::ptrdiff_t>(c.global_offset + c.slot_bytes));
    try {
      model::store_box(c.spec, image, c.coord_span(),
                       std::span<std::byte>(expected.data(), c.footprint));
    } catch (const std::exception& e) {
      rec.str("error", e.what());
      report.failure("model-error", "model-error/" + cat, rec);
      ++bad;
      return;
    }
    if (!check_result(report, cat, rec,
                      std::span<const std::byte>(after).subspan(c.global_offset, c.slot_bytes),
                      expected, false, image)) {
      ++bad;
    }
  });
  tally(ctx, totals, Part::kStoreHint, static_cast<std::int64_t>(n), bad, 0);
}

}  // namespace

int main(int argc, char** argv) {
  return run_test(
      "bulk", argc, argv, reinterpret_cast<const void*>(&probe_kernel), [](Context& ctx) {
        Totals totals;
        totals.wait_cycles = ctx.cycles(1.0);
        run_part<BulkLoadCase>(ctx, Part::kBulkLoad, make_bulk_load_case,
                               [&](auto& cases) { run_bulk_load_batch(ctx, totals, cases); });
        run_part<BulkStoreCase>(ctx, Part::kBulkStore, make_bulk_store_case,
                                [&](auto& cases) { run_bulk_store_batch(ctx, totals, cases); });
        run_part<BulkMcCase>(ctx, Part::kBulkMulticast, make_bulk_mc_case,
                             [&](auto& cases) { run_bulk_mc_batch(ctx, totals, cases); });
        run_part<TensorCase>(ctx, Part::kPrefetchLoad, make_prefetch_case,
                             [&](auto& cases) { run_prefetch_batch(ctx, totals, cases); });
        run_part<TensorCase>(ctx, Part::kTensorMulticast, make_tensor_mc_case,
                             [&](auto& cases) { run_tensor_mc_batch(ctx, totals, cases); });
        run_part<TensorCase>(ctx, Part::kStoreHint, make_store_hint_case,
                             [&](auto& cases) { run_store_hint_batch(ctx, totals, cases); });

        std::string line;
        Json cov;
        for (const auto& [key, n] : totals.coverage) {
          line += " " + key + "=" + std::to_string(n);
          cov.num(key, n);
        }
        ctx.report.write("coverage", "info", cov, false);
        std::printf("[gpu] bulk: coverage (cases):%s\n", line.c_str());
        std::int64_t cases = 0, bad = 0, timeouts = 0, skipped = 0;
        std::string parts;
        for (int p = 0; p < kParts; ++p) {
          const PartTotals& t = totals.part[static_cast<std::size_t>(p)];
          std::printf(
              "[gpu] bulk: part %-16s %6lld cases, %lld failed (%lld timeouts), %lld "
              "skipped\n",
              kPartNames[static_cast<std::size_t>(p)], static_cast<long long>(t.cases),
              static_cast<long long>(t.mismatches), static_cast<long long>(t.timeouts),
              static_cast<long long>(t.skipped));
          cases += t.cases;
          bad += t.mismatches;
          timeouts += t.timeouts;
          skipped += t.skipped;
          parts += " " + std::string(kPartNames[static_cast<std::size_t>(p)]) + "=" +
                   std::to_string(t.cases);
        }
        // The last line run_gpu_tests.sh shows: mismatches first (its column is 90 wide).
        std::printf("[gpu] bulk: %lld mismatches (%lld timeouts) in %lld cases:%s%s\n",
                    static_cast<long long>(bad), static_cast<long long>(timeouts),
                    static_cast<long long>(cases), parts.c_str(),
                    skipped > 0 ? ("; " + std::to_string(skipped) + " skipped").c_str() : "");
        return bad == 0 && cases > 0;
      });
}
