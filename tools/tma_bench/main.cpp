// tma-bench: the benchmark every tmakit kernel reports through. One binary, one suite per file
// (suite_*.cpp, listed in registry.cpp); each case is verified byte for byte before it is timed.
//
//   tma-bench copy|transpose|copy-tune|all [--sizes 1M,16M,1G] [--max-size 8G] [--filter RE]
//             [--quick] [--no-ordinary] [--reps N] [--warmup N] [--json out.json] [--seed N]
//             [--device N]
//   tma-bench gemm [--layout rc|rr|cr|cc] [--sweep] [--no-ordinary] [--quick] [--filter RE] ...
//   tma-bench --list [suite|all]     (no GPU needed; without a suite: every suite, gemm included)
//
// `all` runs every suite but gemm (Suite::in_all): gemm reports TFLOP/s, takes minutes and runs
// kernels that have hung; it runs by name.
//
// Exit codes: 0 every case verified (or skipped for memory), 1 a mismatch or an error,
// 2 bad command line, 77 no usable CUDA device (the reason is printed).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "machine.hpp"
#include "options.hpp"
#include "record.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "suite.hpp"
#include "tma/host/device_support.hpp"

namespace {

using namespace tma::bench;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 77;

struct Planned {
  const Suite* suite;
  Case c;
};

// "copy, transpose, ..., gemm": every suite's name.
std::string suite_names() {
  std::string names;
  for (const Suite* s : suites())
    names += std::string(s->name) + ", ";
  return names.substr(0, names.size() - 2);
}

// The suites named by the command: one suite; `all`: those in_all; none (--list alone): every
// suite. Throws UsageError for an unknown one, or for gemm's options without gemm.
std::vector<const Suite*> selected_suites(const Options& o) {
  std::vector<const Suite*> out;
  if (o.command.empty() || o.command == "all") {
    for (const Suite* s : suites()) {
      if (o.command.empty() || s->in_all) out.push_back(s);
    }
  } else if (const Suite* s = find_suite(o.command)) {
    out.push_back(s);
  } else {
    throw UsageError("unknown suite '" + o.command + "': use one of " + suite_names() + ", or all");
  }
  if (o.gemm_options_given && !o.command.empty() && o.command != "gemm") {
    throw UsageError(
        "--layout, --sweep, --no-pdl, --no-gpc-order, --tuned, --variants, --plan and --shapes "
        "apply to the "
        "gemm suite only, not '" +
        o.command + "': run `tma-bench gemm ...` or drop them");
  }
  return out;
}

// The cases to run, in order: each suite's cases minus --quick / --max-size / --filter.
std::vector<Planned> plan_cases(const Options& o, const std::vector<const Suite*>& chosen) {
  const std::regex filter(o.filter, std::regex::ECMAScript);
  std::vector<Planned> plan;
  for (const Suite* s : chosen) {
    for (Case& c : s->cases(o)) {
      if (o.quick && !c.quick) continue;
      if (o.max_size && c.input_bytes() > *o.max_size) continue;
      if (!o.filter.empty() && !std::regex_search(c.name, filter)) continue;
      plan.push_back({s, std::move(c)});
    }
  }
  return plan;
}

void print_list(const std::vector<const Suite*>& chosen, const std::vector<Planned>& plan) {
  for (const Suite* s : chosen) {
    std::printf("%.*s: %.*s\n", static_cast<int>(s->name.size()), s->name.data(),
                static_cast<int>(s->summary.size()), s->summary.data());
    for (const Planned& p : plan) {
      if (p.suite != s) continue;
      std::printf("  %-40s %-18s %10s\n", p.c.name.c_str(), p.c.shape_label().c_str(),
                  size_human(p.c.input_bytes()).c_str());
    }
  }
}

// The first line of an implementation's failure, for the case's note.
std::string failure_note(const CaseResult& r) {
  for (const ImplResult& impl : r.impls) {
    if (!impl.failure.empty()) {
      return impl.name + ": " + impl.failure.substr(0, impl.failure.find('\n'));
    }
  }
  return "not verified";
}

int run(const Options& o, std::vector<Planned>& plan) {
  const tma::DeviceSupport gpu = tma::device_support(o.device);
  if (gpu.name.empty()) {
    std::fprintf(stderr, "no CUDA device: %s\n", gpu.reason.c_str());
    return kExitNoDevice;
  }
  if (!gpu.tma) {
    std::fprintf(stderr, "no CUDA device with TMA: %s: %s\n", gpu.name.c_str(), gpu.reason.c_str());
    return kExitNoDevice;
  }
  if (!o.json_path.empty() && !std::ofstream(o.json_path, std::ios::app)) {
    std::fprintf(stderr, "tma-bench: cannot write --json %s: check the directory exists\n",
                 o.json_path.c_str());
    return kExitUsage;
  }

  TMA_BENCH_CHECK(cudaSetDevice(o.device));
  MachineInfo machine = collect_machine(gpu);
  Progress progress;
  Runner runner(o, machine, progress);
  std::printf("tma-bench: %s\n", describe(machine).c_str());
  std::printf("seed %llu, %d warm-up + median of %d runs per implementation\n",
              static_cast<unsigned long long>(runner.seed()), o.warmup, o.reps);

  RunRecord record;
  record.options = &o;
  record.machine = &machine;
  record.seed = runner.seed();
  const Suite* current = nullptr;
  const int total = static_cast<int>(plan.size());
  for (int i = 0; i < total; ++i) {
    const Planned& p = plan[static_cast<std::size_t>(i)];
    if (p.suite != current) {
      progress.clear();
      print_table_header(*p.suite);
      progress.set_log_steps(p.suite->log_steps);
      current = p.suite;
    }
    std::string what = std::string(p.suite->name) + " " + std::string(dtype_name(p.c.src.dtype)) +
                       " " + p.c.shape_label();
    if (p.c.family != "ladder") what += " (" + p.c.family + ")";
    progress.show(i + 1, total, what);

    CaseResult r;
    try {
      r = p.suite->run(p.c, runner);
    } catch (const CudaError& e) {
      r = CaseResult{};
      r.status = Status::kFailed;
      r.note = e.what();
      // A sticky error (a kernel faulted) poisons the context: nothing after it can be trusted.
      const cudaError_t state = cudaDeviceSynchronize();
      if (state != cudaSuccess) {
        record.stopped_early = true;
        record.stop_reason =
            std::string("CUDA context unusable after ") + p.c.name + ": " + cudaGetErrorName(state);
      }
    } catch (const std::exception& e) {
      r = CaseResult{};
      r.status = Status::kFailed;
      r.note = e.what();
    }
    r.c = &p.c;
    if (r.status == Status::kOk && !r.verified()) {
      r.status = Status::kFailed;
      r.note = failure_note(r);
    }
    progress.clear();
    if (r.status == Status::kFailed && r.impls.empty()) {
      std::printf("ERROR %s: %s\n", p.c.name.c_str(), r.note.c_str());
    }
    print_table_row(*p.suite, r);
    record.results.push_back(std::move(r));
    if (!o.json_path.empty() && !write_record(record, o.json_path)) {
      std::fprintf(stderr, "tma-bench: writing %s failed\n", o.json_path.c_str());
      return kExitFailed;
    }
    if (record.stopped_early) {
      std::printf("stopping: %s; %d case(s) not run\n", record.stop_reason.c_str(), total - i - 1);
      break;
    }
  }
  progress.clear();
  machine.smi_after = read_nvidia_smi(o.device);

  int ok = 0, skipped = 0, failed = 0;
  for (const CaseResult& r : record.results) {
    ok += r.status == Status::kOk;
    skipped += r.status == Status::kSkipped;
    failed += r.status == Status::kFailed;
  }
  std::printf("\n%d case(s): %d verified and timed, %d skipped, %d failed\n",
              static_cast<int>(record.results.size()), ok, skipped, failed);
  if (!o.json_path.empty()) {
    record.complete = true;
    if (!write_record(record, o.json_path)) {
      std::fprintf(stderr, "tma-bench: writing %s failed\n", o.json_path.c_str());
      return kExitFailed;
    }
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return failed > 0 || record.stopped_early ? kExitFailed : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<const Suite*> chosen;
  std::vector<Planned> plan;
  try {
    o = parse_options(argc, argv);
    if (o.help) {
      std::printf("%.*s", static_cast<int>(usage().size()), usage().data());
      return kExitOk;
    }
    if (o.command.empty() && !o.list) {
      throw UsageError("name a suite (" + suite_names() + ") or all");
    }
    chosen = selected_suites(o);
    plan = plan_cases(o, chosen);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "tma-bench: %s\n(tma-bench --help lists the suites and options)\n",
                 e.what());
    return kExitUsage;
  }
  if (o.list) {
    print_list(chosen, plan);
    return kExitOk;
  }
  if (plan.empty()) {
    std::fprintf(stderr, "tma-bench: no case left after --quick / --max-size / --filter\n");
    return kExitUsage;
  }
  try {
    return run(o, plan);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\ntma-bench: %s\n", e.what());
    return kExitFailed;
  }
}
