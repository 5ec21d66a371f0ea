// Example 04: tensor maps made and changed inside kernels (tensormap.replace).
//
// The case it serves: one launch works on a batch of tensors of different shapes (say, the
// per-expert matrices of a mixture of experts), too many or too dynamic to encode on the host.
// The host encodes one template descriptor with the element type (fp32) and layout options; then
//   1. make_descriptors: one warp per tensor copies the template to shared memory, replaces
//      address, extents, row pitch and box (tma::make_descriptor), and publishes the result to
//      global memory with tensormap.cp_fenceproxy (release);
//   2. load_tiles: each CTA acquires its tensor's descriptor (fence.proxy.tensormap::generic
//      .acquire) and loads one tile through it with TMA; tiles past the edges are zero-filled;
//   3. retarget: one thread edits descriptor 0 in place in global memory so that it describes
//      tensor 2 (tma::update_descriptor: replace + release fence), and load_tiles runs again.
// The host checks every tile byte for byte after steps 2 and 3. As a side note it also encodes
// each tensor's descriptor on the host and reports whether the device-built bytes are identical.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "common/example_util.hpp"
#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"

namespace {

constexpr int kTensors = 3;
constexpr int kTileCols = 16;  // the box every descriptor gets: 16 columns x 8 rows of fp32
constexpr int kTileRows = 8;
constexpr int kTilesPerTensor = 4;  // tiles loaded per tensor, along the diagonal

using TileBox = tma::Box<float, kTileCols, kTileRows>;  // 512 bytes

struct Shape {
  int rows, cols, pitch;  // pitch in floats: a multiple of 4 (16 bytes)
};
constexpr Shape kShapes[kTensors] = {{40, 56, 56}, {23, 30, 32}, {17, 80, 84}};

// Step 1: warp w makes descriptor w from the template.
__global__ void make_descriptors(const __grid_constant__ tma::TensorMap tmpl,
                                 const tma::DescriptorFields<2>* fields, tma::TensorMap* out) {
  __shared__ tma::DescriptorScratch scratch;  // 128-byte-aligned staging copy
  // The whole warp: make_descriptor ends with the warp-wide tensormap.cp_fenceproxy.
  tma::make_descriptor(&out[blockIdx.x], &tmpl, fields[blockIdx.x], scratch);
}

// Step 2: CTA (t, k) loads tile k of tensor t through descriptor t and copies it out.
__global__ void load_tiles(const tma::TensorMap* descs, float* out) {
  __shared__ tma::BoxStorage<TileBox> tile;
  __shared__ tma::Barrier bar;
  const tma::TensorMap* desc = &descs[blockIdx.y];
  if (threadIdx.x == 0) {
    tma::acquire_descriptor(desc);  // the thread that issues the copy acquires the new descriptor
    bar.init(1);
    tma::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::int32_t k = static_cast<std::int32_t>(blockIdx.x);
    bar.arrive_expect_tx<TileBox>();
    tma::load(tile.data, desc, bar, {k * kTileCols, k * kTileRows});
  }
  bar.wait(0);
  float* dst = out + (blockIdx.y * kTilesPerTensor + blockIdx.x) * TileBox::kElements;
  for (unsigned i = threadIdx.x; i < TileBox::kElements; i += blockDim.x)
    dst[i] = tile.data[i];
}

// Step 3: one thread points descriptor `which` at other fields, in place in global memory.
__global__ void retarget(tma::TensorMap* descs, int which, tma::DescriptorFields<2> fields) {
  tma::update_descriptor(&descs[which], fields);
}

tma::DescriptorFields<2> fields_of(const float* address, const Shape& s) {
  tma::DescriptorFields<2> f{};
  f.address = address;
  f.dims_inner_first[0] = static_cast<std::uint32_t>(s.cols);
  f.dims_inner_first[1] = static_cast<std::uint32_t>(s.rows);
  f.strides_bytes_inner_first[0] = sizeof(float);
  f.strides_bytes_inner_first[1] = static_cast<std::uint64_t>(s.pitch) * sizeof(float);
  f.box_inner_first[0] = kTileCols;
  f.box_inner_first[1] = kTileRows;
  f.element_strides_inner_first[0] = 1;
  f.element_strides_inner_first[1] = 1;
  return f;
}

tma::TensorMapSpec spec_of(const float* address, const Shape& s) {
  tma::TensorMapSpec spec;
  spec.dtype = tma::DataType::kFloat32;
  spec.rank = 2;
  spec.address = address;
  spec.dims_inner_first = {static_cast<std::uint64_t>(s.cols), static_cast<std::uint64_t>(s.rows),
                           0, 0, 0};
  spec.strides_bytes_inner_first = {4, static_cast<std::uint64_t>(s.pitch) * 4, 0, 0, 0};
  spec.box_inner_first = {kTileCols, kTileRows, 0, 0, 0};
  return spec;
}

// The tiles load_tiles should produce when descriptor t describes tensor src[t].
std::vector<float> expected_tiles(const std::vector<std::vector<float>>& host,
                                  const int (&src)[kTensors]) {
  std::vector<float> want(static_cast<std::size_t>(kTensors) * kTilesPerTensor *
                          TileBox::kElements);
  for (int t = 0; t < kTensors; ++t) {
    const Shape& s = kShapes[src[t]];
    for (int k = 0; k < kTilesPerTensor; ++k) {
      for (int r = 0; r < kTileRows; ++r) {
        for (int c = 0; c < kTileCols; ++c) {
          const int row = k * kTileRows + r;
          const int col = k * kTileCols + c;
          const std::size_t i =
              (static_cast<std::size_t>(t) * kTilesPerTensor + static_cast<unsigned>(k)) *
                  TileBox::kElements +
              static_cast<std::size_t>(r) * kTileCols + static_cast<unsigned>(c);
          want[i] = row < s.rows && col < s.cols
                        ? host[src[t]][static_cast<std::size_t>(row) * s.pitch + col]
                        : 0.0f;
        }
      }
    }
  }
  return want;
}

}  // namespace

