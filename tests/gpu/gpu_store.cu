// gpu_store: tiled TMA stores and reduce-stores on the hardware against model::store_box and
// model::reduce_box, byte for byte over the whole destination tensor (and slack after it).
//
// Each case: a random descriptor (tests/common/random_spec.hpp), a random shared-memory image
// written by the block with ordinary stores (then fence.proxy.async + __syncthreads), one thread
// issuing store<R> or reduce<Op, R>, commit_group, then wait_group<0> or wait_group_read<0> (after
// which the block overwrites the source with poison: a store that had not finished reading it
// would write poison). The destination starts as random "before" data. A third of the cases are
// stores, the rest reduces over every ReduceOp x element type that model::reduce_supported allows;
// floating-point reduces use raw random bits (NaN, Inf, subnormals) or finite values.
//
// Start coordinates are >= 0 (the PTX ISA leaves negative starts undefined for tensor stores);
// boxes stick out past the end or lie wholly beyond it. --negative-coords runs negative starts
// instead, as an observation (run_gpu_tests.sh does not fail the suite on it).
//
// Cases are batched per (operation, element type), so a launch that faults names its operation.
#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../common/random_spec.hpp"
#include "device_util.hpp"
#include "gpu_common.hpp"
#include "spec_draw.hpp"
#include "store_cases.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/host/validate.hpp"
#include "tma/model/model.hpp"

namespace {

using namespace tma;
using namespace tma::testing;

__global__ void probe_kernel() {}

constexpr std::int64_t kDescriptors = 12000;  // a third stores, the rest reduces
constexpr std::int64_t kQuickDescriptors = 400;
constexpr std::size_t kBatch = 512;

struct StoreJob {
  std::uint32_t map;
  std::int32_t rank;
  std::int32_t coords[kMaxRank];
  std::int32_t op;             // kStoreOp, or a model::ReduceOp
  std::int32_t wait_read;      // 1: wait_group_read<0>, then poison the source; 0: wait_group<0>
  std::uint32_t image_bytes;   // smem_bytes(spec) rounded up to 16
  std::uint64_t image_offset;  // the image in the image arena (16-byte aligned)
};

// Calls f(std::integral_constant<model::ReduceOp, op>{}) for the run-time `op`.
template <class F>
__device__ void dispatch_op(int op, F&& f) {
  using model::ReduceOp;
  switch (static_cast<ReduceOp>(op)) {
    case ReduceOp::kAdd:
      f(std::integral_constant<ReduceOp, ReduceOp::kAdd>{});
      break;
    case ReduceOp::kMin:
      f(std::integral_constant<ReduceOp, ReduceOp::kMin>{});
      break;
    case ReduceOp::kMax:
      f(std::integral_constant<ReduceOp, ReduceOp::kMax>{});
      break;
    case ReduceOp::kInc:
      f(std::integral_constant<ReduceOp, ReduceOp::kInc>{});
      break;
    case ReduceOp::kDec:
      f(std::integral_constant<ReduceOp, ReduceOp::kDec>{});
      break;
    case ReduceOp::kAnd:
      f(std::integral_constant<ReduceOp, ReduceOp::kAnd>{});
      break;
    case ReduceOp::kOr:
      f(std::integral_constant<ReduceOp, ReduceOp::kOr>{});
      break;
    case ReduceOp::kXor:
      f(std::integral_constant<ReduceOp, ReduceOp::kXor>{});
      break;
  }
}

// One block per job.
__global__ void __launch_bounds__(128)
    store_kernel(const TensorMap* maps, const StoreJob* jobs, const std::byte* images) {
  const StoreJob job = jobs[blockIdx.x];
  std::byte* smem = aligned_dynamic_smem();
  copy_words(smem, images + job.image_offset, job.image_bytes);
  // Ordinary stores (generic proxy) -> the TMA store reads them (async proxy).
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    const TensorMap* map = maps + job.map;
    // The batch's descriptors sit in global memory and are rewritten by cudaMemcpy between
    // launches at the same addresses: acquire through the tensormap proxy so that no copy uses a
    // descriptor the TMA unit cached during an earlier batch.
    acquire_descriptor(map);
    dispatch_rank(job.rank, [&](auto r) {
      constexpr int R = decltype(r)::value;
      std::int32_t c[R];
      for (int i = 0; i < R; ++i)
        c[i] = job.coords[i];
      if (job.op == kStoreOp) {
        store<R>(map, smem, c);
      } else {
        dispatch_op(job.op, [&](auto op) { reduce<decltype(op)::value, R>(map, smem, c); });
      }
    });
    commit_group();
    if (job.wait_read != 0) {
      wait_group_read<0>();
    } else {
      wait_group<0>();
    }
  }
  __syncthreads();
  // After wait_group_read the source may be reused: overwrite it. If the store had not finished
  // reading, the destination would receive poison and the comparison would show it.
  if (job.wait_read != 0) fill_words(smem, job.image_bytes, kPoisonWord);
}

