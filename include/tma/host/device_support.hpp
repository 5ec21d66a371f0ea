// tmakit: what the current machine's GPU offers for TMA, for tma-info, tests and benchmarks.
//
// device_support() never throws for a missing GPU or driver: it returns tma = false with the
// reason, so that GPU tests can skip cleanly (exit 77) and print why.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <sstream>
#include <string>

#include "tma/config.hpp"

namespace tma {

struct DeviceSupport {
  bool tma = false;    // the device can run TMA (compute capability >= 9.0)
  std::string reason;  // why not; empty when tma is true
  int device = 0;
  int device_count = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t l2_bytes = 0;
  std::size_t smem_per_block = 0;        // without opting in
  std::size_t smem_per_block_optin = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  std::size_t smem_per_sm = 0;
  bool cluster_launch = false;
  // Largest thread-block cluster. The exact value depends on the kernel
  // (cudaOccupancyMaxPotentialClusterSize); these are the documented limits for compute
  // capability >= 9.0: 8 CTAs portably, 16 with cudaFuncAttributeNonPortableClusterSizeAllowed.
  int max_cluster_size = 0;
  int max_cluster_size_nonportable = 0;
  int driver_version = 0;   // e.g. 13000 for CUDA 13.0
  int runtime_version = 0;  // the CUDA runtime tmakit was linked against
  int sm_clock_khz = 0;     // peak
  int mem_clock_khz = 0;    // peak
  int mem_bus_width_bits = 0;
};

// Peak DRAM bandwidth in GB/s (10^9 bytes per second) of a memory clock and bus width, as
// DeviceSupport reports them: two transfers per clock over the bus (H100 SXM: 2,619 MHz x 5,120
// bits = 3,352 GB/s; H200: 3,201 MHz x 6,016 bits = 4,814 GB/s). 0 when either is unknown (0).
constexpr double peak_memory_gbps(int mem_clock_khz, int mem_bus_width_bits) {
  return 2.0 * mem_clock_khz * 1e3 * (mem_bus_width_bits / 8.0) / 1e9;
}

namespace detail {

inline std::string cuda_error_text(cudaError_t e) {
  std::string s = cudaGetErrorName(e);
  s += ": ";
  s += cudaGetErrorString(e);
  return s;
}

}  // namespace detail

// Queries `device`. Never throws: without a driver or GPU, tma is false and `reason` says what
// failed. Clock and bus fields come from cudaDeviceGetAttribute (CUDA 13 removed them from
// cudaDeviceProp).
inline DeviceSupport device_support(int device = 0) {
  DeviceSupport d;
  d.device = device;
  (void)cudaDriverGetVersion(&d.driver_version);
  (void)cudaRuntimeGetVersion(&d.runtime_version);
  const cudaError_t count_error = cudaGetDeviceCount(&d.device_count);
  if (count_error != cudaSuccess || d.device_count == 0) {
    d.reason = count_error != cudaSuccess
                   ? "cudaGetDeviceCount failed with " + detail::cuda_error_text(count_error)
                   : std::string("no CUDA device found");
    (void)cudaGetLastError();  // the failed query is not the caller's error
    return d;
  }
  if (device < 0 || device >= d.device_count) {
    d.reason = "device " + std::to_string(device) + " does not exist: there are " +
               std::to_string(d.device_count) + " (0.." + std::to_string(d.device_count - 1) + ")";
    return d;
  }
  cudaDeviceProp p{};
  const cudaError_t prop_error = cudaGetDeviceProperties(&p, device);
  if (prop_error != cudaSuccess) {
    d.reason = "cudaGetDeviceProperties(" + std::to_string(device) + ") failed with " +
               detail::cuda_error_text(prop_error);
    (void)cudaGetLastError();
    return d;
  }
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.global_memory_bytes = p.totalGlobalMem;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.smem_per_block = p.sharedMemPerBlock;
  d.smem_per_block_optin = p.sharedMemPerBlockOptin;
  d.smem_per_sm = p.sharedMemPerMultiprocessor;
  auto attribute = [&](cudaDeviceAttr a) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return v;
  };
  d.cluster_launch = attribute(cudaDevAttrClusterLaunch) != 0;
  d.sm_clock_khz = attribute(cudaDevAttrClockRate);
  d.mem_clock_khz = attribute(cudaDevAttrMemoryClockRate);
  d.mem_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
  if (d.cc_major >= 9 && d.cluster_launch) {
    d.max_cluster_size = 8;
    d.max_cluster_size_nonportable = 16;
  }
  d.tma = d.cc_major >= 9;
  if (!d.tma) {
    d.reason = "compute capability " + std::to_string(d.cc_major) + "." +
               std::to_string(d.cc_minor) + " < 9.0: TMA needs Hopper (sm_90) or newer";
  }
  return d;
}

// "13.0" from 13000; "none" for 0 (no driver).
inline std::string cuda_version_string(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// The device as one JSON object (for benchmarks' records); versions as numbers (13000 = 13.0).
inline std::string to_json(const DeviceSupport& d) {
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;  // control characters: drop
      q += c;
    }
    return q + "\"";
  };
  std::ostringstream o;
  o << "{\"tma\": " << (d.tma ? "true" : "false") << ", \"reason\": " << quoted(d.reason)
    << ", \"device\": " << d.device << ", \"device_count\": " << d.device_count
    << ", \"name\": " << quoted(d.name) << ", \"cc_major\": " << d.cc_major
    << ", \"cc_minor\": " << d.cc_minor << ", \"sm_count\": " << d.sm_count
    << ", \"global_memory_bytes\": " << d.global_memory_bytes << ", \"l2_bytes\": " << d.l2_bytes
    << ", \"smem_per_block\": " << d.smem_per_block
    << ", \"smem_per_block_optin\": " << d.smem_per_block_optin
    << ", \"smem_per_sm\": " << d.smem_per_sm
    << ", \"cluster_launch\": " << (d.cluster_launch ? "true" : "false")
    << ", \"max_cluster_size\": " << d.max_cluster_size
    << ", \"max_cluster_size_nonportable\": " << d.max_cluster_size_nonportable
    << ", \"driver_version\": " << d.driver_version
    << ", \"runtime_version\": " << d.runtime_version << ", \"sm_clock_khz\": " << d.sm_clock_khz
    << ", \"mem_clock_khz\": " << d.mem_clock_khz
    << ", \"mem_bus_width_bits\": " << d.mem_bus_width_bits << "}";
  return o.str();
}

}  // namespace tma
