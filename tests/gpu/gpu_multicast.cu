// gpu_multicast: multicast tiled loads in clusters of 2 and 4 CTAs against model::multicast_load.
//
// Two patterns, each one cluster per case:
//   single issuer: every CTA initializes its own barrier and, if its rank is in the (random,
//     non-empty) mask, expects the box bytes; a cluster barrier; CTA 0 (in the mask or not)
//     issues one load_multicast to the mask; receivers wait; every CTA dumps its shared memory.
//     CTAs outside the mask must still hold their poison.
//   slices (the usual GEMM pattern): each CTA r loads slice r of a larger box (the box moved by
//     r x box along the outermost dimension) and multicasts it to every CTA, at offset
//     r x pitch; every CTA expects cluster_size slices and ends up with all of them.
// Each CTA's region is guard | image area | guard, poisoned before the copies; every byte is
// compared with the model.
#include <array>
#include <string>
#include <vector>

#include "../common/random_spec.hpp"
#include "device_util.hpp"
#include "gpu_common.hpp"
#include "spec_draw.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/model/model.hpp"

namespace {

using namespace tma;
using namespace tma::testing;

__global__ void probe_kernel() {}

constexpr std::int64_t kClusters = 3000;
constexpr std::int64_t kQuickClusters = 120;
constexpr std::size_t kBatch = 256;  // clusters per launch

enum Pattern : std::int32_t { kSingleIssuer = 0, kSlices = 1 };

struct McJob {
  std::uint32_t map;
  std::int32_t rank;
  std::int32_t coords[kMaxRank];  // single issuer: the box; slices: slice 0
  std::int32_t pattern;
  std::uint32_t mask;      // single issuer: the receivers
  std::int32_t slice_dim;  // slices: CTA r adds r * slice_step to coords[slice_dim]
  std::int32_t slice_step;
  std::uint32_t expect_tx;     // bytes each receiving CTA's barrier expects
  std::uint32_t slice_pitch;   // slices: bytes between consecutive slices in the image area
  std::uint32_t region_bytes;  // per CTA: guard | image area | guard
  std::uint64_t out_offset;    // CTA 0's region; CTA r's follows at r * region_bytes
};

// One cluster per job; 128 threads per CTA.
__global__ void __launch_bounds__(128)
    multicast_kernel(const TensorMap* maps, const McJob* jobs, std::byte* out,
                     std::uint32_t* status, long long wait_cycles) {
  __shared__ Barrier bar;
  const std::uint32_t me = cluster_cta_rank();
  const std::uint32_t ctas = cluster_size();
  const McJob job = jobs[blockIdx.x / ctas];
  std::byte* region = aligned_dynamic_smem();
  std::byte* image = region + kGuardBytes;
  fill_words(region, job.region_bytes, kPoisonWord);
  fence_proxy_async_shared();  // the poison lands before any copy's bytes
  if (threadIdx.x == 0) {
    bar.init(1);
    fence_barrier_init();
  }
  __syncthreads();
  // Every CTA's barrier is initialized (and its poison written) before any copy targets it.
  cluster_sync();
  const bool receiver = job.pattern == kSlices || ((job.mask >> me) & 1u) != 0;
  if (threadIdx.x == 0) {
    if (receiver) bar.arrive_expect_tx(job.expect_tx);
    const TensorMap* map = maps + job.map;
    // The batch's descriptors sit in global memory and are rewritten by cudaMemcpy between
    // launches at the same addresses: acquire through the tensormap proxy so that no copy uses a
    // descriptor the TMA unit cached during an earlier batch.
    acquire_descriptor(map);
    dispatch_rank(job.rank, [&](auto r) {
      constexpr int R = decltype(r)::value;
      // Slices: CTA `me` moves its box by me * slice_step along slice_dim. (No run-time index
      // into c[]: that would put the array in local memory.)
      const std::int32_t shift =
          job.pattern == kSlices ? static_cast<std::int32_t>(me) * job.slice_step : 0;
      std::int32_t c[R];
#pragma unroll
      for (int i = 0; i < R; ++i)
        c[i] = job.coords[i] + (i == job.slice_dim ? shift : 0);
      if (job.pattern == kSingleIssuer) {
        if (me == 0) load_multicast<R>(image, map, bar, c, static_cast<std::uint16_t>(job.mask));
      } else {
        load_multicast<R>(image + me * job.slice_pitch, map, bar, c, cta_mask_all(ctas));
      }
    });
  }
  const bool ok = !receiver || wait_bounded(bar, 0, wait_cycles);
  if (!ok) atomicOr(&status[blockIdx.x], 1u);
  __syncthreads();
  copy_words(out + job.out_offset + std::size_t{me} * job.region_bytes, region, job.region_bytes);
  // No CTA leaves while a peer's multicast may still target its shared memory.
  cluster_sync();
}

struct McCase : DrawnSpec {
  std::int64_t index = 0;
  std::uint64_t case_seed = 0;
  int cluster = 2;
  Pattern pattern = kSingleIssuer;
  std::uint16_t mask = 1;
  std::array<std::int32_t, kMaxRank> coords{};
  std::size_t footprint = 0, slot_bytes = 0, global_offset = 0;
  std::size_t pitch = 0, region = 0;
};

McCase make_case(std::int64_t index, std::uint64_t case_seed, double interleave) {
  McCase c;
  c.index = index;
  c.case_seed = case_seed;
  Rng rng(case_seed);
  c.cluster = index % 2 == 0 ? 2 : 4;
  c.pattern = index % 3 == 2 ? kSlices : kSingleIssuer;
  c.mask = static_cast<std::uint16_t>(rng.range(1, (1 << c.cluster) - 1));
  SpecOptions o;
  o.interleave_chance = interleave;  // finding 12: 12% by default (--interleave P)
  o.max_box_bytes =
      c.pattern == kSlices ? (64u * 1024u) / static_cast<unsigned>(c.cluster) : 64u * 1024u;
  o.max_footprint_bytes = 256 * 1024;
  draw_valid_spec(rng, c, [&](Rng& r) { return random_tiled_spec(r, o); });
  if (c.valid) c.coords = random_tiled_coords(rng, c.spec);
  return c;
}

std::string category(const McCase& c, std::span<const std::int32_t> coords) {
  std::string cat = "multicast/c" + std::to_string(c.cluster);
  if (c.pattern == kSlices) {
    cat += "/slices";
  } else {
    cat += (c.mask & 1u) != 0 ? "/issuer-in-mask" : "/issuer-not-in-mask";
  }
  cat += "/e" + std::to_string(element_bytes(c.spec.dtype)) + "/swz-" +
         std::string(to_string(c.spec.swizzle)) + "/il-" +
         std::string(to_string(c.spec.interleave)) + "/" +
         std::string(to_string(tiled_placement(c.spec, coords)));
  return cat;
}

struct Totals {
  std::int64_t clusters = 0, ctas = 0, mismatches = 0, timeouts = 0, skipped = 0;
};

void run_batch(Context& ctx, std::vector<McCase>& cases, int cluster, Totals& totals,
               long long& wait_cycles) {
  Report& report = ctx.report;
  std::size_t arena = 0;
  for (McCase& c : cases) {
    c.footprint = model::global_footprint_bytes(c.spec);
    c.slot_bytes = align_up(std::max<std::size_t>(c.footprint, span_bytes(c.spec)) + 256, 256);
    c.global_offset = arena;
    arena += c.slot_bytes;
    const std::size_t image = model::smem_bytes(c.spec);
    c.pitch = align_up(image, static_cast<std::size_t>(std::max(128, smem_alignment(c.spec))));
    const std::size_t area =
        c.pattern == kSlices ? c.pitch * static_cast<std::size_t>(cluster) : image;
    c.region = kGuardBytes + align_up(area, 16) + kGuardBytes;
  }
  arena += 4096;
  std::vector<std::byte> input(arena);
  parallel_for(cases.size(), [&](std::size_t k) {
    Rng data_rng(derive_seed(cases[k].case_seed, 0xDA7Au));
    data_rng.fill(std::span<std::byte>(input).subspan(cases[k].global_offset, cases[k].slot_bytes));
  });
  DeviceBuffer d_in(arena);
  d_in.upload(input);

  std::vector<TensorMap> maps;
  std::vector<McJob> jobs;
  std::vector<std::size_t> job_case;
  std::size_t out_bytes = 0, max_region = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    McCase& c = cases[k];
    c.spec.address = d_in.data() + c.global_offset;
    TensorMap map{};
    try {
      map = make_tensor_map(c.spec);
    } catch (const Error& e) {
      Json j;
      j.num("case", c.index)
          .str("spec", to_string(c.spec))
          .num("driver_code", e.driver_code())
          .str("error", e.what());
      report.failure("encode-failed", "encode-failed", j);
      continue;
    }
    // Images (padded swizzle rows, or cluster_size slices) past a block's shared memory cannot run.
    if (dynamic_smem_for(c.region) >
        static_cast<std::size_t>(ctx.prop.sharedMemPerBlockOptin) - 64) {
      Json j;
      j.num("case", c.index).str("spec", to_string(c.spec)).num("region_bytes", c.region);
      report.write("too-large-for-smem", "info", j, false);
      continue;
    }
    McJob job{};
    job.map = static_cast<std::uint32_t>(maps.size());
    job.rank = c.spec.rank;
    for (int d = 0; d < kMaxRank; ++d)
      job.coords[d] = c.coords[static_cast<std::size_t>(d)];
    job.pattern = c.pattern;
    job.mask = c.mask;
    job.slice_dim = c.spec.rank - 1;
    job.slice_step = static_cast<std::int32_t>(c.spec.box_inner_first[c.spec.rank - 1]);
    const std::uint64_t tx = transaction_bytes(c.spec);
    job.expect_tx = static_cast<std::uint32_t>(
        c.pattern == kSlices ? tx * static_cast<std::uint64_t>(cluster) : tx);
    job.slice_pitch = static_cast<std::uint32_t>(c.pitch);
    job.region_bytes = static_cast<std::uint32_t>(c.region);
    job.out_offset = out_bytes;
    out_bytes += c.region * static_cast<std::size_t>(cluster);
    max_region = std::max(max_region, c.region);
    maps.push_back(map);
    jobs.push_back(job);
    job_case.push_back(k);
  }
  if (jobs.empty()) return;
  totals.clusters += static_cast<std::int64_t>(jobs.size());
  totals.ctas += static_cast<std::int64_t>(jobs.size()) * cluster;

