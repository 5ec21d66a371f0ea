// gpu_debug_checks: the device-side debug checks (tma/device/debug.hpp: TMA_DEBUG_CHECKS and
// TMA_DEBUG_HANG_BOUND, on for this target whatever the build type) on the GPU. Each mode launches
// one kernel (one CTA, thread 0 at work) that breaks one precondition; the check must print its
// "tmakit: ..." line and trap, so the kernel fails. Mode "ok" keeps every precondition and must
// complete. A trap ends the process's CUDA context, so each mode runs in its own process:
// tests/gpu/run_debug_checks.sh runs them all and matches each mode's line.
//
//   gpu_debug_checks MODE
//     modes: ok, fields (replace_fields with box_inner_first[1] = 0), bulk-size (bulk_load of 24
//     bytes), bulk-align (bulk_load to shared memory 8 bytes off 16), not-shared (bulk_load to a
//     global address), hang (a Barrier wait on a phase no one completes)
//   exit 0: the kernel completed (and, for ok, did its work); 3: the kernel failed (the trap);
//   1: a host-side error; 2: an unknown mode; 77: no suitable GPU.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "gpu_common.hpp"
#include "tma/device.cuh"

namespace {

using namespace tma;

__global__ void probe_kernel() {}

enum Mode : int { kOk, kFields, kBulkSize, kBulkAlign, kNotShared, kHang, kModes };
constexpr const char* kModeNames[kModes] = {"ok",         "fields",     "bulk-size",
                                            "bulk-align", "not-shared", "hang"};

constexpr std::uint32_t kBytes = 256;

__global__ void debug_kernel(int mode, const std::byte* src, std::byte* global_dst, void* desc,
                             int* done) {
  __shared__ alignas(128) std::byte smem[kBytes + 16];
  __shared__ Barrier bar;
  if (threadIdx.x != 0) return;
  bar.init(1);
  fence_barrier_init();
  // A rank-2 view of `src`: 64 x 2 bf16 elements, rows 128 bytes apart, a 64 x 2 box.
  DescriptorFields<2> fields{src, {64, 2}, {0, 128}, {64, 2}, {1, 1}};
  switch (mode) {
    case kOk:
      bar.arrive_expect_tx(kBytes);
      bulk_load(smem, src, kBytes, bar);
      bar.wait(0);
      replace_fields(desc, fields);
      *done = static_cast<int>(smem[kBytes - 1]) + 1;  // the last byte loaded, + 1
      break;
    case kFields:
      fields.box_inner_first[1] = 0;
      replace_fields(desc, fields);
      break;
    case kBulkSize:
      bulk_load(smem, src, 24, bar);
      break;
    case kBulkAlign:
      bulk_load(smem + 8, src, 16, bar);
      break;
    case kNotShared:
      bulk_load(global_dst, src, 16, bar);
      break;
    case kHang:
      bar.wait(0);  // init(1) and no arrival: the phase never completes
      break;
    default:
      break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view name = argc == 2 ? argv[1] : "";
  int mode = -1;
  for (int m = 0; m < kModes; ++m)
    if (name == kModeNames[m]) mode = m;
  if (mode < 0) {
    std::fprintf(stderr, "usage: gpu_debug_checks MODE, one of:");
    for (const char* m : kModeNames)
      std::fprintf(stderr, " %s", m);
    std::fprintf(stderr, "\n");
    return 2;
  }
  int device = 0;
  if (auto reason = testing::why_no_gpu(reinterpret_cast<const void*>(probe_kernel), &device)) {
    std::printf("[gpu] gpu_debug_checks: SKIPPED: %s\n", reason->c_str());
    return 77;
  }
  std::byte* src = nullptr;
  std::byte* global_dst = nullptr;
  void* desc = nullptr;
  int* done = nullptr;
  try {  // host-side CUDA errors (TMA_CHECK_CUDA throws): exit 1
    TMA_CHECK_CUDA(cudaMalloc(&src, kBytes));
    TMA_CHECK_CUDA(cudaMalloc(&global_dst, kBytes));
    TMA_CHECK_CUDA(cudaMalloc(&desc, 128));
    TMA_CHECK_CUDA(cudaMalloc(&done, sizeof(int)));
    TMA_CHECK_CUDA(cudaMemset(src, 0x5A, kBytes));
    TMA_CHECK_CUDA(cudaMemset(desc, 0, 128));
    TMA_CHECK_CUDA(cudaMemset(done, 0, sizeof(int)));
    debug_kernel<<<1, 32>>>(mode, src, global_dst, desc, done);
    TMA_CHECK_LAUNCH();
    // The kernel's own failure is the expected outcome of every mode but ok: not an exception.
    const cudaError_t e = cudaDeviceSynchronize();
    std::printf("gpu_debug_checks %s: the kernel %s\n", kModeNames[mode],
                e == cudaSuccess ? "completed" : cudaGetErrorName(e));
    std::fflush(stdout);
    if (e != cudaSuccess) return 3;
    int got = 0;
    TMA_CHECK_CUDA(cudaMemcpy(&got, done, sizeof(int), cudaMemcpyDeviceToHost));
    if (mode == kOk && got != 0x5A + 1) {
      std::printf("gpu_debug_checks ok: the kernel's load gave %d, want %d\n", got - 1, 0x5A);
      return 1;
    }
  } catch (const testing::CudaError& x) {
    std::printf("gpu_debug_checks: %s\n", x.what());
    return 1;
  }
  return 0;
}
