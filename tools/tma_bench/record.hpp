// tma-bench: the JSON record of a run (--json): the tool, the policy, the GPU and every case.
// bench/torch_peers.py adds a "torch" implementation to each case; bench/plot.py draws it.
// Bump kRecordSchema when a field changes meaning or goes away.
#pragma once

#include <string>
#include <vector>

#include "machine.hpp"
#include "options.hpp"
#include "suite.hpp"

namespace tma::bench {

inline constexpr int kRecordSchema = 1;

struct RunRecord {
  const Options* options = nullptr;
  const MachineInfo* machine = nullptr;
  std::uint64_t seed = 0;
  std::vector<CaseResult> results;
  // False while cases are still to run: the record is rewritten after every case, so a run that
  // hangs or is killed still leaves the cases it finished.
  bool complete = false;
  bool stopped_early = false;  // the CUDA context broke; later cases did not run
  std::string stop_reason;
};

// The record as JSON text.
std::string to_json(const RunRecord& run);

// Writes to_json(run) to `path` through a temporary file renamed over it, so a reader (or a run
// killed mid-write) never sees half a record. False when it cannot be written.
bool write_record(const RunRecord& run, const std::string& path);

}  // namespace tma::bench
