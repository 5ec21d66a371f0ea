// tma-bench: the command line (see options.hpp).
#include "options.hpp"

#include <charconv>
#include <cstdio>
#include <regex>

namespace tma::bench {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = kKiB * 1024;
constexpr std::size_t kGiB = kMiB * 1024;
// Below this a copy is a few hundred nanoseconds: launch latency, not bandwidth.
constexpr std::size_t kMinSize = 64 * kKiB;

constexpr std::string_view kUsage = R"(usage:
  tma-bench <suite|all> [options]    verify, then time every case of the suite(s)
  tma-bench --list [suite|all]       the cases (no GPU needed); --list alone: every suite
  tma-bench --help

suites:
  copy        dst = src for contiguous and padded/strided tensors (u8, bf16, fp32):
              TMA vs ordinary 16-byte loads vs cudaMemcpy(2D/3D)Async
  transpose   dst = src^T for 2-D and batched tensors (bf16, fp16, fp32):
              TMA vs ordinary loads, and the TMA copy of the same bytes as the ceiling
  copy-tune   the copy ladder through every TMA copy configuration
  gemm        D = A B, bf16 -> bf16, fp32 accumulation (TFLOP/s): squares 1024..16384 and LLM
              projections; tma::ops::gemm (TMA, ordinary cp.async loads) vs cuBLASLt (the best
              of its heuristic's algorithms). Not part of `all`: it reports TFLOP/s, takes
              minutes, and a hung kernel would stall everything after it; run it by name.
  all         every suite but gemm

options:
  --sizes LIST     size ladder, input bytes per case: 1M,16M,1G (K/M/G = KiB/MiB/GiB; plain
                   numbers are bytes). Default 1M,4M,16M,64M,256M,1G,4G.
  --max-size S     leave out every case (ladder or ragged) with more than S input bytes
  --quick          sizes 1M,4M,16M and the small ragged cases
  --filter REGEX   only cases whose name matches (ECMAScript, searched), e.g. 'transpose/.*/bf16'
  --reps N         timed runs per implementation, the median is reported (default and minimum 20)
  --warmup N       untimed runs first (default and minimum 3)
  --json FILE      write every case, the GPU, its clocks and the versions to FILE
  --seed N         seed of the random inputs (default: from the clock; printed)
  --device N       CUDA device (default 0)
  --flush-l2       write a 2x-L2 buffer between runs instead of rotating buffers
  --no-ordinary    leave out the ordinary-loads path (Path::kOrdinary) of our ops
  --clock-probe    also read the SM clock before and after every timed run (a one-thread
                   kernel timing clock64 over 10 us of %globaltimer); the JSON gives each
                   implementation's median MHz before and after its runs (bench/clock_probe.py
                   tabulates them). A diagnostic: the probes idle the GPU between runs

gemm only:
  --layout AB      operand storage, A then B: r = row-major, c = column-major (default rc:
                   A [M, K] row-major, B [N, K] as nn.Linear stores weights: both K-major)
  --sweep          also time every tile configuration x cluster size (tma::ops::kGemmConfigs)
  --no-pdl         launch tmakit's kernels without programmatic dependent launch
                   (GemmTuning::pdl = false; on by default, as in tma::ops::gemm)
  --no-gpc-order   launch tmakit's kernels with the identity worker order
                   (GemmTuning::gpc_order = false; on by default, as in tma::ops::gemm)
  --tuned          also time tma_tuned: the fastest of tma::ops::gemm_candidates' plans, each
                   tried briefly as cuBLASLt's heuristic algorithms are, then timed with the rest
  --variants LIST  also time these of --sweep's variants only: cfgN_clC (configuration N,
                   data-parallel, clusters of C) or cfgN_skC / cfgN_sk (stream-K), e.g.
                   --variants cfg1_cl2,cfg2_sk2 (unknown or disallowed ones are noted, not timed);
                   a suffix _gG sets the raster group to G (GemmTuning::raster_group: tile
                   rows, in clusters, per group; default 8), e.g. cfg0_sk2_g4
  --shapes LIST    time these products instead of the default set: MxNxK[,MxNxK...]
                   (family "custom"), e.g. --shapes 2048x1536x2048,1024x4096x2048
  --plan LIST      for these shapes, time a variant (as --variants names it) as "tma" in place
                   of the plan's own choice: MxNxK=VARIANT[,...], e.g. --plan
                   8192x4096x4096=cfg2_sk2 (an experiment aid: a plan rule measured in the
                   default run's regime; the case's note names the override)

