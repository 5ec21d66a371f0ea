// Example 03: TMA multicast in clusters of 2 and of 4 CTAs.
//
// Every CTA of a cluster needs the same 128 x 64 fp16 tile (as the CTAs of a GEMM cluster share
// an operand). Instead of each loading all of it, CTA rank r loads only slice r (128 / n rows)
// and multicasts it: one read from global memory, written to the same shared-memory offset in
// all n CTAs and completed on the barrier at the same offset in each. Every CTA's barrier
// therefore expects the whole tile: n slices, one from each CTA.
//
// Each CTA then checks its shared tile against global memory itself (counting mismatches per
// CTA), and copies it out for the host's byte-exact comparison.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/example_util.hpp"
#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"

namespace {

constexpr int kRows = 512;  // matrix (kRows, kCols), row-major fp16
constexpr int kCols = 64;
constexpr int kTileRows = 128;
constexpr int kTiles = kRows / kTileRows;  // one cluster per tile

using TileBox = tma::Box<std::uint16_t, kCols, kTileRows>;  // (kTileRows, kCols): 16 KiB

template <int kClusterSize>
__global__ void multicast_kernel(const __grid_constant__ tma::TensorMap slice_map,
                                 const std::uint16_t* in, std::uint16_t* out,
                                 unsigned* mismatches) {
  // Each CTA loads one slice of kTileRows / kClusterSize rows.
  using SliceBox = tma::Box<std::uint16_t, kCols, kTileRows / kClusterSize>;
  static_assert(SliceBox::kBytes * kClusterSize == TileBox::kBytes, "the slices make the tile");

  __shared__ tma::BoxStorage<TileBox> tile;  // (kTileRows, kCols), same offset in every CTA
  __shared__ tma::Barrier bar;

  const std::uint32_t rank = tma::cluster_cta_rank();
  const int tile_index = static_cast<int>(blockIdx.x) / kClusterSize;  // the cluster's tile
  const std::int32_t row0 = tile_index * kTileRows;

  if (threadIdx.x == 0) {
    bar.init(1);
    tma::fence_barrier_init();
  }
  // Every CTA's barrier is initialized before any CTA's multicast can complete bytes on it.
  tma::cluster_sync();

  if (threadIdx.x == 0) {
    // kClusterSize slices land here, one from each CTA of the cluster (this one included).
    bar.arrive_expect_tx<SliceBox, kClusterSize>();
    const std::int32_t slice_row = static_cast<std::int32_t>(rank) * (kTileRows / kClusterSize);
    tma::load_multicast(tile.data + slice_row * kCols, &slice_map, bar, {0, row0 + slice_row},
                        tma::cta_mask_all(kClusterSize));
  }
  bar.wait(0);

  // This CTA checks what it received against global memory.
  unsigned bad = 0;
  for (unsigned i = threadIdx.x; i < TileBox::kElements; i += blockDim.x) {
    if (tile.data[i] != in[row0 * kCols + i]) ++bad;
    out[blockIdx.x * TileBox::kElements + i] = tile.data[i];
  }
  if (bad != 0) atomicAdd(&mismatches[blockIdx.x], bad);

  // No CTA leaves while a peer could still be working with the cluster (good practice with
  // distributed shared memory; here every byte aimed at this CTA has already arrived).
  tma::cluster_sync();
}

template <int kClusterSize>
bool run(const std::vector<std::uint16_t>& host_in,
         const example::DeviceBuffer<std::uint16_t>& in) {
  constexpr int kCtas = kTiles * kClusterSize;
  example::DeviceBuffer<std::uint16_t> out(static_cast<std::size_t>(kCtas) * TileBox::kElements);
  example::DeviceBuffer<unsigned> mismatches(kCtas);
  EXAMPLE_CHECK(cudaMemset(out.get(), 0, static_cast<std::size_t>(kCtas) * TileBox::kBytes));
  EXAMPLE_CHECK(cudaMemset(mismatches.get(), 0, kCtas * sizeof(unsigned)));

  // The descriptor's box is one slice: kCols x (kTileRows / kClusterSize).
  tma::TensorMapSpec spec;
  spec.dtype = tma::DataType::kFloat16;
  spec.rank = 2;
  spec.address = in.get();
  spec.dims_inner_first = {kCols, kRows, 0, 0, 0};
  spec.strides_bytes_inner_first = {2, kCols * 2, 0, 0, 0};
  spec.box_inner_first = {kCols, kTileRows / kClusterSize, 0, 0, 0};
  if (!tma::box_matches<tma::Box<std::uint16_t, kCols, kTileRows / kClusterSize>>(spec)) {
    std::printf("FAIL: the spec's box does not match the kernel's slice box\n");
    return false;
  }
  tma::TensorMap map{};
  try {
    map = tma::make_tensor_map(spec);
  } catch (const tma::Error& e) {
    std::printf("FAIL: make_tensor_map: %s\n", e.what());
    return false;
  }

  cudaLaunchConfig_t config{};
  config.gridDim = dim3(kCtas);
  config.blockDim = dim3(128);
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kClusterSize;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  EXAMPLE_CHECK(cudaLaunchKernelEx(&config, multicast_kernel<kClusterSize>, map,
                                   static_cast<const std::uint16_t*>(in.get()), out.get(),
                                   mismatches.get()));
  EXAMPLE_CHECK_LAUNCH();

  bool ok = true;
  const std::vector<unsigned> bad = mismatches.download();
  for (int cta = 0; cta < kCtas; ++cta) {
    if (bad[cta] != 0) {
      std::printf("FAIL: cluster size %d: CTA %d (rank %d) found %u wrong elements in its tile\n",
                  kClusterSize, cta, cta % kClusterSize, bad[cta]);
      ok = false;
    }
  }
  std::vector<std::uint16_t> want(static_cast<std::size_t>(kCtas) * TileBox::kElements);
  for (int cta = 0; cta < kCtas; ++cta) {
    const std::size_t first = static_cast<std::size_t>(cta / kClusterSize) * TileBox::kElements;
    for (std::size_t i = 0; i < TileBox::kElements; ++i) {
      want[static_cast<std::size_t>(cta) * TileBox::kElements + i] = host_in[first + i];
    }
  }
  ok = example::same_bytes(kClusterSize == 2 ? "tiles (cluster 2)" : "tiles (cluster 4)",
                           out.download(), want) &&
       ok;
  std::printf("cluster size %d: %d CTAs, each received %d multicast slices of %u bytes: %s\n",
              kClusterSize, kCtas, kClusterSize, TileBox::kBytes / kClusterSize,
              ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  if (!example::have_hopper(&prop)) return example::kExitSkip;
  int cluster_launch = 0;
  EXAMPLE_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, 0));
  if (!cluster_launch) {
    std::printf("SKIP: device 0 cannot launch thread-block clusters\n");
    return example::kExitSkip;
  }

  const std::vector<std::uint16_t> host_in =
      example::random_nonzero<std::uint16_t>(static_cast<std::size_t>(kRows) * kCols, 3);
  example::DeviceBuffer<std::uint16_t> in(host_in.size());
  in.upload(host_in);

  bool ok = run<2>(host_in, in);
  ok = run<4>(host_in, in) && ok;
  return example::verdict(ok);
}
