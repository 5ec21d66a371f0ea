// A consumer's CUDA file, built with the CMake lines the README gives for .cu files (C++20 for
// nvcc, sm_90a): a kernel that loads one tile through tma::load and a tma::Barrier. It runs only
// where a GPU with TMA is; elsewhere it prints why and exits 0 (the build is the test).
#include <cstdio>

#include "tma/device.cuh"
#include "tma/tma.hpp"

using Tile = tma::Box<std::uint16_t, 64, 128>;  // (64 columns, 128 rows) of bf16, innermost first

__global__ void load_tile(const __grid_constant__ tma::TensorMap map, std::uint16_t* out) {
  __shared__ tma::BoxStorage<Tile, 1024> tile;
  __shared__ tma::Barrier bar;
  if (threadIdx.x == 0) {
    bar.init(1);
    tma::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    bar.arrive_expect_tx<Tile>();
    tma::load(tile.data, &map, bar, {0, 0});
  }
  bar.wait(0);
  if (threadIdx.x == 0) *out = tile.data[0];
}

int main() {
  const tma::DeviceSupport gpu = tma::device_support();
  if (!gpu.tma) {
    std::printf("kernel.cu built; not run: %s\n", gpu.reason.c_str());
    return 0;
  }
  constexpr std::size_t kElements = 4096 * 4096;  // the matrix, then one output element
  std::uint16_t* d = nullptr;
  if (cudaMalloc(&d, (kElements + 8) * sizeof(std::uint16_t)) != cudaSuccess) return 1;
  const std::uint16_t one = 0x3F80;  // bf16 1.0
  if (cudaMemcpy(d, &one, sizeof one, cudaMemcpyHostToDevice) != cudaSuccess) return 1;
  const tma::TensorMapSpec spec = tma::make_tiled_spec<tma::bf16>(d, {4096, 4096}, {}, {128, 64});
  load_tile<<<1, 128>>>(tma::make_tensor_map(spec), d + kElements);
  std::uint16_t got = 0;
  if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
      cudaMemcpy(&got, d + kElements, sizeof got, cudaMemcpyDeviceToHost) != cudaSuccess) {
    std::printf("kernel.cu: a CUDA call failed\n");
    return 1;
  }
  (void)cudaFree(d);
  std::printf("kernel.cu: element (0, 0) loaded through TMA: 0x%04x (want 0x3f80)\n", got);
  return got == one ? 0 : 1;
}
