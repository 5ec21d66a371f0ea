// tma-bench: the JSON record (see record.hpp).
#include "record.hpp"

#include <cstdio>
#include <fstream>

#include "json.hpp"
#include "kernels.hpp"
#include "tma/config.hpp"

namespace tma::bench {
namespace {

void write_dims(JsonWriter& j, const char* key, const std::int64_t* values, int rank) {
  j.key(key).begin_array(true);
  for (int d = 0; d < rank; ++d)
    j.value(values[d]);
  j.end_array();
}

void write_impl(JsonWriter& j, const ImplResult& r, bool flops) {
  j.begin_object();
  j.key("role").value(role_name(r.role));
  j.key("detail").value(r.detail);
  j.key("verified").value(r.verified);
  if (r.failure.empty()) {
    j.key("failure").null();
  } else {
    j.key("failure").value(r.failure);
  }
  if (r.timing) {
    const Stats& s = r.timing->stats;
    j.key("median_ms").value(s.median_ms);
    j.key("min_ms").value(s.min_ms);
    j.key("max_ms").value(s.max_ms);
    j.key("reps").value(s.reps);
    j.key("gbps").value(r.gbps);
    if (flops) j.key("tflops").value(r.tflops);
    j.key("host_us_per_launch").value(r.timing->host_us_per_launch);
    j.key("host_bound").value(r.timing->host_bound);
    if (r.timing->clock) {
      // --clock-probe (timing.hpp ClockProbe): the SM clock just before and after the runs.
      j.key("clock_probe").begin_object();
      j.key("mhz_before").value(r.timing->clock->mhz_before);
      j.key("mhz_after").value(r.timing->clock->mhz_after);
      j.key("samples").value(r.timing->clock->samples);
      j.end_object();
    }
  } else {
    for (const char* k : {"median_ms", "min_ms", "max_ms", "reps", "gbps"})
      j.key(k).null();
    if (flops) j.key("tflops").null();
  }
  j.end_object();
}

void write_case(JsonWriter& j, const CaseResult& r) {
  const Case& c = *r.c;
  j.begin_object();
  j.key("suite").value(c.suite);
  j.key("name").value(c.name);
  j.key("family").value(c.family);
  j.key("dtype").value(dtype_name(c.src.dtype));
  j.key("element_bytes").value(static_cast<std::int64_t>(element_size(c.src)));
  write_dims(j, "shape", c.src.shape.data(), c.src.rank);
  write_dims(j, "src_strides", c.src.strides.data(), c.src.rank);
  write_dims(j, "dst_shape", c.dst.shape.data(), c.dst.rank);
  write_dims(j, "dst_strides", c.dst.strides.data(), c.dst.rank);
  j.key("input_bytes").value(static_cast<std::uint64_t>(c.input_bytes()));
  j.key("bytes").value(static_cast<std::uint64_t>(c.moved_bytes()));
  if (c.gemm) {
    // D (m x n) = A (m x k) B (k x n); layout: A then B, r row-major, c column-major.
    j.key("m").value(c.gemm->m);
    j.key("n").value(c.gemm->n);
    j.key("k").value(c.gemm->k);
    j.key("layout").value(std::string{c.gemm->a_row_major ? 'r' : 'c'} +
                          (c.gemm->b_row_major ? 'r' : 'c'));
    j.key("out_dtype").value(dtype_name(c.dst.dtype));
    j.key("flops").value(c.flops());
  }
  j.key("status").value(status_name(r.status));
  j.key("note").value(r.note);
  j.key("l2_policy").value(r.l2_policy);
  j.key("verified").value(r.verified());
  j.key("implementations").begin_object();
  for (const ImplResult& impl : r.impls) {
    j.key(impl.name);
    write_impl(j, impl, c.flops() > 0);
  }
  j.end_object();
  const ImplResult* best = r.best_peer();
  if (best) {
    j.key("best_peer").value(best->name);
  } else {
    j.key("best_peer").null();
  }
  j.key("ratio").value(r.ratio());
  j.key("ceiling_fraction").value(r.ceiling_fraction());
  if (const Suite* s = find_suite(c.suite)) {
    for (const RatioColumn& x : s->ratios)
      j.key(x.key).value(r.ratio_of(x.numerator, x.denominator));
  }
  j.end_object();
}

}  // namespace

std::string to_json(const RunRecord& run) {
  const Options& o = *run.options;
  JsonWriter j;
  j.begin_object();
  j.key("tool").value("tma-bench");
  j.key("tool_version")
      .value(std::to_string(TMA_VERSION_MAJOR) + "." + std::to_string(TMA_VERSION_MINOR) + "." +
             std::to_string(TMA_VERSION_PATCH));
  j.key("schema").value(kRecordSchema);
  j.key("timestamp").value(run.machine->timestamp);
  j.key("command_line").value(o.command_line);
  j.key("seed").value(run.seed);

  j.key("policy").begin_object();
  j.key("warmup").value(o.warmup);
  j.key("reps").value(o.reps);
  j.key("statistic").value("median of reps, CUDA events, launches queued behind a spin kernel");
  j.key("order").value(
      "implementations interleaved: balanced (each after every other equally often) when "
      "implementations - 1 <= reps, else random rounds; rotation set per launch");
  j.key("rotation_factor").value(kRotationFactor);
  j.key("flush_factor").value(kFlushFactor);
  j.key("flush_l2_forced").value(o.flush_l2);
  j.key("gbps").value("(bytes read + bytes written) / median time / 1e9");
  j.key("tflops").value("flops (2 m n k for a GEMM) / median time / 1e12");
  j.key("poison_byte").value(static_cast<int>(kPoisonByte));
  if (o.clock_probe) {
    j.key("clock_probe_window_ns").value(static_cast<std::int64_t>(kClockProbeWindowNs));
  } else {
    j.key("clock_probe_window_ns").null();
  }
  j.end_object();

  j.key("gpu");
  write_json(j, *run.machine);

  int ok = 0, skipped = 0, failed = 0;
  for (const CaseResult& r : run.results) {
    ok += r.status == Status::kOk;
    skipped += r.status == Status::kSkipped;
    failed += r.status == Status::kFailed;
  }
  j.key("summary").begin_object();
  j.key("cases").value(static_cast<std::int64_t>(run.results.size()));
  j.key("ok").value(ok);
  j.key("skipped").value(skipped);
  j.key("failed").value(failed);
  j.key("complete").value(run.complete);
  j.key("stopped_early").value(run.stopped_early);
  j.key("stop_reason").value(run.stop_reason);
  j.end_object();

  j.key("cases").begin_array();
  for (const CaseResult& r : run.results)
    write_case(j, r);
  j.end_array();
  j.end_object();
  return j.str();
}

bool write_record(const RunRecord& run, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << to_json(run);
    if (!out.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace tma::bench
