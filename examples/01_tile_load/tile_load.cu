// Example 01: one thread loads a 128 x 64 tile of fp16 with TMA; the CTA waits on an mbarrier.
//
// The tmakit version of the classic first TMA program (a CTA copies a (kBlockM, kBlockK) =
// (128, 64) half-precision tile from a row-major matrix): the host describes the matrix once as a
// tensor map, one thread per CTA issues the copy, every thread waits on the barrier, then reads
// shared memory. The matrix here is 300 x 200, so the tiles on the right and bottom edges stick
// out of it: TMA fills those elements with zeros, and the check below expects exactly that.
//
// Each CTA copies its tile to `out` (tile after tile, row-major) so that the host can compare
// every byte with a plain CPU copy of the matrix.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/example_util.hpp"
#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"

namespace {

constexpr int kRows = 300;  // matrix (kRows, kCols), row-major fp16
constexpr int kCols = 200;
constexpr int kBlockM = 128;                              // tile rows
constexpr int kBlockK = 64;                               // tile columns
constexpr int kTilesM = (kRows + kBlockM - 1) / kBlockM;  // 3
constexpr int kTilesK = (kCols + kBlockK - 1) / kBlockK;  // 4

// The box, innermost first: kBlockK columns, kBlockM rows of 2-byte elements (16 KiB). Its byte
// count is what the barrier expects; it is never retyped.
using TileBox = tma::Box<std::uint16_t, kBlockK, kBlockM>;

__global__ void tile_load_kernel(const __grid_constant__ tma::TensorMap map, std::uint16_t* out) {
  __shared__ tma::BoxStorage<TileBox> tile;  // (kBlockM, kBlockK) row-major, 128-byte aligned
  __shared__ tma::Barrier bar;

  if (threadIdx.x == 0) {
    tma::prefetch_descriptor(&map);
    bar.init(1);                // one arrival per phase: the thread below
    tma::fence_barrier_init();  // make the initialized barrier visible to the TMA unit
  }
  __syncthreads();

  const int tile_k = static_cast<int>(blockIdx.x);
  const int tile_m = static_cast<int>(blockIdx.y);
  if (threadIdx.x == 0) {
    bar.arrive_expect_tx<TileBox>();  // 16384 bytes will complete this phase
    tma::load(tile.data, &map, bar, {tile_k * kBlockK, tile_m * kBlockM});  // {column, row}
  }
  bar.wait(0);  // phase 0 completes when the arrival and all 16384 bytes are in

  std::uint16_t* dst = out + (tile_m * kTilesK + tile_k) * TileBox::kElements;
  for (unsigned i = threadIdx.x; i < TileBox::kElements; i += blockDim.x)
    dst[i] = tile.data[i];
}

}  // namespace

int main() {
  if (!example::have_hopper()) return example::kExitSkip;

  // Random, never-zero fp16 bit patterns (a copy moves bits; their values do not matter).
  const std::vector<std::uint16_t> host_in =
      example::random_nonzero<std::uint16_t>(static_cast<std::size_t>(kRows) * kCols, 2024);
  example::DeviceBuffer<std::uint16_t> in(host_in.size());
  in.upload(host_in);
  example::DeviceBuffer<std::uint16_t> out(static_cast<std::size_t>(kTilesM) * kTilesK *
                                           TileBox::kElements);
  EXAMPLE_CHECK(
      cudaMemset(out.get(), 0xAB, static_cast<std::size_t>(kTilesM) * kTilesK * TileBox::kBytes));

  // The tensor map, innermost dimension first: columns, then rows.
  tma::TensorMapSpec spec;
  spec.dtype = tma::DataType::kFloat16;
  spec.rank = 2;
  spec.address = in.get();
  spec.dims_inner_first = {kCols, kRows, 0, 0, 0};
  spec.strides_bytes_inner_first = {2, kCols * 2, 0, 0, 0};  // row pitch 400 B, a multiple of 16
  spec.box_inner_first = {kBlockK, kBlockM, 0, 0, 0};
  if (!tma::box_matches<TileBox>(spec)) {
    std::printf("FAIL: the spec's box does not match TileBox: %s\n", tma::to_string(spec).c_str());
    return 1;
  }
  tma::TensorMap map{};
  try {
    map = tma::make_tensor_map(spec);
  } catch (const tma::Error& e) {
    std::printf("FAIL: make_tensor_map: %s\n", e.what());
    return 1;
  }

  tile_load_kernel<<<dim3(kTilesK, kTilesM), 128>>>(map, out.get());
  EXAMPLE_CHECK_LAUNCH();

  // CPU reference: each tile cut out of the matrix, zeros outside it.
  std::vector<std::uint16_t> want(static_cast<std::size_t>(kTilesM) * kTilesK * TileBox::kElements);
  for (int tm = 0; tm < kTilesM; ++tm) {
    for (int tk = 0; tk < kTilesK; ++tk) {
      for (int r = 0; r < kBlockM; ++r) {
        for (int c = 0; c < kBlockK; ++c) {
          const int row = tm * kBlockM + r;
          const int col = tk * kBlockK + c;
          const std::size_t i = (static_cast<std::size_t>(tm) * kTilesK + tk) * TileBox::kElements +
                                static_cast<std::size_t>(r) * kBlockK + c;
          want[i] =
              row < kRows && col < kCols ? host_in[static_cast<std::size_t>(row) * kCols + col] : 0;
        }
      }
    }
  }
  const bool ok = example::same_bytes("tiles", out.download(), want);
  std::printf("%d tiles of %d x %d fp16 (%u bytes each) loaded by TMA\n", kTilesM * kTilesK,
              kBlockM, kBlockK, TileBox::kBytes);
  return example::verdict(ok);
}
