// gpu_pipeline: a stress test of Pipeline<kStages> (device/pipeline.hpp) with TMA loads.
//
// A large random uint32 tensor (1024 x H elements, SWIZZLE_128B tiles of 32 x 32) is copied to an
// output tensor through a ring of kStages shared-memory stages: one producer thread (warp 0) loads
// tile after tile, 1 or 2 consumer warpgroups wait for each stage, copy the tile out (undoing the
// swizzle with tma::swizzle_offset) and release the stage. Producer and consumer warps stall for a
// hashed, random number of cycles at every step, so the ring runs full, empty and everything in
// between. kStages in {2, 4, 8} x {1, 2} consumer warpgroups; each block runs over a thousand
// iterations. The output must equal the input byte for byte. A run that deadlocks is caught by
// the host's watchdog (cudaStreamQuery with a timeout) and reported instead of hanging.
//
// Pipeline::producer_drain: after its last tile the producer drains the ring, then reads a
// shared count of the consumers' releases (each releasing lane adds 1 just before its release)
// and reports it; the host checks it against every release of every tile of the block. The
// consumers' random delays make a drain that returned early see fewer. "Short" runs give each
// block fewer tiles than stages (3: some stages are never filled, which drain must pass at once)
// and check that the tiles no block copied still hold the output's poison.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "../common/random_spec.hpp"
#include "device_util.hpp"
#include "gpu_common.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/model/swizzle.hpp"

