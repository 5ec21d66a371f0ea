// tests/gpu: the random store / reduce cases of gpu_store, host-only, so that the CPU replay
// (tests/gpu/replay/store_replay.cpp) regenerates exactly the cases a GPU run drew.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../common/random_spec.hpp"
#include "spec_draw.hpp"
#include "tma/model/model.hpp"

namespace tma::testing {

// StoreCase::op for a plain store; otherwise a model::ReduceOp.
constexpr int kStoreOp = -1;

struct StoreCase {
  std::int64_t index = 0;
  std::uint64_t case_seed = 0;
  int op = kStoreOp;
  DataKind kind = DataKind::kBits;
  bool wait_read = false;
  DrawnSpec gen;  // the spec, and whether the validator accepted one
  std::array<std::int32_t, kMaxRank> coords{};

  // Where gpu_store's batch puts the case (filled by its run_batch).
  std::size_t footprint = 0, slot_bytes = 0, global_offset = 0;
  std::size_t image_bytes = 0, image_offset = 0;
};

// The element types a reduce `op` is tested with: every one model::reduce_supported lists.
inline std::vector<DataType> reduce_types(model::ReduceOp op) {
  std::vector<DataType> out;
  for (const DataType t : hopper_data_types()) {
    if (model::reduce_supported(op, t)) out.push_back(t);
  }
  return out;
}

inline StoreCase make_store_case(std::int64_t index, std::uint64_t case_seed, bool negative,
                                 double interleave) {
  StoreCase c;
  c.index = index;
  c.case_seed = case_seed;
  Rng rng(case_seed);
  SpecOptions o;
  o.interleave_chance = interleave;  // --interleave P; default 0.12 as in gpu_load (finding 12)
  o.max_box_bytes = 48 * 1024;
  o.max_footprint_bytes = 256 * 1024;
  if (index % 3 != 0) {
    const auto op = static_cast<model::ReduceOp>(rng.range(0, model::kNumReduceOps - 1));
    const auto types = reduce_types(op);
    if (!types.empty()) {
      c.op = static_cast<int>(op);
      o.dtypes = {rng.pick(types)};
      if (is_floating_point(o.dtypes[0]) && rng.chance(0.5)) c.kind = DataKind::kFinite;
    }
  }
  c.wait_read = rng.chance(0.5);
  draw_valid_spec(rng, c.gen, [&](Rng& r) { return random_tiled_spec(r, o); });
  if (!c.gen.valid) return c;
  const TensorMapSpec& s = c.gen.spec;
  if (!negative) {
    c.coords = random_tiled_coords(rng, s, Where::kNonNegative);
  } else {
    auto coords = random_tiled_coords(rng, s, Where::kAnywhere);
    const auto d = static_cast<std::size_t>(rng.range(0, s.rank - 1));
    if (std::none_of(coords.begin(), coords.begin() + s.rank,
                     [](std::int32_t v) { return v < 0; })) {
      coords[d] =
          -static_cast<std::int32_t>(rng.range(1, std::max<std::int64_t>(1, s.box_inner_first[d])));
    }
    c.coords = coords;
  }
  return c;
}

}  // namespace tma::testing
