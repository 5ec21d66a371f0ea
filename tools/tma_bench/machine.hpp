// tma-bench: what the record says about the machine: the GPU (tma::device_support), its clocks as
// nvidia-smi reads them now, memory, peak bandwidth, versions and the time of the run.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "tma/host/device_support.hpp"

namespace tma::bench {

class JsonWriter;

// One `nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu`
// line for the benchmarked GPU. Fields nvidia-smi reports as "[N/A]" stay empty.
struct SmiReading {
  std::string raw;
  std::optional<double> sm_mhz, mem_mhz, max_sm_mhz, power_w, temperature_c;
};

// nvidia-smi's reading for the CUDA device `device` (matched by PCI bus id); nullopt when
// nvidia-smi is not on PATH or fails.
std::optional<SmiReading> read_nvidia_smi(int device);

struct MachineInfo {
  DeviceSupport gpu;
  std::string pci_bus_id;
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  // 2 (DDR) x memory clock x bus width: the datasheet's peak DRAM bandwidth, GB/s.
  double peak_bandwidth_gbps = 0;
  std::optional<SmiReading> smi_before;  // read before the first case
  std::optional<SmiReading> smi_after;   // read after the last
  std::string timestamp;                 // UTC, ISO 8601
};

// Everything but smi_after, for `device` (current device already set). Checked CUDA calls.
MachineInfo collect_machine(const DeviceSupport& gpu);

// The "gpu" object of the JSON record.
void write_json(JsonWriter& j, const MachineInfo& m);

// One line for the top of the table: name, SMs, L2, clocks, versions.
std::string describe(const MachineInfo& m);

}  // namespace tma::bench
