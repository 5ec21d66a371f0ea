// tma-bench: the machine record (see machine.hpp).
#include "machine.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <vector>

#include "cuda_check.hpp"
#include "json.hpp"

namespace tma::bench {
namespace {

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// "1980 MHz" -> 1980; "[N/A]" -> nullopt.
std::optional<double> leading_number(const std::string& field) {
  try {
    std::size_t used = 0;
    const double v = std::stod(field, &used);
    return used > 0 ? std::optional<double>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void write_smi(JsonWriter& j, const std::optional<SmiReading>& s) {
  if (!s) {
    j.null();
    return;
  }
  j.begin_object();
  j.key("sm_mhz").value(s->sm_mhz);
  j.key("mem_mhz").value(s->mem_mhz);
  j.key("max_sm_mhz").value(s->max_sm_mhz);
  j.key("power_w").value(s->power_w);
  j.key("temperature_c").value(s->temperature_c);
  j.key("raw").value(s->raw);
  j.end_object();
}

}  // namespace

std::optional<SmiReading> read_nvidia_smi(int device) {
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  // The bus id is "0000:1B:00.0": digits, letters, ':' and '.' only, safe in a command line.
  const std::string command =
      "nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu "
      "--format=csv,noheader -i " +
      std::string(bus_id) + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string text;
  char buf[256];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr)
    text += buf;
  if (pclose(pipe) != 0) return std::nullopt;
  text = trim(text.substr(0, text.find('\n')));
  if (text.empty()) return std::nullopt;

  std::vector<std::string> fields;
  std::istringstream in(text);
  for (std::string f; std::getline(in, f, ',');)
    fields.push_back(trim(f));
  if (fields.size() != 5) return std::nullopt;
  SmiReading r;
  r.raw = text;
  r.sm_mhz = leading_number(fields[0]);
  r.mem_mhz = leading_number(fields[1]);
  r.max_sm_mhz = leading_number(fields[2]);
  r.power_w = leading_number(fields[3]);
  r.temperature_c = leading_number(fields[4]);
  return r;
}

MachineInfo collect_machine(const DeviceSupport& gpu) {
  MachineInfo m;
  m.gpu = gpu;
  char bus_id[32] = {};
  TMA_BENCH_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, gpu.device));
  m.pci_bus_id = bus_id;
  TMA_BENCH_CHECK(cudaMemGetInfo(&m.free_bytes, &m.total_bytes));
  m.peak_bandwidth_gbps = tma::peak_memory_gbps(gpu.mem_clock_khz, gpu.mem_bus_width_bits);
  m.smi_before = read_nvidia_smi(gpu.device);
  m.timestamp = utc_now();
  return m;
}

void write_json(JsonWriter& j, const MachineInfo& m) {
  const DeviceSupport& g = m.gpu;
  j.begin_object();
  j.key("name").value(g.name);
  j.key("device").value(g.device);
  j.key("pci_bus_id").value(m.pci_bus_id);
  j.key("cc").value(std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor));
  j.key("sm_count").value(g.sm_count);
  j.key("sm_clock_khz").value(g.sm_clock_khz);
  j.key("mem_clock_khz").value(g.mem_clock_khz);
  j.key("mem_bus_width_bits").value(g.mem_bus_width_bits);
  j.key("peak_bandwidth_gbps").value(m.peak_bandwidth_gbps);
  j.key("l2_bytes").value(static_cast<std::uint64_t>(g.l2_bytes));
  j.key("global_memory_bytes").value(static_cast<std::uint64_t>(g.global_memory_bytes));
  j.key("free_memory_bytes_at_start").value(static_cast<std::uint64_t>(m.free_bytes));
  j.key("driver_version").value(g.driver_version);
  j.key("driver_version_string").value(cuda_version_string(g.driver_version));
  j.key("runtime_version").value(g.runtime_version);
  j.key("runtime_version_string").value(cuda_version_string(g.runtime_version));
  j.key("nvidia_smi_before");
  write_smi(j, m.smi_before);
  j.key("nvidia_smi_after");
  write_smi(j, m.smi_after);
  j.end_object();
}

std::string describe(const MachineInfo& m) {
  const DeviceSupport& g = m.gpu;
  std::ostringstream o;
  o << g.name << " (cc " << g.cc_major << '.' << g.cc_minor << ", " << g.sm_count << " SMs, L2 "
    << g.l2_bytes / (1024 * 1024) << " MiB, peak " << static_cast<long>(m.peak_bandwidth_gbps)
    << " GB/s, SM clock max " << g.sm_clock_khz / 1000 << " MHz";
  if (m.smi_before && m.smi_before->sm_mhz) {
    o << ", now " << static_cast<long>(*m.smi_before->sm_mhz) << " MHz";
  }
  o << "), driver " << cuda_version_string(g.driver_version) << ", runtime "
    << cuda_version_string(g.runtime_version);
  return o.str();
}

}  // namespace tma::bench
