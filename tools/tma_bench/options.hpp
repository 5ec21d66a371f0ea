// tma-bench: the command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tma::bench {

// Minimums of the timing policy (STYLE.md, benchmarks): fewer runs make the median noise.
inline constexpr int kMinWarmup = 3;
inline constexpr int kMinReps = 20;

struct Options {
  std::string command;  // a suite name or "all"; empty with --help / --list
  bool help = false;
  bool list = false;
  bool quick = false;
  // The size ladder in bytes (each suite shapes its tensors to about this many bytes of input).
  std::vector<std::size_t> sizes;
  std::optional<std::size_t> max_size;  // cases with more input bytes are left out
  std::string filter;                   // ECMAScript regex searched in case names
  int warmup = kMinWarmup;
  int reps = kMinReps;
  std::string json_path;
  std::optional<std::uint64_t> seed;  // default: from the clock (printed and recorded)
  int device = 0;
  bool flush_l2 = false;     // flush the L2 between runs even where rotating buffers would fit
  bool no_ordinary = false;  // leave out the ordinary-loads path (Path::kOrdinary) everywhere
  bool clock_probe = false;  // probe the SM clock around every timed run (timing.hpp ClockProbe)
  // gemm only: A then B, 'r' row-major or 'c' column-major ("rc": D = X W^T with W [N, K] as
  // nn.Linear stores it, both operands K-major), and a sweep over every tile configuration x
  // cluster size. gemm_options_given says one of them was typed (main refuses them elsewhere).
  std::string layout = "rc";
  bool sweep = false;
  bool no_gpc_order = false;  // launch tmakit's GEMMs with the identity worker order
  // --shapes: these M x N x K products instead of the default squares and LLM shapes.
  struct GemmShape {
    std::int64_t m, n, k;
  };
  std::vector<GemmShape> shapes;
  // --variants: of the sweep's variants only these, by name (cfg1_cl2, cfg2_sk2, cfg0_sk, ...:
  // tma_ + the name in the JSON; a suffix _gG sets the raster group, cfg0_sk2_g4), timed beside
  // the plan, cuBLASLt and the ordinary path: a plan alternative measured in (nearly) the regime
  // of the default run.
  std::vector<std::string> variants;
  // --plan: for these shapes, run one of the variants above as "tma" (the plan) instead of
  // tma::ops::gemm's own choice: a plan rule measured in exactly the default run's regime (the
  // same three implementations in the rotation). The case's note says so.
  struct PlanOverride {
    GemmShape shape;
    std::string variant;
  };
  std::vector<PlanOverride> plan_overrides;
  bool no_pdl = false;  // launch tmakit's GEMMs without programmatic dependent launch
  // Also time tma_tuned: the fastest of tma::ops::gemm_candidates' plans, chosen as cuBLASLt's
  // algorithm is (off by default: the README's regime has ours, cuBLASLt and the ordinary path).
  bool tuned = false;
  bool gemm_options_given = false;
  std::string command_line;  // as typed, for the JSON record
};

// A command-line mistake: main() prints it with the usage and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The default size ladder: 1, 4, 16, 64, 256 MiB, 1, 4 GiB; --quick: 1, 4, 16 MiB.
std::vector<std::size_t> default_sizes(bool quick);
// "64K", "1M", "1MiB", "4G", "4096" (bytes) -> bytes. Throws UsageError naming the flag.
std::size_t parse_size(std::string_view text, std::string_view flag);
// "cfg1_cl2,cfg2_sk2,cfg0_sk" -> the names, each cfgN_clC (data-parallel, clusters of C) or
// cfgN_skC / cfgN_sk (stream-K forced; clusters of C, or 1). Throws UsageError naming the flag.
std::vector<std::string> parse_variants(std::string_view text, std::string_view flag);
// "2048x2048x2048=cfg2_sk2,8192x4096x4096=cfg0_cl2" -> overrides (a shape and a variant name
// each, as parse_shapes and parse_variants read them). Throws UsageError naming the flag.
std::vector<Options::PlanOverride> parse_plan_overrides(std::string_view text,
                                                        std::string_view flag);
// "2048x1536x2048,1024x4096x2048" -> shapes (each extent >= 1). Throws UsageError naming the flag.
std::vector<Options::GemmShape> parse_shapes(std::string_view text, std::string_view flag);
// Parses argv; throws UsageError.
Options parse_options(int argc, char** argv);
// The --help text.
std::string_view usage();

}  // namespace tma::bench