std::string op_name(int op) {
  return op == kStoreOp
             ? "store"
             : "reduce-" + std::string(model::to_string(static_cast<model::ReduceOp>(op)));
}

std::string store_category(const StoreCase& c, bool negative) {
  const TensorMapSpec& s = c.gen.spec;
  const std::span<const std::int32_t> coords(c.coords.data(), static_cast<std::size_t>(s.rank));
  std::string cat = negative ? "negative-start/" : "";
  cat += op_name(c.op) + "/" + std::string(to_string(s.dtype));
  if (c.op != kStoreOp && is_floating_point(s.dtype)) cat += "/" + std::string(to_string(c.kind));
  cat +=
      "/swz-" + std::string(to_string(s.swizzle)) + "/il-" + std::string(to_string(s.interleave));
  cat += "/" + std::string(to_string(tiled_placement(s, coords)));
  bool strided = false;
  for (int d = 0; d < s.rank; ++d)
    strided = strided || model::traversal_step(s, d) != 1;
  if (strided) cat += "/estride";
  if (c.wait_read) cat += "/wait-read";
  return cat;
}

struct Totals {
  std::int64_t descriptors = 0, mismatches = 0, skipped = 0, rejected_generated = 0;
  std::map<std::string, std::int64_t> per_op;
};

