// tmakit GPU tests: the batched hardware-vs-model harness for TMA loads (tiled and im2col).
//
// One launch runs a batch of cases (one descriptor each, several boxes per descriptor): the
// descriptors sit in a global-memory array uploaded before the launch (no in-kernel fence needed),
// each case's tensor is a random slice of one input arena, and each box is one block:
//
//   block: poison its shared-memory region (guard | image | guard), fence.proxy.async, one thread
//          inits the mbarrier, __syncthreads, one thread arrive_expect_tx(transaction bytes) and
//          issues the load, every thread waits (giving up after a bound), the block copies the
//          whole region to its slot of the output arena.
//   host:  the model computes the same region (poisoned guards, model image); every byte must
//   match.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "../common/random_spec.hpp"
#include "device_util.hpp"
#include "gpu_common.hpp"
#include "spec_draw.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/host/validate.hpp"
#include "tma/model/model.hpp"

namespace tma::testing {

// One box of one case, as the kernel sees it.
struct LoadJob {
  std::uint32_t map;  // index of the case's descriptor in the batch's array
  std::int32_t rank;
  std::int32_t coords[kMaxRank];
  std::uint16_t offsets[3];    // im2col only: one per spatial dimension, W first
  std::uint32_t expect_tx;     // bytes the barrier expects: transaction_bytes(spec)
  std::uint32_t region_bytes;  // kGuardBytes + image (rounded up to 16) + kGuardBytes
  std::uint64_t out_offset;    // where the region goes in the output arena (16-byte aligned)
};

// One block per job. status[block] |= 1 when the barrier wait gave up.
template <bool kIm2col>
__global__ void __launch_bounds__(128)
    load_kernel(const TensorMap* maps, const LoadJob* jobs, std::byte* out, std::uint32_t* status,
                long long wait_cycles) {
  __shared__ Barrier bar;
  const LoadJob job = jobs[blockIdx.x];
  std::byte* region = aligned_dynamic_smem();
  std::byte* image = region + kGuardBytes;
  fill_words(region, job.region_bytes, kPoisonWord);
  // The poison is written by the generic proxy, the copy by the async proxy: fence before the
  // barrier so the poison cannot land after the copy's bytes.
  fence_proxy_async_shared();
  if (threadIdx.x == 0) {
    bar.init(1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const TensorMap* map = maps + job.map;
    // The batch's descriptors sit in global memory and are rewritten by cudaMemcpy between
    // launches at the same addresses: acquire through the tensormap proxy so that no copy uses a
    // descriptor the TMA unit cached during an earlier batch.
    acquire_descriptor(map);
    bar.arrive_expect_tx(job.expect_tx);
    if constexpr (kIm2col) {
      dispatch_rank<3>(job.rank, [&](auto r) {
        constexpr int R = decltype(r)::value;
        std::int32_t c[R];
        std::uint16_t o[R - 2];
        for (int i = 0; i < R; ++i)
          c[i] = job.coords[i];
        for (int i = 0; i < R - 2; ++i)
          o[i] = job.offsets[i];
        load_im2col<R>(image, map, bar, c, o);
      });
    } else {
      dispatch_rank(job.rank, [&](auto r) {
        constexpr int R = decltype(r)::value;
        std::int32_t c[R];
        for (int i = 0; i < R; ++i)
          c[i] = job.coords[i];
        load<R>(image, map, bar, c);
      });
    }
  }
  if (!wait_bounded(bar, 0, wait_cycles)) atomicOr(&status[blockIdx.x], 1u);
  __syncthreads();
  copy_words(out + job.out_offset, region, job.region_bytes);
}

// One descriptor and the boxes loaded through it, as the test's generator made it.
struct LoadCase : DrawnSpec {
  std::int64_t index = 0;       // case number within the run (--only replays it)
  std::uint64_t case_seed = 0;  // derive_seed(run seed, index)
  std::vector<std::array<std::int32_t, kMaxRank>> coords;  // one per box
  std::vector<std::array<std::uint16_t, 3>> offsets;       // im2col: one per box

  // Filled by the harness.
  std::size_t footprint = 0;      // model::global_footprint_bytes(spec)
  std::size_t slot_bytes = 0;     // bytes of the input arena that belong to this case
  std::size_t global_offset = 0;  // where they start
  TensorMap map{};
  bool encoded = false;
};

struct LoadHarnessConfig {
  std::string label;        // "load_tiled" / "load_im2col": the summary line's name
  std::int64_t cases = 0;   // descriptors
  std::size_t batch = 512;  // descriptors per launch
  std::function<LoadCase(std::int64_t index, std::uint64_t case_seed)> make_case;
};

// "tiled/e2/swz128/il-none/partial/estride/nan": the group a failure is counted and dumped under.
inline std::string load_category(const TensorMapSpec& s, std::span<const std::int32_t> coords) {
  std::string c = s.mode == Mode::kTiled ? "tiled" : "im2col";
  c += "/e" + std::to_string(element_bytes(s.dtype));
  c += "/swz-" + std::string(to_string(s.swizzle));
  c += "/il-" + std::string(to_string(s.interleave));
  if (s.mode == Mode::kTiled) {
    c += "/" + std::string(to_string(tiled_placement(s, coords)));
    bool strided = false;
    for (int d = 1; d < s.rank; ++d)
      strided = strided || s.element_strides_inner_first[d] != 1;
    if (s.interleave != Interleave::kNone && s.element_strides_inner_first[0] != 1) strided = true;
    if (strided) c += "/estride";
    if (s.interleave == Interleave::kNone && s.element_strides_inner_first[0] != 1)
      c += "/es0-ignored";
  } else {
    c += "/r" + std::to_string(s.rank);
  }
  if (s.oob_fill == OobFill::kNan) c += "/nan";
  return c;
}

// What the descriptors that ran covered: the evidence that every element size, rank, swizzle,
// interleave, fill and box placement was exercised. Printed and written as a "coverage" record.
struct Coverage {
  std::map<std::string, std::int64_t> counts;

  void add(const TensorMapSpec& s, const std::vector<std::array<std::int32_t, kMaxRank>>& coords) {
    ++counts["rank" + std::to_string(s.rank)];
    ++counts["elem" + std::to_string(element_bytes(s.dtype)) + "B"];
    ++counts["dtype-" + std::string(to_string(s.dtype))];
    ++counts["swizzle-" + std::string(to_string(s.swizzle))];
    ++counts["interleave-" + std::string(to_string(s.interleave))];
    ++counts["fill-" + std::string(to_string(s.oob_fill))];
    std::uint32_t max_box = 0, max_stride = 1;
    for (int d = 0; d < s.rank; ++d) {
      max_box = std::max(max_box, s.box_inner_first[d]);
      if (d > 0 || s.interleave != Interleave::kNone) {
        max_stride = std::max(max_stride, s.element_strides_inner_first[d]);
      }
    }
    ++counts["element-stride-max" + std::to_string(max_stride)];
    if (s.mode == Mode::kTiled) {
      ++counts[max_box >= 129  ? "box-dim-129..256"
               : max_box >= 17 ? "box-dim-17..128"
                               : "box-dim-1..16"];
      for (const auto& c : coords) {
        const std::span<const std::int32_t> cs(c.data(), static_cast<std::size_t>(s.rank));
        ++counts["box-" + std::string(to_string(tiled_placement(s, cs)))];
      }
    }
  }

  void print(const std::string& label, Report& report) const {
    std::string line;
    Json j;
    for (const auto& [key, n] : counts) {
      line += " " + key + "=" + std::to_string(n);
      j.num(key, n);
    }
    report.write("coverage", "info", j, false);
    std::printf("[gpu] %s: coverage (descriptors; boxes for box-*):%s\n", label.c_str(),
                line.c_str());
  }
};

// Runs every case of `cfg` through the hardware and the model; returns true when all matched.
template <bool kIm2col>
bool run_load_harness(Context& ctx, const LoadHarnessConfig& cfg) {
  Report& report = ctx.report;
  std::vector<std::int64_t> indices;
  for (std::int64_t i = 0; i < cfg.cases; ++i) {
    if (ctx.selected(i)) indices.push_back(i);
  }
  if (ctx.args.only >= cfg.cases) indices.push_back(ctx.args.only);

  const auto kernel = load_kernel<kIm2col>;
  const std::size_t max_dynamic = static_cast<std::size_t>(ctx.prop.sharedMemPerBlockOptin) - 64;
  TMA_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(max_dynamic)));