  DeviceBuffer d_maps(maps.size() * sizeof(TensorMap)), d_jobs(jobs.size() * sizeof(McJob));
  DeviceBuffer d_out(out_bytes), d_status(jobs.size() * static_cast<std::size_t>(cluster) * 4);
  d_maps.upload(bytes_of(maps));
  d_jobs.upload(bytes_of(jobs));
  TMA_CHECK_CUDA(cudaMemset(d_out.data(), 0x5A, out_bytes));
  TMA_CHECK_CUDA(cudaMemset(d_status.data(), 0, d_status.size()));
  const std::size_t smem = dynamic_smem_for(max_region);
  TMA_CHECK_CUDA(cudaFuncSetAttribute(multicast_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(smem)));
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(jobs.size()) * static_cast<unsigned>(cluster));
  config.blockDim = dim3(128);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1]{};
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  TMA_CHECK_CUDA(cudaLaunchKernelEx(&config, multicast_kernel, d_maps.as<const TensorMap>(),
                                    d_jobs.as<const McJob>(), d_out.data(),
                                    d_status.as<std::uint32_t>(), wait_cycles));
  TMA_CHECK_LAUNCH();
  sync_with_watchdog(nullptr, ctx.args.timeout_s,
                     "multicast clusters of " + std::to_string(cluster) + ", cases " +
                         std::to_string(cases.front().index) + ".." +
                         std::to_string(cases.back().index),
                     report);
  std::vector<std::byte> out(out_bytes);
  d_out.download(out);
  std::vector<std::uint32_t> status(jobs.size() * static_cast<std::size_t>(cluster));
  TMA_CHECK_CUDA(
      cudaMemcpy(status.data(), d_status.data(), d_status.size(), cudaMemcpyDeviceToHost));

  std::atomic<std::int64_t> bad{0}, timeouts{0};
  parallel_for(jobs.size(), [&](std::size_t j) {
    const McCase& c = cases[job_case[j]];
    const McJob& job = jobs[j];
    const std::size_t image = model::smem_bytes(c.spec);
    const std::span<const std::int32_t> coords(c.coords.data(),
                                               static_cast<std::size_t>(c.spec.rank));
    const std::span<const std::byte> global(input.data() + c.global_offset, c.footprint);
    // Expected region of every CTA.
    std::vector<std::vector<std::byte>> expected(static_cast<std::size_t>(cluster),
                                                 std::vector<std::byte>(c.region, kPoison));
    const std::string cat = category(c, coords);
    Json rec;
    rec.num("case", c.index)
        .num("case_seed", c.case_seed)
        .num("cluster", cluster)
        .str("pattern", c.pattern == kSlices ? "slices" : "single-issuer")
        .num("mask", c.mask)
        .str("spec", to_string(c.spec))
        .nums("coords", coords)
        .num("expect_tx", job.expect_tx)
        .num("smem_bytes", image)
        .num("slice_pitch", c.pitch)
        .num("image_offset", kGuardBytes);
    try {
      if (c.pattern == kSingleIssuer) {
        const std::vector<std::vector<std::byte>> before(static_cast<std::size_t>(cluster),
                                                         std::vector<std::byte>(image, kPoison));
        const auto after = model::multicast_load(c.spec, global, coords, c.mask, cluster, before);
        for (int r = 0; r < cluster; ++r) {
          std::copy(after[r].begin(), after[r].end(), expected[r].begin() + kGuardBytes);
        }
      } else {
        std::vector<std::byte> area(c.pitch * static_cast<std::size_t>(cluster), kPoison);
        for (int q = 0; q < cluster; ++q) {
          auto cq = c.coords;
          cq[static_cast<std::size_t>(job.slice_dim)] += q * job.slice_step;
          model::load_box(
              c.spec, global, std::span<const std::int32_t>(cq.data(), coords.size()),
              std::span<std::byte>(area).subspan(static_cast<std::size_t>(q) * c.pitch, image));
        }
        for (auto& e : expected)
          std::copy(area.begin(), area.end(), e.begin() + kGuardBytes);
      }
    } catch (const std::exception& e) {
      rec.str("error", e.what());
      report.failure("model-error", "model-error/" + cat, rec);
      ++bad;
      return;
    }
    for (int r = 0; r < cluster; ++r) {
      const std::span<const std::byte> hw(
          out.data() + job.out_offset + static_cast<std::size_t>(r) * c.region, c.region);
      const bool timed_out =
          (status[j * static_cast<std::size_t>(cluster) + static_cast<std::size_t>(r)] & 1u) != 0;
      if (timed_out) ++timeouts;
      const auto diff = compare_bytes(hw, expected[static_cast<std::size_t>(r)]);
      if (!diff && !timed_out) continue;
      ++bad;
      Json rr = rec;
      rr.num("cta", r).num("receiver", c.pattern == kSlices || ((c.mask >> r) & 1u) != 0);
      if (!diff) {
        report.failure("timeout", "timeout/" + cat, rr);
      } else {
        report.mismatch(timed_out ? "timeout" : "mismatch", (timed_out ? "timeout/" : "") + cat, rr,
                        hw, expected[static_cast<std::size_t>(r)], *diff);
      }
    }
  });
  totals.mismatches += bad;
  totals.timeouts += timeouts;
  if (timeouts > 0) wait_cycles = ctx.cycles(0.05);
}

}  // namespace