// Runs one batch of cases (all of one operation and element type).
void run_batch(Context& ctx, std::vector<StoreCase>& cases, Totals& totals, bool negative) {
  Report& report = ctx.report;
  std::size_t global_bytes = 0, image_arena = 0, max_image = 0;
  // A box whose image does not fit one block's shared memory cannot be stored in one copy.
  const std::size_t max_dynamic = static_cast<std::size_t>(ctx.prop.sharedMemPerBlockOptin) - 64;
  std::erase_if(cases, [&](const StoreCase& c) {
    const std::size_t image = align_up(model::smem_bytes(c.gen.spec), 16);
    if (dynamic_smem_for(image) <= max_dynamic) return false;
    Json j;
    j.num("case", c.index).str("spec", to_string(c.gen.spec)).num("smem_bytes", image);
    report.write("too-large-for-smem", "info", j, false);
    ++totals.skipped;
    return true;
  });
  if (cases.empty()) return;
  for (StoreCase& c : cases) {
    totals.rejected_generated += c.gen.rejected_attempts;
    c.footprint = model::global_footprint_bytes(c.gen.spec);
    c.slot_bytes = align_up(std::max<std::size_t>(c.footprint, span_bytes(c.gen.spec)) + 256, 256);
    c.global_offset = global_bytes;
    global_bytes += c.slot_bytes;
    c.image_bytes = align_up(model::smem_bytes(c.gen.spec), 16);
    c.image_offset = image_arena;
    image_arena += c.image_bytes;
    max_image = std::max(max_image, c.image_bytes);
  }
  global_bytes += 4096;
  std::vector<std::byte> before(global_bytes), images(image_arena);
  parallel_for(cases.size(), [&](std::size_t k) {
    const StoreCase& c = cases[k];
    Rng data_rng(derive_seed(c.case_seed, 0xDA7Au));
    fill_elements(data_rng, c.gen.spec.dtype, c.kind,
                  std::span<std::byte>(before).subspan(c.global_offset, c.slot_bytes));
    const std::size_t image = model::smem_bytes(c.gen.spec);
    fill_elements(data_rng, c.gen.spec.dtype, c.kind,
                  std::span<std::byte>(images).subspan(c.image_offset, image / 8 * 8));
  });
  DeviceBuffer d_global(global_bytes), d_images(std::max<std::size_t>(image_arena, 16));
  d_global.upload(before);
  d_images.upload(images);

  std::vector<TensorMap> maps;
  std::vector<StoreJob> jobs;
  std::vector<std::size_t> job_case;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    StoreCase& c = cases[k];
    c.gen.spec.address = d_global.data() + c.global_offset;
    TensorMap map{};
    try {
      map = make_tensor_map(c.gen.spec);
    } catch (const Error& e) {
      Json j;
      j.num("case", c.index)
          .num("case_seed", c.case_seed)
          .str("spec", to_string(c.gen.spec))
          .num("driver_code", e.driver_code())
          .str("error", e.what());
      report.failure("encode-failed", "encode-failed", j);
      continue;
    }
    StoreJob job{};
    job.map = static_cast<std::uint32_t>(maps.size());
    job.rank = c.gen.spec.rank;
    for (int d = 0; d < kMaxRank; ++d)
      job.coords[d] = c.coords[static_cast<std::size_t>(d)];
    job.op = c.op;
    job.wait_read = c.wait_read ? 1 : 0;
    job.image_bytes = static_cast<std::uint32_t>(c.image_bytes);
    job.image_offset = c.image_offset;
    maps.push_back(map);
    jobs.push_back(job);
    job_case.push_back(k);
  }
  if (jobs.empty()) return;
  totals.descriptors += static_cast<std::int64_t>(jobs.size());
  totals.per_op[op_name(cases[0].op)] += static_cast<std::int64_t>(jobs.size());

  DeviceBuffer d_maps(maps.size() * sizeof(TensorMap)), d_jobs(jobs.size() * sizeof(StoreJob));
  d_maps.upload(bytes_of(maps));
  d_jobs.upload(bytes_of(jobs));
  const std::size_t smem = dynamic_smem_for(max_image);
  TMA_CHECK_CUDA(cudaFuncSetAttribute(store_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(smem)));
  const std::string what =
      op_name(cases[0].op) + " on " + std::string(to_string(cases[0].gen.spec.dtype)) + ", cases " +
      std::to_string(cases.front().index) + ".." + std::to_string(cases.back().index);
  store_kernel<<<static_cast<unsigned>(jobs.size()), 128, smem>>>(
      d_maps.as<TensorMap>(), d_jobs.as<StoreJob>(), d_images.data());
  try {
    TMA_CHECK_LAUNCH();
    sync_with_watchdog(nullptr, ctx.args.timeout_s, what, report);
  } catch (const CudaError& e) {
    // A fault poisons the context: say which operation and type did it, then give up.
    Json j;
    j.str("batch", what).str("error", e.what()).str("first_spec", to_string(cases[0].gen.spec));
    report.failure("launch-error",
                   "launch-error/" + op_name(cases[0].op) + "/" +
                       std::string(to_string(cases[0].gen.spec.dtype)),
                   j);
    throw;
  }
  std::vector<std::byte> after(global_bytes);
  d_global.download(after);

  std::atomic<std::int64_t> bad{0};
  parallel_for(jobs.size(), [&](std::size_t j) {
    const StoreCase& c = cases[job_case[j]];
    const TensorMapSpec& s = c.gen.spec;
    const std::span<const std::int32_t> coords(c.coords.data(), static_cast<std::size_t>(s.rank));
    const std::string category = store_category(c, negative);
    Json rec;
    rec.num("case", c.index)
        .num("case_seed", c.case_seed)
        .str("op", op_name(c.op))
        .str("data", to_string(c.kind))
        .num("wait_read", c.wait_read)
        .str("spec", to_string(s))
        .nums("coords", coords)
        .num("footprint", c.footprint);
    std::vector<std::byte> expected(
        before.begin() + static_cast<std::ptrdiff_t>(c.global_offset),
        before.begin() + static_cast<std::ptrdiff_t>(c.global_offset + c.slot_bytes));
    const std::span<const std::byte> image(images.data() + c.image_offset, model::smem_bytes(s));
    try {
      const std::span<std::byte> global(expected.data(), c.footprint);
      if (c.op == kStoreOp) {
        model::store_box(s, image, coords, global);
      } else {
        model::reduce_box(s, static_cast<model::ReduceOp>(c.op), image, coords, global);
      }
    } catch (const std::exception& e) {
      rec.str("error", e.what());
      report.failure("model-error", "model-error/" + category, rec);
      ++bad;
      return;
    }
    const std::span<const std::byte> hw(after.data() + c.global_offset, c.slot_bytes);
    const auto diff = compare_bytes(hw, expected);
    if (!diff) return;
    ++bad;
    const std::size_t start = diff->first / 16 * 16;
    const std::size_t end = std::min(c.slot_bytes, start + Report::kWindowBytes);
    rec.str("before_window", to_hex(std::span<const std::byte>(before).subspan(
                                 c.global_offset + start, end - start)));
    report.mismatch("mismatch", category, rec, hw, expected, *diff, image);
  });
  totals.mismatches += bad;
}

}  // namespace