Every case is verified first (random non-zero input, output poisoned with 0xA5, compared byte
for byte with the input or a naive reference); a mismatch prints the first differing indices and
the tool exits 1. Timing: CUDA events, median of --reps runs after --warmup, buffers rotated so
that consecutive runs touch more than 3x the L2 (or L2 flushed between runs when that does not
fit). GB/s counts bytes read + bytes written. Cases that do not fit in free memory are skipped
with a note. GEMM outputs are poisoned the same way; every element must be written and 1024
sampled elements must be within 8e-3 (relative, Frobenius) of an fp64 dot product of the inputs.
Each verify / time step of gemm is logged before it is launched, so a hang shows where.

exit codes: 0 all verified, 1 a mismatch or error, 2 bad command line, 77 no usable CUDA device
)";

std::string need_value(int& i, int argc, char** argv, std::string_view flag) {
  if (i + 1 >= argc) throw UsageError(std::string(flag) + " needs a value");
  return argv[++i];
}

std::int64_t parse_int(std::string_view text, std::string_view flag, std::int64_t min) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw UsageError(std::string(flag) + " = '" + std::string(text) + "' is not an integer");
  }
  if (v < min) {
    throw UsageError(std::string(flag) + " = " + std::to_string(v) + " is below the minimum " +
                     std::to_string(min) + ": use " + std::string(flag) + " " +
                     std::to_string(min) + " or more");
  }
  return v;
}

}  // namespace

std::vector<std::string> parse_variants(std::string_view text, std::string_view flag) {
  static const std::regex kName("cfg[0-9]+_(cl[124]|sk[124]?)(_g[1-9][0-9]{0,3})?");
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name(text.substr(start, comma - start));
    if (!std::regex_match(name, kName)) {
      throw UsageError(std::string(flag) + ": '" + name +
                       "' is not a variant: give cfgN_clC (configuration N, data-parallel, "
                       "clusters of C = 1, 2 or 4) or cfgN_skC / cfgN_sk (stream-K; clusters of C, "
                       "or 1), optionally followed by _gG (raster group G, 1..9999), e.g. "
                       "cfg1_cl2,cfg2_sk2,cfg0_sk2_g4");
    }
    // cfgN_sk1 is cfgN_sk (stream-K in clusters of 1), the name the sweep gives it.
    const std::size_t sk1 = name.find("_sk1");
    names.push_back(sk1 == std::string::npos ? name
                                             : name.substr(0, sk1 + 3) + name.substr(sk1 + 4));
    start = comma + 1;
  }
  return names;
}

std::vector<Options::GemmShape> parse_shapes(std::string_view text, std::string_view flag) {
  std::vector<Options::GemmShape> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item(text.substr(start, comma - start));
    long long v[3] = {0, 0, 0};
    char tail = 0;
    if (std::sscanf(item.c_str(), "%lldx%lldx%lld%c", &v[0], &v[1], &v[2], &tail) != 3 ||
        v[0] < 1 || v[1] < 1 || v[2] < 1)
      throw UsageError(std::string(flag) + " '" + item +
                       "' is not M x N x K: write three positive integers joined by 'x', e.g. "
                       "2048x1536x2048 (several joined by ',')");
    out.push_back({v[0], v[1], v[2]});
    start = comma + 1;
  }
  return out;
}

std::vector<Options::PlanOverride> parse_plan_overrides(std::string_view text,
                                                        std::string_view flag) {
  std::vector<Options::PlanOverride> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw UsageError(std::string(flag) + " '" + std::string(item) +
                       "' is not SHAPE=VARIANT: write MxNxK=cfgN_clC or MxNxK=cfgN_skC, e.g. "
                       "8192x4096x4096=cfg2_sk2 (several joined by ',')");
    }
    const std::vector<Options::GemmShape> shape = parse_shapes(item.substr(0, eq), flag);
    const std::vector<std::string> variant = parse_variants(item.substr(eq + 1), flag);
    if (shape.size() != 1 || variant.size() != 1) {
      throw UsageError(std::string(flag) + " '" + std::string(item) +
                       "': give one shape and one variant per item, items joined by ','");
    }
    out.push_back({shape[0], variant[0]});
    start = comma + 1;
  }
  return out;
}