namespace {

using namespace tma;
using namespace tma::testing;

__global__ void probe_kernel() {}

constexpr int kWidth = 1024;  // elements (uint32) per row
constexpr int kTile = 32;     // 32 x 32 uint32: 128 B rows, 4 KiB per tile
constexpr int kTileBytes = kTile * kTile * 4;
constexpr int kRowBytes = kWidth * 4;
constexpr int kTilesX = kWidth / kTile;
constexpr int kBlocks = 16;
constexpr int kFullRows = 32768;  // 32768 tiles: 2048 iterations per block
constexpr int kQuickRows = 512;   // 512 tiles: 32 iterations per block
constexpr int kMaxDelayCycles = 3000;

enum class Role { kProducer, kConsumer };

// splitmix64's finalizer, on the device: a well-mixed hash of (seed, tile, who).
__device__ inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A hashed delay in [0, max_cycles): a quarter of the steps do not wait at all.
__device__ inline void random_delay(std::uint64_t seed, int tile, int who, int max_cycles) {
  const std::uint64_t h =
      mix(seed ^ (static_cast<std::uint64_t>(tile) << 8) ^ static_cast<std::uint64_t>(who));
  if ((h & 3u) == 0 || max_cycles <= 0) return;
  const long long cycles =
      static_cast<long long>((h >> 8) % static_cast<std::uint64_t>(max_cycles));
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Producer: one thread loads every tile of this block into the ring; returns the state after the
// last one.
template <int kStages>
__device__ PipelineState produce(Pipeline<kStages>& pipe, const TensorMap* map, std::byte* stages,
                                 int first, int last, std::uint64_t seed, int max_delay) {
  PipelineState s = Pipeline<kStages>::start();
  for (int t = first; t < last; ++t) {
    random_delay(seed, t, 0, max_delay);
    pipe.producer_acquire(s);
    pipe.producer_commit(s, kTileBytes);
    const std::int32_t coords[2] = {(t % kTilesX) * kTile, (t / kTilesX) * kTile};
    load<2>(stages + s.index * kTileBytes, map, pipe.full(s), coords);
    s.advance();
  }
  return s;
}

// Consumers: every consumer thread copies its 16-byte chunks of each tile to the output.
template <int kStages>
__device__ void consume(Pipeline<kStages>& pipe, const std::byte* stages, std::byte* out, int first,
                        int last, std::uint64_t seed, int max_delay, int consumer_threads,
                        unsigned* released) {
  const int me = static_cast<int>(threadIdx.x) - 32;  // 0 .. consumer_threads - 1
  const int warp = me / 32;
  PipelineState s = Pipeline<kStages>::start();
  for (int t = first; t < last; ++t) {
    pipe.consumer_wait(s);
    random_delay(seed, t, 1 + warp, max_delay);
    const std::byte* tile = stages + s.index * kTileBytes;
    const int x = (t % kTilesX) * kTile, y = (t / kTilesX) * kTile;
    for (int q = me; q < kTileBytes / 16; q += consumer_threads) {
      const int row = q / 8, chunk = q % 8;  // 8 chunks of 16 B per 128-byte row
      const std::uint32_t src =
          swizzle_offset(Swizzle::k128B, static_cast<std::uint32_t>(row * 128 + chunk * 16));
      *reinterpret_cast<uint4*>(out + static_cast<std::size_t>(y + row) * kRowBytes + x * 4 +
                                chunk * 16) = *reinterpret_cast<const uint4*>(tile + src);
    }
    __syncwarp();  // the whole warp has read the stage before it is released
    if (threadIdx.x % 32 == 0) {
      atomicAdd(released, 1u);  // ordered before the release (mbarrier.arrive: release, CTA)
      pipe.consumer_release(s);
    }
    s.advance();
  }
}

// Consumer warps per block (each releases every stage once per tile): the kernel's empty-barrier
// count and the host's expected release count per tile.
template <int kConsumerGroups>
inline constexpr int kConsumerWarpsOf = 4 * kConsumerGroups;

template <int kStages, int kConsumerGroups>
__global__ void __launch_bounds__(32 + 128 * kConsumerGroups)
    pipeline_kernel(const __grid_constant__ TensorMap map, std::byte* out, int tiles_per_block,
                    int total_tiles, std::uint64_t seed, int max_delay, unsigned* drain_seen) {
  __shared__ Pipeline<kStages> pipe;
  __shared__ unsigned released;  // consumer releases so far (one per consumer warp and tile)
  std::byte* stages = aligned_dynamic_smem();  // (kStages, kTileBytes)
  constexpr int kConsumerWarps = kConsumerWarpsOf<kConsumerGroups>;
  if (threadIdx.x == 0) {
    pipe.init(1, kConsumerWarps);  // 1 producer arrival; 1 release per warp
    released = 0;
  }
  __syncthreads();
  const int first = static_cast<int>(blockIdx.x) * tiles_per_block;
  const int last = min(first + tiles_per_block, total_tiles);
  const Role role = threadIdx.x < 32 ? Role::kProducer : Role::kConsumer;
  if (role == Role::kProducer) {
    if (threadIdx.x == 0) {
      const PipelineState s = produce(pipe, &map, stages, first, last, seed, max_delay);
      pipe.producer_drain(s);
      // Acquired by the drain's last waits: every release, and so every count before it.
      drain_seen[blockIdx.x] = atomicAdd(&released, 0u);
    }
  } else {
    consume(pipe, stages, out, first, last, seed, max_delay, 128 * kConsumerGroups, &released);
  }
}

// One run: every tile of the tensor, or (short_run) 3 tiles per block, fewer than most rings'
// stages; the rest of the output must keep its poison.
template <int kStages, int kConsumerGroups>
bool run_config(Context& ctx, const TensorMap& map, const std::vector<std::byte>& input,
                DeviceBuffer& d_out, int rows, bool short_run) {
  const std::string name = "pipeline/s" + std::to_string(kStages) + "/cg" +
                           std::to_string(kConsumerGroups) + (short_run ? "/short" : "");
  constexpr std::byte kPoison{0xA5};
  const int all_tiles = kTilesX * (rows / kTile);
  const int total_tiles = short_run ? std::min(3 * kBlocks, all_tiles) : all_tiles;
  const int tiles_per_block = (total_tiles + kBlocks - 1) / kBlocks;
  const std::uint64_t seed =
      derive_seed(ctx.report.seed(), static_cast<std::uint64_t>(kStages * 10 + kConsumerGroups));
  TMA_CHECK_CUDA(cudaMemset(d_out.data(), static_cast<int>(kPoison), input.size()));
  DeviceBuffer d_seen(kBlocks * sizeof(unsigned));
  TMA_CHECK_CUDA(cudaMemset(d_seen.data(), 0xFF, kBlocks * sizeof(unsigned)));
  const std::size_t smem = dynamic_smem_for(static_cast<std::size_t>(kStages) * kTileBytes);
  const auto kernel = pipeline_kernel<kStages, kConsumerGroups>;
  TMA_CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(smem)));
  kernel<<<kBlocks, 32 + 128 * kConsumerGroups, smem>>>(map, d_out.data(), tiles_per_block,
                                                        total_tiles, seed, kMaxDelayCycles,
                                                        reinterpret_cast<unsigned*>(d_seen.data()));
  TMA_CHECK_LAUNCH();
  sync_with_watchdog(nullptr, ctx.args.timeout_s, name, ctx.report);
  std::vector<std::byte> out(input.size());
  d_out.download(out);
  // What the output must hold: the copied tiles, poison everywhere else.
  std::vector<std::byte> want_all(input.size(), kPoison);
  for (int t = 0; t < total_tiles; ++t) {
    const int x = (t % kTilesX) * kTile, y = (t / kTilesX) * kTile;
    for (int r = 0; r < kTile; ++r) {
      const auto at = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(y + r) * kRowBytes +
                                                  static_cast<std::size_t>(x) * 4);
      std::copy_n(input.begin() + at, kTile * 4, want_all.begin() + at);
    }
  }
  const auto diff = compare_bytes(out, want_all);
  // producer_drain: each block's producer saw every release of its tiles.
  std::vector<std::byte> seen_bytes(kBlocks * sizeof(unsigned));
  d_seen.download(seen_bytes);
  int bad_drains = 0;
  for (int b = 0; b < kBlocks; ++b) {
    unsigned seen = 0;
    std::memcpy(&seen, seen_bytes.data() + b * sizeof(unsigned), sizeof seen);
    const int tiles = std::max(0, std::min(tiles_per_block, total_tiles - b * tiles_per_block));
    const auto want = static_cast<unsigned>(tiles * kConsumerWarpsOf<kConsumerGroups>);
    if (seen == want) continue;
    ++bad_drains;
    Json j;
    j.num("stages", kStages)
        .num("consumer_groups", kConsumerGroups)
        .num("block", b)
        .num("releases_seen", seen)
        .num("releases_expected", want)
        .str("note",
             "producer_drain returned before every consumer release of the block's tiles "
             "(0xFFFFFFFF: the producer never reported)");
    ctx.report.failure("drain", name, j);
  }
  std::int64_t bad_tiles = 0;
  if (diff) {
    // One record per differing tile (the first few), with the tile's own bytes.
    for (int t = 0; t < all_tiles; ++t) {
      const int x = (t % kTilesX) * kTile, y = (t / kTilesX) * kTile;
      std::vector<std::byte> hw_tile(kTileBytes), want(kTileBytes);
      for (int r = 0; r < kTile; ++r) {
        const std::size_t at =
            static_cast<std::size_t>(y + r) * kRowBytes + static_cast<std::size_t>(x) * 4;
        std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(at), kTile * 4,
                    hw_tile.begin() + r * kTile * 4);
        std::copy_n(want_all.begin() + static_cast<std::ptrdiff_t>(at), kTile * 4,
                    want.begin() + r * kTile * 4);
      }
      const auto d = compare_bytes(hw_tile, want);
      if (!d) continue;
      ++bad_tiles;
      Json j;
      j.num("stages", kStages)
          .num("consumer_groups", kConsumerGroups)
          .num("tile", t)
          .num("block", t / tiles_per_block)
          .num("iteration", t % tiles_per_block)
          .num("x", x)
          .num("y", y)
          .num("delay_seed", seed)
          .str("note", "tile bytes row-major (32 rows x 128 B), unswizzled");
      ctx.report.mismatch("mismatch", name, j, hw_tile, want, *d);
    }
  }
  std::printf(
      "[gpu] %s: %d tiles (%d iterations per block), %lld mismatched tiles, %d blocks whose drain "
      "missed releases\n",
      name.c_str(), total_tiles, tiles_per_block, static_cast<long long>(bad_tiles), bad_drains);
  return !diff && bad_drains == 0;
}

}  // namespace

