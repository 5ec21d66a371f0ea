// gpu_probe: one TMA load or store of one spec, on the hardware and in the reference model, for
// pinning down a rule: the random suites find that a class of specs misbehaves, a list of probes
// (tests/gpu/probes.txt, run by tests/gpu/run_probes.sh) says exactly which.
//
//   gpu_probe load|store dtype=bf16 dims=70,4 box=64,4 [strides=..] [es=1,1] [swizzle=128B]
//             [interleave=none] [fill=zero|nan] coords=0,0
// dims, box, es, coords innermost first; strides in bytes for dims 1.. (default: dense rows padded
// to 16 B). Prints one line: PASS, MISMATCH (bytes differing, first offset, hardware vs model),
// FAULT (the CUDA error), or INVALID (the validator's verdict). Exit 0 / 1 / 2 / 3; 77 no GPU.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"
#include "tma/host/validate.hpp"
#include "tma/model/load.hpp"
#include "tma/model/store.hpp"

namespace {

using namespace tma;

constexpr int kAlign = 1024;

template <int R>
__device__ void issue(bool is_load, std::byte* smem, const TensorMap* map, Barrier& bar,
                      const int* coords) {
  std::int32_t c[R];
  for (int i = 0; i < R; ++i)
    c[i] = coords[i];
  if (is_load) {
    load<R>(smem, map, bar, c);
  } else {
    store<R>(map, smem, c);
    commit_group();
    wait_group<0>();
  }
}

struct Args {
  int rank;
  int coords[5];
  std::uint32_t bytes;  // load: transaction bytes; both: image bytes
  int is_load;
};

__global__ void probe_kernel(const __grid_constant__ TensorMap map, const Args a, std::byte* image,
                             unsigned* status) {
  extern __shared__ std::byte raw[];
  __shared__ Barrier bar;
  std::byte* smem = raw + (kAlign - ptx::smem_addr(raw) % kAlign) % kAlign;
  for (std::uint32_t i = threadIdx.x; i < a.bytes; i += blockDim.x)
    smem[i] = image[i];
  fence_proxy_async_shared();
  if (threadIdx.x == 0) {
    bar.init(1);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (a.is_load) bar.arrive_expect_tx(a.bytes);
    switch (a.rank) {
      case 1:
        issue<1>(a.is_load, smem, &map, bar, a.coords);
        break;
      case 2:
        issue<2>(a.is_load, smem, &map, bar, a.coords);
        break;
      case 3:
        issue<3>(a.is_load, smem, &map, bar, a.coords);
        break;
      case 4:
        issue<4>(a.is_load, smem, &map, bar, a.coords);
        break;
      default:
        issue<5>(a.is_load, smem, &map, bar, a.coords);
        break;
    }
  }
  if (a.is_load) {
    const long long start = clock64();
    while (!bar.try_wait_parity(0)) {
      if (clock64() - start > 2000000000ll) {
        atomicOr(status, 1u);
        return;
      }
    }
  }
  __syncthreads();
  for (std::uint32_t i = threadIdx.x; i < a.bytes; i += blockDim.x)
    image[i] = smem[i];
}

std::vector<long long> list(const std::string& s) {
  std::vector<long long> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    v.push_back(std::stoll(item));
  return v;
}

DataType dtype_of(const std::string& s) {
  for (int t = 0; t < kNumDataTypes; ++t)
    if (to_string(static_cast<DataType>(t)) == s) return static_cast<DataType>(t);
  if (s == "bf16") return DataType::kBFloat16;
  if (s == "fp16") return DataType::kFloat16;
  if (s == "fp32") return DataType::kFloat32;
  if (s == "u8") return DataType::kUInt8;
  throw std::invalid_argument("unknown dtype " + s);
}

Swizzle swizzle_of(const std::string& s) {
  for (int v = 0; v <= 6; ++v)
    if (to_string(static_cast<Swizzle>(v)) == s) return static_cast<Swizzle>(v);
  throw std::invalid_argument("unknown swizzle " + s);
}

Interleave interleave_of(const std::string& s) {
  for (int v = 0; v <= 2; ++v)
    if (to_string(static_cast<Interleave>(v)) == s) return static_cast<Interleave>(v);
  throw std::invalid_argument("unknown interleave " + s);
}

int fault(const char* what, cudaError_t e) {
  std::printf("FAULT %s: %s\n", what, cudaGetErrorName(e));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  if (argc < 2 || (std::strcmp(argv[1], "load") != 0 && std::strcmp(argv[1], "store") != 0)) {
    std::fprintf(stderr, "usage: gpu_probe load|store key=value ...\n");
    return 2;
  }
  const bool is_load = std::strcmp(argv[1], "load") == 0;
  TensorMapSpec s;
  std::vector<long long> coords, strides;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string k = a.substr(0, eq), v = a.substr(eq + 1);
    if (k == "dtype")
      s.dtype = dtype_of(v);
    else if (k == "dims") {
      const auto d = list(v);
      s.rank = static_cast<int>(d.size());
      for (int j = 0; j < s.rank; ++j)
        s.dims_inner_first[j] = d[j];
    } else if (k == "box") {
      const auto d = list(v);
      for (std::size_t j = 0; j < d.size(); ++j)
        s.box_inner_first[j] = d[j];
    } else if (k == "es") {
      const auto d = list(v);
      for (std::size_t j = 0; j < d.size(); ++j)
        s.element_strides_inner_first[j] = d[j];
    } else if (k == "strides")
      strides = list(v);
    else if (k == "swizzle")
      s.swizzle = swizzle_of(v);
    else if (k == "interleave")
      s.interleave = interleave_of(v);
    else if (k == "fill")
      s.oob_fill = v == "nan" ? OobFill::kNan : OobFill::kZero;
    else if (k == "coords")
      coords = list(v);
  }
  const std::uint64_t e = element_bytes(s.dtype);
  std::uint64_t stride = (s.dims_inner_first[0] * e + 15) / 16 * 16;
  for (int d = 1; d < s.rank; ++d) {
    s.strides_bytes_inner_first[d] =
        d - 1 < static_cast<int>(strides.size()) ? strides[d - 1] : stride;
    stride = s.strides_bytes_inner_first[d] * s.dims_inner_first[d];
  }
  std::mt19937_64 rng(12345);
  const std::size_t footprint = model::global_footprint_bytes(s) + 256;
  std::vector<std::byte> global(footprint);
  for (auto& b : global)
    b = static_cast<std::byte>(rng());
  std::byte* d_global = nullptr;
  if (cudaMalloc(&d_global, footprint) != cudaSuccess)
    return fault("cudaMalloc", cudaGetLastError());
  s.address = d_global;
  std::ostringstream line;
  line << argv[1] << ' ' << to_string(s) << " coords=";
  for (auto c : coords)
    line << c << ',';
  const auto violations = validate(s);
  if (!violations.empty()) {
    std::printf("INVALID %s: %s\n", line.str().c_str(), to_string(violations[0]).c_str());
    return 3;
  }
  const TensorMap map = make_tensor_map(s);
  const std::size_t image_bytes = model::smem_bytes(s);
  std::vector<std::byte> image(image_bytes);
  for (auto& b : image)
    b = is_load ? std::byte{0xA5} : static_cast<std::byte>(rng());
  std::vector<std::int32_t> c32(coords.begin(), coords.end());
  std::vector<std::byte> expect_global = global, expect_image = image;
  if (is_load) {
    model::load_box(s, global, c32, expect_image);
  } else {
    model::store_box(s, image, c32, expect_global);
  }
  std::byte* d_image = nullptr;
  unsigned* d_status = nullptr;
  cudaMalloc(&d_image, image_bytes);
  cudaMalloc(&d_status, sizeof(unsigned));
  cudaMemset(d_status, 0, sizeof(unsigned));
  cudaMemcpy(d_global, global.data(), footprint, cudaMemcpyHostToDevice);
  cudaMemcpy(d_image, image.data(), image_bytes, cudaMemcpyHostToDevice);
  Args a{};
  a.rank = s.rank;
  for (std::size_t i = 0; i < coords.size() && i < 5; ++i)
    a.coords[i] = static_cast<int>(coords[i]);
  a.bytes = static_cast<std::uint32_t>(is_load ? transaction_bytes(s) : image_bytes);
  a.is_load = is_load;
  const int smem = static_cast<int>(image_bytes) + kAlign;
  cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  probe_kernel<<<1, 128, smem>>>(map, a, d_image, d_status);
  if (cudaError_t err = cudaDeviceSynchronize(); err != cudaSuccess) {
    std::printf("FAULT %s: %s\n", line.str().c_str(), cudaGetErrorName(err));
    return 2;
  }
  unsigned status = 0;
  cudaMemcpy(&status, d_status, sizeof(unsigned), cudaMemcpyDeviceToHost);
  std::vector<std::byte> got = is_load ? image : global;
  cudaMemcpy(got.data(), is_load ? d_image : d_global, got.size(), cudaMemcpyDeviceToHost);
  const auto& want = is_load ? expect_image : expect_global;
  std::size_t diff = 0, first = got.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      if (diff++ == 0) first = i;
    }
  if (status != 0) {
    std::printf("TIMEOUT %s\n", line.str().c_str());
    return 1;
  }
  if (diff == 0) {
    std::printf("PASS %s\n", line.str().c_str());
    return 0;
  }
  std::printf("MISMATCH %s: %zu of %zu bytes differ, first at %zu (hw", line.str().c_str(), diff,
              got.size(), first);
  for (std::size_t i = first; i < first + 8 && i < got.size(); ++i)
    std::printf(" %02x", static_cast<unsigned>(got[i]));
  std::printf(" / model");
  for (std::size_t i = first; i < first + 8 && i < got.size(); ++i)
    std::printf(" %02x", static_cast<unsigned>(want[i]));
  std::printf(")\n");
  return 1;
}