std::vector<std::size_t> default_sizes(bool quick) {
  if (quick) return {1 * kMiB, 4 * kMiB, 16 * kMiB};
  return {1 * kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB, 256 * kMiB, 1 * kGiB, 4 * kGiB};
}

std::size_t parse_size(std::string_view text, std::string_view flag) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::size_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "K" || unit == "KiB") scale = kKiB;
  if (unit == "M" || unit == "MiB") scale = kMiB;
  if (unit == "G" || unit == "GiB") scale = kGiB;
  if (ec != std::errc() || end == text.data() || scale == 0) {
    throw UsageError(std::string(flag) + ": '" + std::string(text) +
                     "' is not a size: use a number with an optional K, M or G (KiB, MiB, GiB)");
  }
  const std::size_t bytes = static_cast<std::size_t>(v) * scale;
  if (bytes < kMinSize) {
    throw UsageError(std::string(flag) + ": " + std::string(text) +
                     " is below 64K, where a case measures launch latency, not bandwidth: use "
                     "64K or more");
  }
  return bytes;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) o.command_line += ' ';
    o.command_line += argv[i];
  }
  bool sizes_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--flush-l2") {
      o.flush_l2 = true;
    } else if (a == "--no-ordinary") {
      o.no_ordinary = true;
    } else if (a == "--clock-probe") {
      o.clock_probe = true;
    } else if (a == "--sweep") {
      o.sweep = true;
      o.gemm_options_given = true;
    } else if (a == "--no-pdl") {
      o.no_pdl = true;
      o.gemm_options_given = true;
    } else if (a == "--no-gpc-order") {
      o.no_gpc_order = true;
      o.gemm_options_given = true;
    } else if (a == "--tuned") {
      o.tuned = true;
      o.gemm_options_given = true;
    } else if (a == "--variants") {
      o.variants = parse_variants(need_value(i, argc, argv, a), a);
      o.gemm_options_given = true;
    } else if (a == "--plan") {
      o.plan_overrides = parse_plan_overrides(need_value(i, argc, argv, a), a);
      o.gemm_options_given = true;
    } else if (a == "--shapes") {
      o.shapes = parse_shapes(need_value(i, argc, argv, a), a);
      o.gemm_options_given = true;
    } else if (a == "--layout") {
      o.layout = need_value(i, argc, argv, a);
      const bool ok = o.layout.size() == 2 && (o.layout[0] == 'r' || o.layout[0] == 'c') &&
                      (o.layout[1] == 'r' || o.layout[1] == 'c');
      if (!ok) {
        throw UsageError("--layout '" + o.layout +
                         "' is not a layout: give A's then B's storage, r (row-major) or c "
                         "(column-major): rc, rr, cr or cc");
      }
      o.gemm_options_given = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--sizes") {
      const std::string list = need_value(i, argc, argv, a);
      std::size_t start = 0;
      while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        o.sizes.push_back(parse_size(std::string_view(list).substr(start, comma - start), a));
        start = comma + 1;
      }
      sizes_given = true;
    } else if (a == "--max-size") {
      o.max_size = parse_size(need_value(i, argc, argv, a), a);
    } else if (a == "--filter") {
      o.filter = need_value(i, argc, argv, a);
      try {
        (void)std::regex(o.filter, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw UsageError("--filter '" + o.filter + "' is not a valid regex: " + e.what());
      }
    } else if (a == "--reps") {
      o.reps = static_cast<int>(parse_int(need_value(i, argc, argv, a), a, kMinReps));
    } else if (a == "--warmup") {
      o.warmup = static_cast<int>(parse_int(need_value(i, argc, argv, a), a, kMinWarmup));
    } else if (a == "--json") {
      o.json_path = need_value(i, argc, argv, a);
    } else if (a == "--seed") {
      o.seed = static_cast<std::uint64_t>(parse_int(need_value(i, argc, argv, a), a, 0));
    } else if (a == "--device") {
      o.device = static_cast<int>(parse_int(need_value(i, argc, argv, a), a, 0));
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option '" + std::string(a) + "': see --help");
    } else if (o.command.empty()) {
      o.command = a;
    } else {
      throw UsageError("two suites given ('" + o.command + "' and '" + std::string(a) +
                       "'): name one suite, or 'all'");
    }
  }
  if (!sizes_given) o.sizes = default_sizes(o.quick);
  return o;
}

std::string_view usage() {
  return kUsage;
}

}  // namespace tma::bench
