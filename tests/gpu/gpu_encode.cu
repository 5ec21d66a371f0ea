// gpu_encode: tmakit's validator against the CUDA driver's encoder.
//
// (a) grid: make_tensor_map succeeds for a canonical valid spec of every byte-sized element type x
//     rank x swizzle none / 32B / 64B / 128B x interleave where legal (tiled ranks 1..5, im2col
//     ranks 3..5), with zero and (floating types) NaN fill.
// (b) sweep: >= 10,000 random specs, about half valid by construction and half mutated to break
//     one or more documented rules (tests/common/random_spec.hpp). For each, validate(spec).empty()
//     is compared with encode_unchecked(spec) == CUDA_SUCCESS; every disagreement is written with
//     the spec, the violations, the mutations and the driver's code. Rules that fire on specs the
//     driver accepts, and documented rules the driver does not enforce, are tabulated: they are the
//     evidence for validator or documentation bugs.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "../common/random_spec.hpp"
#include "gpu_common.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/host/validate.hpp"

namespace {

using namespace tma;
using namespace tma::testing;

__global__ void probe_kernel() {}

constexpr std::int64_t kSweep = 12000;
constexpr std::int64_t kQuickSweep = 1000;

std::vector<std::string> violation_texts(const std::vector<Violation>& vs) {
  std::vector<std::string> out;
  for (const auto& v : vs)
    out.push_back(to_string(v));
  return out;
}

std::string rule_codes(const std::vector<Violation>& vs) {
  std::string out;
  for (const auto& v : vs) {
    const std::string code(rule_code(v.rule));
    if (out.find(code) == std::string::npos) out += (out.empty() ? "" : "+") + code;
  }
  return out;
}

// The canonical valid spec of one grid point: a 64-element-per-dimension tensor, packed rows,
// the inner box row as wide as the swizzle span (64 B without swizzle), 8 elements per outer
// box dimension.
TensorMapSpec grid_spec(Mode mode, DataType dtype, int rank, Swizzle swizzle, Interleave interleave,
                        OobFill fill, const void* address) {
  TensorMapSpec s;
  s.mode = mode;
  s.dtype = dtype;
  s.rank = rank;
  s.address = address;
  s.swizzle = swizzle;
  s.interleave = interleave;
  s.oob_fill = fill;
  s.l2_promotion = static_cast<L2Promotion>(rank % 4);
  const std::uint64_t elem = static_cast<std::uint64_t>(element_bytes(dtype));
  const std::uint64_t slice = static_cast<std::uint64_t>(interleave_bytes(interleave));
  const std::uint64_t inner_bytes = slice != 0 ? slice
                                    : swizzle == Swizzle::kNone
                                        ? 64
                                        : static_cast<std::uint64_t>(swizzle_span_bytes(swizzle));
  const auto inner = static_cast<std::uint32_t>(inner_bytes / elem);
  const std::uint64_t align = interleave == Interleave::k32B ? 32 : 16;
  for (int d = 0; d < rank; ++d) {
    s.dims_inner_first[d] = 64;
    s.box_inner_first[d] = d == 0 ? inner : 8;
  }
  if (slice != 0) s.dims_inner_first[0] = inner;
  if (mode == Mode::kIm2col) {
    s.channels_per_pixel = inner;
    s.pixels_per_column = 32;
    for (int j = 0; j < rank - 2; ++j) {
      s.pixel_box_lower_corner[j] = -1;
      s.pixel_box_upper_corner[j] = -1;
    }
    s.box_inner_first = {};
  }
  s.strides_bytes_inner_first[0] = elem;
  std::uint64_t extent = (s.dims_inner_first[0] * elem + align - 1) / align * align;
  for (int d = 1; d < rank; ++d) {
    s.strides_bytes_inner_first[d] = extent;
    extent *= s.dims_inner_first[d];
  }
  return s;
}

// (a) Every grid point must validate and encode.
// Rules tmakit enforces that driver 580 does not check: TMA020 (documented by the driver, evidence
// docs/validator-vs-driver.md) and TMA038 (tmakit's own: an interleaved copy's measured image must
// fit an SM, docs/hardware-findings.md finding 12). A spec rejected only by these is not a
// disagreement.
bool documented_but_not_enforced(const std::vector<Violation>& violations) {
  if (violations.empty()) return false;
  for (const Violation& v : violations)
    if (v.rule != Rule::kInterleaveSwizzle && v.rule != Rule::kInterleavedImageBytes) return false;
  return true;
}

bool run_grid(Context& ctx, const void* base) {
  std::int64_t points = 0, failed = 0;
  const Limits limits{ctx.prop.major, ctx.prop.minor};
  for (const DataType dtype : hopper_data_types()) {
    for (const Mode mode : {Mode::kTiled, Mode::kIm2col}) {
      for (int rank = mode == Mode::kTiled ? 1 : 3; rank <= kMaxRank; ++rank) {
        for (const Swizzle swz : {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B}) {
          for (const Interleave il : {Interleave::kNone, Interleave::k16B, Interleave::k32B}) {
            if (il != Interleave::kNone && rank < 3) continue;
            if (il == Interleave::k32B && swz != Swizzle::k32B) continue;
            for (const OobFill fill : {OobFill::kZero, OobFill::kNan}) {
              if (fill == OobFill::kNan && !is_floating_point(dtype)) continue;
              const TensorMapSpec s = grid_spec(mode, dtype, rank, swz, il, fill, base);
              // A box larger than an SM's shared memory is rejected by the driver (TMA037).
              if (transaction_bytes(s) > limits.max_box_bytes) continue;
              ++points;
              const auto violations = validate(s, limits);
              int code = 0;
              std::string error;
              try {
                (void)make_tensor_map(s, limits);
              } catch (const Error& e) {
                code = e.driver_code();
                error = e.what();
              }
              if (violations.empty() && error.empty()) continue;
              ++failed;
              Json j;
              j.str("spec", to_string(s))
                  .strs("violations", violation_texts(violations))
                  .num("driver_code", code)
                  .str("error", error);
              ctx.report.failure(
                  "grid-failed",
                  "grid/" + std::string(to_string(mode)) + "/" + rule_codes(violations), j);
            }
          }
        }
      }
    }
  }
  std::printf("[gpu] encode_grid: %lld valid grid specs, %lld failed to validate or encode\n",
              static_cast<long long>(points), static_cast<long long>(failed));
  return failed == 0;
}

struct RuleEvidence {
  std::int64_t count = 0;
  std::string example;
};

struct MutationEvidence {
  std::int64_t applied = 0;          // specs carrying this mutation
  std::int64_t driver_rejected = 0;  // of them, rejected by the driver
  std::int64_t alone = 0;            // specs where it was the only mutation
  std::int64_t alone_driver_accepted = 0;
  std::string accepted_example;  // a spec with only this mutation that the driver accepted
};

// (b) The random sweep.
bool run_sweep(Context& ctx, const void* base) {
  const std::int64_t total = ctx.args.count_or(kSweep, kQuickSweep);
  const Limits limits{ctx.prop.major, ctx.prop.minor};
  std::int64_t both_ok = 0, both_reject = 0, val_only_rejects = 0, driver_only_rejects = 0;
  std::int64_t documented_only = 0;  // driver accepts; only documented-but-unenforced rules fire
  std::int64_t generated_valid = 0, generated_invalid = 0, ran = 0;
  std::map<std::string, RuleEvidence> rules_on_accepted;  // validator rule -> driver accepted
  std::map<Mutation, MutationEvidence> mutations;
  for (std::int64_t i = 0; i < total || (ctx.args.only >= total && i <= ctx.args.only); ++i) {
    if (!ctx.selected(i)) continue;
    ++ran;
    const std::uint64_t case_seed = derive_seed(ctx.report.seed(), static_cast<std::uint64_t>(i));
    Rng rng(case_seed);
    SpecOptions o;
    o.mode = rng.chance(0.8) ? Mode::kTiled : Mode::kIm2col;
    o.base_address = reinterpret_cast<std::uintptr_t>(base) +
                     256 * static_cast<std::uint64_t>(rng.range(0, 1023));
    o.max_footprint_bytes = std::uint64_t{1} << 28;
    const bool make_valid = rng.chance(0.5);
    MutatedSpec m =
        make_valid ? MutatedSpec{random_spec(rng, o), {}} : random_invalid_spec(rng, o, 3);
    (make_valid ? generated_valid : generated_invalid) += 1;
    const auto violations = validate(m.spec, limits);
    TensorMap map{};
    const int code = encode_unchecked(m.spec, &map);
    const bool validator_ok = violations.empty();
    const bool driver_ok = code == 0;

    for (const Mutation mu : m.mutations) {
      MutationEvidence& ev = mutations[mu];
      ++ev.applied;
      if (!driver_ok) ++ev.driver_rejected;
      if (m.mutations.size() == 1) {
        ++ev.alone;
        if (driver_ok) {
          ++ev.alone_driver_accepted;
          if (ev.accepted_example.empty()) ev.accepted_example = to_string(m.spec);
        }
      }
    }
    if (validator_ok && driver_ok) {
      ++both_ok;
      continue;
    }
    if (!validator_ok && !driver_ok) {
      ++both_reject;
      continue;
    }
    std::vector<std::string> mutation_names;
    for (const Mutation mu : m.mutations)
      mutation_names.emplace_back(to_string(mu));
    Json j;
    j.num("case", i)
        .num("case_seed", case_seed)
        .str("generated", make_valid ? "valid" : "mutated")
        .strs("mutations", mutation_names)
        .str("spec", to_string(m.spec))
        .strs("violations", violation_texts(violations))
        .num("driver_code", code);
    if (driver_ok && documented_but_not_enforced(violations)) {
      ++documented_only;
      continue;
    }
    if (driver_ok) {
      ++val_only_rejects;
      for (const auto& v : violations) {
        RuleEvidence& ev = rules_on_accepted[std::string(rule_code(v.rule)) + " " +
                                             std::string(rule_name(v.rule))];
        if (ev.count++ == 0) ev.example = to_string(v) + " | spec: " + to_string(m.spec);
      }
      ctx.report.failure("disagreement",
                         "validator-rejects-driver-accepts/" + rule_codes(violations), j);
    } else {
      ++driver_only_rejects;
      std::string what = make_valid ? "generated-valid" : "mutated";
      for (const auto& n : mutation_names)
        what += "/" + n;
      ctx.report.failure("disagreement", "validator-accepts-driver-rejects/" + what, j);
    }
  }

  // Evidence tables: which validator rules fired on driver-accepted specs, and which documented
  // rules (mutations) the driver let through on their own.
  for (const auto& [rule, ev] : rules_on_accepted) {
    Json j;
    j.str("rule", rule).num("driver_accepted_specs", ev.count).str("example", ev.example);
    ctx.report.write("rule-on-driver-accepted", "evidence", j, false);
    std::printf("[gpu] encode_sweep:   rule %-45s fired on %lld driver-accepted specs\n",
                rule.c_str(), static_cast<long long>(ev.count));
  }
  for (const auto& [mu, ev] : mutations) {
    Json j;
    j.str("mutation", to_string(mu))
        .num("applied", ev.applied)
        .num("driver_rejected", ev.driver_rejected)
        .num("alone", ev.alone)
        .num("alone_driver_accepted", ev.alone_driver_accepted)
        .str("accepted_example", ev.accepted_example);
    ctx.report.write("mutation-evidence", "evidence", j, false);
    if (ev.alone_driver_accepted > 0) {
      std::printf(
          "[gpu] encode_sweep:   documented rule broken alone but accepted by the driver: %s "
          "(%lld of %lld)\n",
          std::string(to_string(mu)).c_str(), static_cast<long long>(ev.alone_driver_accepted),
          static_cast<long long>(ev.alone));
    }
  }
  const std::int64_t agree = both_ok + both_reject;
  std::printf(
      "[gpu] encode_sweep: %lld descriptors (%lld generated valid, %lld mutated), %lld "
      "agreements (%lld both accept, %lld both reject), %lld mismatches (%lld validator "
      "rejects / driver accepts, %lld validator accepts / driver rejects)\n",
      static_cast<long long>(ran), static_cast<long long>(generated_valid),
      static_cast<long long>(generated_invalid), static_cast<long long>(agree),
      static_cast<long long>(both_ok), static_cast<long long>(both_reject),
      static_cast<long long>(val_only_rejects + driver_only_rejects),
      static_cast<long long>(val_only_rejects), static_cast<long long>(driver_only_rejects));
  std::printf(
      "[gpu] encode_sweep: %lld specs rejected only by documented rules the driver does not "
      "enforce (docs/validator-vs-driver.md)\n",
      static_cast<long long>(documented_only));
  return val_only_rejects + driver_only_rejects == 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_test("encode", argc, argv, reinterpret_cast<const void*>(&probe_kernel),
                  [](Context& ctx) {
                    // Real device memory for the addresses (the encoder may look at them).
                    DeviceBuffer base(std::size_t{1} << 20);
                    const bool grid_ok = ctx.args.only >= 0 || run_grid(ctx, base.data());
                    const bool sweep_ok = run_sweep(ctx, base.data());
                    return grid_ok && sweep_ok;
                  });
}