  std::int64_t descriptors = 0, boxes = 0, mismatches = 0, timeouts = 0, skipped = 0;
  std::int64_t rejected_generated = 0, rejection_records = 0;
  long long wait_cycles = ctx.cycles(1.0);
  Coverage coverage;
  DeviceBuffer d_maps, d_jobs, d_in, d_out, d_status;

  for (std::size_t first = 0; first < indices.size(); first += cfg.batch) {
    const std::size_t n = std::min(cfg.batch, indices.size() - first);
    std::vector<LoadCase> cases(n);
    parallel_for(n, [&](std::size_t k) {
      const std::int64_t index = indices[first + k];
      cases[k] =
          cfg.make_case(index, derive_seed(report.seed(), static_cast<std::uint64_t>(index)));
      cases[k].index = index;
      cases[k].case_seed = derive_seed(report.seed(), static_cast<std::uint64_t>(index));
    });

    // Lay the tensors out in the input arena (256-byte aligned slots, a little slack after each).
    std::size_t arena = 0;
    for (LoadCase& c : cases) {
      rejected_generated += c.rejected_attempts;
      if (c.rejected_attempts > 0 && rejection_records < 50) {
        ++rejection_records;
        Json j;
        j.num("case", c.index)
            .num("case_seed", c.case_seed)
            .num("attempts", c.rejected_attempts)
            .str("first_rejection", c.first_rejection);
        report.write("validator-rejected-generated", "info", j, false);
      }
      if (!c.valid) {
        ++skipped;
        continue;
      }
      c.footprint = model::global_footprint_bytes(c.spec);
      c.slot_bytes = align_up(std::max<std::size_t>(c.footprint, span_bytes(c.spec)) + 256, 256);
      c.global_offset = arena;
      arena += c.slot_bytes;
    }
    arena += 4096;  // L2 promotion may fetch a little past the last tensor
    std::vector<std::byte> input(arena);
    parallel_for(n, [&](std::size_t k) {
      const LoadCase& c = cases[k];
      if (!c.valid) return;
      Rng data_rng(derive_seed(c.case_seed, 0xDA7Au));
      data_rng.fill(std::span<std::byte>(input).subspan(c.global_offset, c.slot_bytes));
    });
    d_in.resize(arena);
    d_in.upload(input);

    // Encode, and build the jobs.
    std::vector<TensorMap> maps;
    std::vector<LoadJob> jobs;
    std::vector<std::size_t> job_case;  // case of each job
    std::vector<std::size_t> job_box;   // box of each job within its case
    std::size_t out_bytes = 0, max_region = 0;
    for (std::size_t k = 0; k < n; ++k) {
      LoadCase& c = cases[k];
      if (!c.valid) continue;
      c.spec.address = d_in.data() + c.global_offset;
      try {
        c.map = make_tensor_map(c.spec);
        c.encoded = true;
      } catch (const Error& e) {
        Json j;
        j.num("case", c.index)
            .num("case_seed", c.case_seed)
            .str("spec", to_string(c.spec))
            .num("driver_code", e.driver_code())
            .str("error", e.what());
        report.failure("encode-failed", "encode-failed", j);
        continue;
      }
      ++descriptors;
      const std::size_t image = model::smem_bytes(c.spec);
      const std::size_t region = kGuardBytes + align_up(image, 16) + kGuardBytes;
      if (dynamic_smem_for(region) > max_dynamic) {
        Json j;
        j.num("case", c.index).str("spec", to_string(c.spec)).num("smem_bytes", image);
        report.write("too-large-for-smem", "info", j, false);
        ++skipped;
        continue;
      }
      coverage.add(c.spec, c.coords);
      const auto map_index = static_cast<std::uint32_t>(maps.size());
      maps.push_back(c.map);
      for (std::size_t b = 0; b < c.coords.size(); ++b) {
        LoadJob job{};
        job.map = map_index;
        job.rank = c.spec.rank;
        for (int d = 0; d < kMaxRank; ++d)
          job.coords[d] = c.coords[b][static_cast<std::size_t>(d)];
        if (kIm2col) {
          for (int d = 0; d < 3; ++d)
            job.offsets[d] = c.offsets[b][static_cast<std::size_t>(d)];
        }
        job.expect_tx = static_cast<std::uint32_t>(transaction_bytes(c.spec));
        job.region_bytes = static_cast<std::uint32_t>(region);
        job.out_offset = out_bytes;
        out_bytes += region;
        max_region = std::max(max_region, region);
        jobs.push_back(job);
        job_case.push_back(k);
        job_box.push_back(b);
      }
    }
    if (jobs.empty()) continue;
    boxes += static_cast<std::int64_t>(jobs.size());

    d_maps.resize(maps.size() * sizeof(TensorMap));
    d_maps.upload(bytes_of(maps));
    d_jobs.resize(jobs.size() * sizeof(LoadJob));
    d_jobs.upload(bytes_of(jobs));
    d_out.resize(out_bytes);
    TMA_CHECK_CUDA(cudaMemset(d_out.data(), 0x5A, out_bytes));  // blocks that never ran show up
    d_status.resize(jobs.size() * sizeof(std::uint32_t));
    TMA_CHECK_CUDA(cudaMemset(d_status.data(), 0, jobs.size() * sizeof(std::uint32_t)));

    kernel<<<static_cast<unsigned>(jobs.size()), 128, dynamic_smem_for(max_region)>>>(
        d_maps.as<TensorMap>(), d_jobs.as<LoadJob>(), d_out.data(), d_status.as<std::uint32_t>(),
        wait_cycles);
    TMA_CHECK_LAUNCH();
    sync_with_watchdog(nullptr, ctx.args.timeout_s,
                       cfg.label + " batch of cases " + std::to_string(indices[first]) + ".." +
                           std::to_string(indices[first + n - 1]),
                       report);

    std::vector<std::byte> out(out_bytes);
    d_out.download(out);
    std::vector<std::uint32_t> status(jobs.size());
    TMA_CHECK_CUDA(cudaMemcpy(status.data(), d_status.data(), status.size() * sizeof(std::uint32_t),
                              cudaMemcpyDeviceToHost));

    std::atomic<std::int64_t> batch_mismatches{0}, batch_timeouts{0};
    parallel_for(jobs.size(), [&](std::size_t j) {
      const LoadCase& c = cases[job_case[j]];
      const LoadJob& job = jobs[j];
      const std::size_t b = job_box[j];
      const std::span<const std::int32_t> coords(c.coords[b].data(),
                                                 static_cast<std::size_t>(c.spec.rank));
      const std::string category = load_category(c.spec, coords);
      Json rec;
      rec.num("case", c.index)
          .num("case_seed", c.case_seed)
          .num("box", b)
          .str("spec", to_string(c.spec))
          .nums("coords", coords)
          .num("expect_tx", job.expect_tx)
          .num("smem_bytes", model::smem_bytes(c.spec))
          .num("image_offset", kGuardBytes);
      if (kIm2col) {
        rec.nums("offsets", std::span<const std::uint16_t>(
                                c.offsets[b].data(), static_cast<std::size_t>(c.spec.rank - 2)));
      }
      std::vector<std::byte> expected(job.region_bytes, kPoison);
      try {
        const std::span<const std::byte> global(input.data() + c.global_offset, c.footprint);
        const std::span<std::byte> image(expected.data() + kGuardBytes, model::smem_bytes(c.spec));
        if (kIm2col) {
          model::load_im2col(c.spec, global, coords,
                             std::span<const std::uint16_t>(
                                 c.offsets[b].data(), static_cast<std::size_t>(c.spec.rank - 2)),
                             image);
        } else {
          model::load_box(c.spec, global, coords, image);
        }
      } catch (const std::exception& e) {
        rec.str("error", e.what());
        report.failure("model-error", "model-error/" + category, rec);
        ++batch_mismatches;
        return;
      }
      const std::span<const std::byte> hw(out.data() + job.out_offset, job.region_bytes);
      const bool timed_out = (status[j] & 1u) != 0;
      if (timed_out) ++batch_timeouts;
      const auto diff = compare_bytes(hw, expected);
      if (diff || timed_out) {
        ++batch_mismatches;
        if (!diff) {
          report.failure("timeout", "timeout/" + category, rec);
        } else {
          report.mismatch(timed_out ? "timeout" : "mismatch",
                          (timed_out ? "timeout/" : "") + category, rec, hw, expected, *diff);
        }
      }
    });
    mismatches += batch_mismatches;
    timeouts += batch_timeouts;
    // Once the hardware and the model disagree on byte counts, every such case waits its full
    // bound: shorten it so a broken run still ends quickly (the first timeouts were recorded).
    if (batch_timeouts > 0) wait_cycles = ctx.cycles(0.05);
  }

  coverage.print(cfg.label, report);
  std::printf("[gpu] %s: %lld descriptors (%lld boxes), %lld mismatches (%lld timeouts)",
              cfg.label.c_str(), static_cast<long long>(descriptors), static_cast<long long>(boxes),
              static_cast<long long>(mismatches), static_cast<long long>(timeouts));
  if (skipped > 0 || rejected_generated > 0) {
    std::printf(
        "; %lld cases skipped, %lld generated specs rejected by the validator (kind "
        "validator-rejected-generated)",
        static_cast<long long>(skipped), static_cast<long long>(rejected_generated));
  }
  std::printf("\n");
  return mismatches == 0 && descriptors > 0;
}

}  // namespace tma::testing