int main(int argc, char** argv) {
  return run_test(
      "store_reduce", argc, argv, reinterpret_cast<const void*>(&probe_kernel), [](Context& ctx) {
        const bool negative = ctx.args.negative_coords;
        const std::int64_t total = ctx.args.count_or(kDescriptors, kQuickDescriptors);
        std::vector<std::int64_t> indices;
        for (std::int64_t i = 0; i < std::max(total, ctx.args.only + 1); ++i) {
          if (ctx.selected(i)) indices.push_back(i);
        }
        std::vector<StoreCase> all(indices.size());
        parallel_for(indices.size(), [&](std::size_t k) {
          all[k] = make_store_case(
              indices[k], derive_seed(ctx.report.seed(), static_cast<std::uint64_t>(indices[k])),
              negative, ctx.args.interleave_or(0.12));
        });
        // Group by (operation, element type): stores first, then each reduce.
        std::map<std::pair<int, int>, std::vector<StoreCase>> groups;
        Totals totals;
        for (StoreCase& c : all) {
          if (!c.gen.valid) {
            ++totals.skipped;
            totals.rejected_generated += c.gen.rejected_attempts;
            continue;
          }
          groups[{c.op, static_cast<int>(c.gen.spec.dtype)}].push_back(std::move(c));
        }
        for (auto& [key, cases] : groups) {
          for (std::size_t first = 0; first < cases.size(); first += kBatch) {
            const std::size_t n = std::min(kBatch, cases.size() - first);
            std::vector<StoreCase> batch(cases.begin() + static_cast<std::ptrdiff_t>(first),
                                         cases.begin() + static_cast<std::ptrdiff_t>(first + n));
            run_batch(ctx, batch, totals, negative);
          }
        }
        std::string ops;
        for (const auto& [name, n] : totals.per_op)
          ops += " " + name + "=" + std::to_string(n);
        std::printf("[gpu] %s: %lld descriptors, %lld mismatches;%s",
                    negative ? "store_reduce_negative_start" : "store_reduce",
                    static_cast<long long>(totals.descriptors),
                    static_cast<long long>(totals.mismatches), ops.c_str());
        if (totals.skipped > 0 || totals.rejected_generated > 0) {
          std::printf("; %lld cases skipped, %lld generated specs rejected by the validator",
                      static_cast<long long>(totals.skipped),
                      static_cast<long long>(totals.rejected_generated));
        }
        std::printf("\n");
        return totals.mismatches == 0 && totals.descriptors > 0;
      });
}