int main(int argc, char** argv) {
  return run_test(
      "multicast", argc, argv, reinterpret_cast<const void*>(&probe_kernel), [](Context& ctx) {
        const std::int64_t total = ctx.args.count_or(kClusters, kQuickClusters);
        std::vector<std::int64_t> indices;
        for (std::int64_t i = 0; i < std::max(total, ctx.args.only + 1); ++i) {
          if (ctx.selected(i)) indices.push_back(i);
        }
        std::vector<McCase> all(indices.size());
        parallel_for(indices.size(), [&](std::size_t k) {
          all[k] = make_case(indices[k],
                             derive_seed(ctx.report.seed(), static_cast<std::uint64_t>(indices[k])),
                             ctx.args.interleave_or(0.12));
        });
        Totals totals;
        long long wait_cycles = ctx.cycles(1.0);
        for (const int cluster : {2, 4}) {
          std::vector<McCase> group;
          for (const McCase& c : all) {
            if (c.cluster != cluster) continue;
            if (!c.valid) {
              ++totals.skipped;
              continue;
            }
            group.push_back(c);
          }
          for (std::size_t first = 0; first < group.size(); first += kBatch) {
            std::vector<McCase> batch(group.begin() + static_cast<std::ptrdiff_t>(first),
                                      group.begin() + static_cast<std::ptrdiff_t>(
                                                          std::min(group.size(), first + kBatch)));
            run_batch(ctx, batch, cluster, totals, wait_cycles);
          }
        }
        std::printf(
            "[gpu] multicast: %lld descriptors (%lld clusters, %lld CTAs), %lld mismatches (%lld "
            "timeouts)%s\n",
            static_cast<long long>(totals.clusters), static_cast<long long>(totals.clusters),
            static_cast<long long>(totals.ctas), static_cast<long long>(totals.mismatches),
            static_cast<long long>(totals.timeouts),
            totals.skipped > 0 ? (", " + std::to_string(totals.skipped) + " cases skipped").c_str()
                               : "");
        return totals.mismatches == 0 && totals.clusters > 0;
      });
}