int main() {
  if (!example::have_hopper()) return example::kExitSkip;

  std::vector<std::vector<float>> host(kTensors);
  std::vector<std::unique_ptr<example::DeviceBuffer<float>>> tensors;
  for (int t = 0; t < kTensors; ++t) {
    host[t] = example::random_nonzero<float>(
        static_cast<std::size_t>(kShapes[t].rows * kShapes[t].pitch), 40 + t);
    tensors.push_back(std::make_unique<example::DeviceBuffer<float>>(host[t].size()));
    tensors.back()->upload(host[t]);
  }

  // The template: any valid fp32 rank-2 map (here: an 8 x 16 corner of tensor 0); only its type
  // and options matter, make_descriptor replaces the rest.
  tma::TensorMap tmpl{};
  try {
    tmpl = tma::make_tensor_map(spec_of(tensors[0]->get(), Shape{8, 16, 16}));
  } catch (const tma::Error& e) {
    std::printf("FAIL: make_tensor_map (template): %s\n", e.what());
    return 1;
  }

  std::vector<tma::DescriptorFields<2>> host_fields;
  for (int t = 0; t < kTensors; ++t) {
    host_fields.push_back(fields_of(tensors[t]->get(), kShapes[t]));
    // The fields' ranges, checked where they are made (debug builds also trap on the device).
    if (const tma::DescriptorFieldsProblem p = tma::descriptor_fields_problem(host_fields.back())) {
      std::printf("FAIL: tensor %d: %s = %llu %s\n", t, p.what,
                  static_cast<unsigned long long>(p.value), p.rule);
      return 1;
    }
  }
  example::DeviceBuffer<tma::DescriptorFields<2>> fields(kTensors);
  fields.upload(host_fields);
  example::DeviceBuffer<tma::TensorMap> descs(kTensors);  // cudaMalloc: 256-byte aligned
  example::DeviceBuffer<float> out(static_cast<std::size_t>(kTensors) * kTilesPerTensor *
                                   TileBox::kElements);

  // Step 1 and 2.
  make_descriptors<<<kTensors, 32>>>(tmpl, fields.get(), descs.get());
  EXAMPLE_CHECK_LAUNCH();
  EXAMPLE_CHECK(cudaMemset(out.get(), 0xFF,
                           static_cast<std::size_t>(kTensors) * kTilesPerTensor * TileBox::kBytes));
  load_tiles<<<dim3(kTilesPerTensor, kTensors), 64>>>(descs.get(), out.get());
  EXAMPLE_CHECK_LAUNCH();
  const int identity[kTensors] = {0, 1, 2};
  bool ok = example::same_bytes("tiles via device-made descriptors", out.download(),
                                expected_tiles(host, identity));

  // Side note: are the device-built descriptors the driver's bytes?
  const std::vector<tma::TensorMap> device_descs = descs.download();
  for (int t = 0; t < kTensors; ++t) {
    try {
      const tma::TensorMap h = tma::make_tensor_map(spec_of(tensors[t]->get(), kShapes[t]));
      std::printf("descriptor %d: device-built bytes %s the host-encoded ones\n", t,
                  std::memcmp(h.bytes, device_descs[t].bytes, sizeof(h.bytes)) == 0
                      ? "equal"
                      : "differ from");
    } catch (const tma::Error& e) {
      std::printf("FAIL: make_tensor_map (tensor %d): %s\n", t, e.what());
      ok = false;
    }
  }

  // Step 3: descriptor 0 now describes tensor 2; load again.
  retarget<<<1, 1>>>(descs.get(), 0, host_fields[2]);
  EXAMPLE_CHECK_LAUNCH();
  EXAMPLE_CHECK(cudaMemset(out.get(), 0xFF,
                           static_cast<std::size_t>(kTensors) * kTilesPerTensor * TileBox::kBytes));
  load_tiles<<<dim3(kTilesPerTensor, kTensors), 64>>>(descs.get(), out.get());
  EXAMPLE_CHECK_LAUNCH();
  const int retargeted[kTensors] = {2, 1, 2};
  ok = example::same_bytes("tiles after the in-place update", out.download(),
                           expected_tiles(host, retargeted)) &&
       ok;

  std::printf("%d descriptors made on the device, %d tiles each, one updated in place\n", kTensors,
              kTilesPerTensor);
  return example::verdict(ok);
}
