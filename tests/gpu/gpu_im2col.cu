// gpu_im2col: im2col TMA loads on the hardware against model::load_im2col, byte for byte.
//
// Random rank 3..5 im2col descriptors (tensor {C, W, [H, [D,]] N} innermost first): every
// byte-sized type, swizzle none / 32B / 64B / 128B, interleave, traversal strides, pixel boxes
// with padding (lower corner below 0) and a filter reach (upper corner), channels per pixel up to
// 256 and pixels per column up to 1024, zero and NaN fill. Each descriptor loads several columns
// at random filter bases (inside the pixel bounding box, as the PTX ISA requires) and offsets.
#include "load_harness.hpp"

namespace {

using namespace tma;
using namespace tma::testing;

__global__ void probe_kernel() {}

constexpr std::int64_t kDescriptors = 4000;
constexpr std::int64_t kQuickDescriptors = 150;
constexpr int kColumnsPerDescriptor = 3;

LoadCase make_im2col_case(std::int64_t /*index*/, std::uint64_t case_seed) {
  LoadCase c;
  Rng rng(case_seed);
  SpecOptions o;
  o.interleave_chance = 0;  // im2col + interleave: not measured (finding 12 is tiled only)
  o.mode = Mode::kIm2col;
  o.min_rank = 3;
  o.max_box_bytes = 64 * 1024;
  o.max_footprint_bytes = 512 * 1024;
  draw_valid_spec(rng, c, [&](Rng& r) { return random_im2col_spec(r, o); });
  if (!c.valid) return c;
  for (int b = 0; b < kColumnsPerDescriptor; ++b) {
    c.coords.push_back(random_im2col_coords(rng, c.spec));
    const auto off = random_im2col_offsets(rng, c.spec);
    c.offsets.push_back({off[0], off[1], off[2]});
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return run_test("load_im2col", argc, argv, reinterpret_cast<const void*>(&probe_kernel),
                  [](Context& ctx) {
                    LoadHarnessConfig cfg;
                    cfg.label = "load_im2col";
                    cfg.cases = ctx.args.count_or(kDescriptors, kQuickDescriptors);
                    cfg.batch = 512;
                    cfg.make_case = make_im2col_case;
                    return run_load_harness<true>(ctx, cfg);
                  });
}