int main(int argc, char** argv) {
  return run_test(
      "pipeline", argc, argv, reinterpret_cast<const void*>(&probe_kernel), [](Context& ctx) {
        const int rows = ctx.args.count >= kTile ? static_cast<int>(ctx.args.count / kTile * kTile)
                         : ctx.args.quick        ? kQuickRows
                                                 : kFullRows;
        const std::size_t bytes = static_cast<std::size_t>(rows) * kRowBytes;
        std::vector<std::byte> input(bytes);
        Rng rng(derive_seed(ctx.report.seed(), 0x919E11Eu));
        rng.fill(input);
        DeviceBuffer d_in(bytes), d_out(bytes);
        d_in.upload(input);

        TensorMapSpec spec;
        spec.dtype = DataType::kUInt32;
        spec.rank = 2;
        spec.address = d_in.data();
        spec.dims_inner_first = {kWidth, static_cast<std::uint64_t>(rows)};
        spec.strides_bytes_inner_first = {4, kRowBytes};
        spec.box_inner_first = {kTile, kTile};
        spec.swizzle = Swizzle::k128B;
        const TensorMap map = make_tensor_map(spec);

        bool ok = true;
        for (const bool short_run : {false, true}) {
          ok = run_config<2, 1>(ctx, map, input, d_out, rows, short_run) && ok;
          ok = run_config<2, 2>(ctx, map, input, d_out, rows, short_run) && ok;
          ok = run_config<4, 1>(ctx, map, input, d_out, rows, short_run) && ok;
          ok = run_config<4, 2>(ctx, map, input, d_out, rows, short_run) && ok;
          ok = run_config<8, 1>(ctx, map, input, d_out, rows, short_run) && ok;
          ok = run_config<8, 2>(ctx, map, input, d_out, rows, short_run) && ok;
        }
        return ok;
      });
}
