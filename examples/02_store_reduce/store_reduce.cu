// Example 02: TMA store and TMA reduce-add of tiles that threads wrote to shared memory.
//
// Each CTA loads a 32 x 16 fp32 tile of `src` with TMA, squares it in shared memory with ordinary
// stores, then one thread
//   - stores the tile to `out` (cp.async.bulk.tensor ... global.shared::cta), and
//   - adds it into `acc` (cp.reduce.async.bulk.tensor ... .add), element-wise and atomically.
// The ordering rules this shows: generic-proxy writes to shared memory need
// fence_proxy_async_shared() in the writing threads and a barrier before TMA reads the buffer, and
// the issuing thread waits for its bulk group (wait_group_read) before the buffer is released.
//
// The matrices are 100 x 200 floats stored with a pitch of 208: the tiles of the last column
// stick out past column 200 (and the last row of tiles past row 100), so TMA clips them; the
// 8 padding floats of each row carry a sentinel that must survive. Values are in [1, 2), so x*x
// and acc + x*x stay normal floats and the GPU's single rounding equals the CPU's.
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "common/example_util.hpp"
#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"

namespace {

constexpr int kRows = 100;
constexpr int kCols = 200;
constexpr int kPitch = 208;  // floats per row in memory: 832 bytes, a multiple of 16
constexpr int kTileRows = 16;
constexpr int kTileCols = 32;
constexpr int kTilesY = (kRows + kTileRows - 1) / kTileRows;  // 7 (the last one clipped)
constexpr int kTilesX = (kCols + kTileCols - 1) / kTileCols;  // 7 (the last one clipped)
constexpr float kSentinel = -1234.5f;

using TileBox = tma::Box<float, kTileCols, kTileRows>;  // (kTileRows, kTileCols): 2 KiB

__global__ void store_reduce_kernel(const __grid_constant__ tma::TensorMap src_map,
                                    const __grid_constant__ tma::TensorMap out_map,
                                    const __grid_constant__ tma::TensorMap acc_map) {
  __shared__ tma::BoxStorage<TileBox> tile;  // (kTileRows, kTileCols)
  __shared__ tma::Barrier bar;

  const std::int32_t x0 = static_cast<std::int32_t>(blockIdx.x) * kTileCols;
  const std::int32_t y0 = static_cast<std::int32_t>(blockIdx.y) * kTileRows;

  if (threadIdx.x == 0) {
    bar.init(1);
    tma::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    bar.arrive_expect_tx<TileBox>();
    tma::load(tile.data, &src_map, bar, {x0, y0});
  }
  bar.wait(0);

  // Ordinary (generic-proxy) writes to the tile.
  for (unsigned i = threadIdx.x; i < TileBox::kElements; i += blockDim.x) {
    tile.data[i] = tile.data[i] * tile.data[i];
  }
  tma::fence_proxy_async_shared();  // each writer: its writes become visible to the async proxy
  __syncthreads();                  // ... and all writers are done before the copy is issued

  if (threadIdx.x == 0) {
    tma::store(&out_map, tile.data, {x0, y0});
    tma::reduce<tma::model::ReduceOp::kAdd>(&acc_map, tile.data, {x0, y0});
    tma::commit_group();
    // The shared tile must stay valid until both copies have read it; the CTA exits right after.
    tma::wait_group_read<0>();
  }
}

std::vector<float> random_matrix(std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(1.0f, 2.0f);
  std::vector<float> m(static_cast<std::size_t>(kRows) * kPitch, kSentinel);
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c)
      m[static_cast<std::size_t>(r) * kPitch + c] = dist(gen);
  }
  return m;
}

tma::TensorMapSpec matrix_spec(const float* address) {
  tma::TensorMapSpec spec;
  spec.dtype = tma::DataType::kFloat32;
  spec.rank = 2;
  spec.address = address;
  spec.dims_inner_first = {kCols, kRows, 0, 0, 0};
  spec.strides_bytes_inner_first = {4, kPitch * 4, 0, 0, 0};
  spec.box_inner_first = {kTileCols, kTileRows, 0, 0, 0};
  return spec;
}

}  // namespace

int main() {
  if (!example::have_hopper()) return example::kExitSkip;

  const std::vector<float> host_src = random_matrix(7);
  const std::vector<float> host_acc = random_matrix(8);
  const std::size_t n = host_src.size();
  example::DeviceBuffer<float> src(n), out(n), acc(n);
  src.upload(host_src);
  out.upload(std::vector<float>(n, kSentinel));
  acc.upload(host_acc);

  tma::TensorMap src_map{}, out_map{}, acc_map{};
  try {
    src_map = tma::make_tensor_map(matrix_spec(src.get()));
    out_map = tma::make_tensor_map(matrix_spec(out.get()));
    acc_map = tma::make_tensor_map(matrix_spec(acc.get()));
  } catch (const tma::Error& e) {
    std::printf("FAIL: make_tensor_map: %s\n", e.what());
    return 1;
  }
  if (!tma::box_matches<TileBox>(matrix_spec(src.get()))) {
    std::printf("FAIL: the spec's box does not match TileBox\n");
    return 1;
  }

  store_reduce_kernel<<<dim3(kTilesX, kTilesY), 128>>>(src_map, out_map, acc_map);
  EXAMPLE_CHECK_LAUNCH();

  // CPU reference: out = src^2 inside the matrix, acc = acc + src^2; padding keeps the sentinel.
  std::vector<float> want_out(n, kSentinel), want_acc = host_acc;
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r) * kPitch + c;
      const float sq = host_src[i] * host_src[i];
      want_out[i] = sq;
      want_acc[i] = host_acc[i] + sq;
    }
  }
  bool ok = example::same_bytes("out (TMA store)", out.download(), want_out);
  ok = example::same_bytes("acc (TMA reduce-add)", acc.download(), want_acc) && ok;
  std::printf("%d tiles of %d x %d fp32 stored and reduce-added, edge tiles clipped\n",
              kTilesX * kTilesY, kTileRows, kTileCols);
  return example::verdict(ok);
}
