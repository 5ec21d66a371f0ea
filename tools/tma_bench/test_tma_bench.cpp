// tma-bench's host logic, tested without a GPU: statistics, the L2 plan, sizes on the command
// line, the JSON writer, layouts, and the suites' case lists (every layout valid for the ops).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>

#include "json.hpp"
#include "layout.hpp"
#include "options.hpp"
#include "record.hpp"
#include "report.hpp"
#include "suite.hpp"
#include "timing.hpp"

namespace tma::bench {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(Timing, SummarizeTakesTheMedianMinAndMax) {
  const Stats odd = summarize({5, 1, 3});
  EXPECT_EQ(odd.median_ms, 3);
  EXPECT_EQ(odd.min_ms, 1);
  EXPECT_EQ(odd.max_ms, 5);
  EXPECT_EQ(odd.reps, 3);
  EXPECT_EQ(summarize({4, 1, 2, 3}).median_ms, 2.5);
  EXPECT_THROW(summarize({}), std::logic_error);
}

TEST(Timing, GbpsCountsBytesPerSecond) {
  EXPECT_DOUBLE_EQ(gbps(2e9, 1000.0), 2.0);
}

TEST(Timing, PlanRotatesPastThreeL2s) {
  const std::size_t l2 = 50 * kMiB;
  const L2Plan small = plan_l2(2 * kMiB, l2, 80ull << 30);
  EXPECT_FALSE(small.flush);
  EXPECT_GT(static_cast<std::size_t>(small.sets) * 2 * kMiB, 3 * l2);
  EXPECT_LE(static_cast<std::size_t>(small.sets - 1) * 2 * kMiB, 3 * l2);
  const L2Plan big = plan_l2(512 * kMiB, l2, 80ull << 30);
  EXPECT_EQ(big.sets, 1);
  EXPECT_FALSE(big.flush);
  const L2Plan tight = plan_l2(2 * kMiB, l2, 100 * kMiB);
  EXPECT_EQ(tight.sets, 1);
  EXPECT_TRUE(tight.flush);
}

TEST(Timing, InterleavedRunsNeverShareASetWithTheRunBefore) {
  for (const int impls : {1, 2, 3, 4, 5, 21, 22, 45}) {
    for (const int sets : {1, 2, 3, 7, 26}) {
      const std::vector<ScheduledRun> s = interleaved_schedule(impls, 3, 20, sets, 0x7A11u);
      ASSERT_GE(s.size(), static_cast<std::size_t>(impls) * 23);
      std::vector<int> warm(static_cast<std::size_t>(impls), 0);
      std::vector<std::vector<int>> timed(static_cast<std::size_t>(impls), std::vector<int>(20, 0));
      bool timing = false;
      for (std::size_t j = 0; j < s.size(); ++j) {
        ASSERT_GE(s[j].impl, 0);
        ASSERT_LT(s[j].impl, impls);
        ASSERT_GE(s[j].set, 0);
        ASSERT_LT(s[j].set, sets);
        ASSERT_LT(s[j].rep, 20);
        if (j > 0 && sets > 1) {
          EXPECT_NE(s[j].set, s[j - 1].set) << impls << " impls, " << sets << " sets, run " << j;
        }
        if (j < static_cast<std::size_t>(impls) * 3) {
          EXPECT_EQ(s[j].rep, -1) << "the warm-up runs come first";
          ++warm[static_cast<std::size_t>(s[j].impl)];
        } else if (s[j].rep >= 0) {
          timing = true;
          ++timed[static_cast<std::size_t>(s[j].impl)][static_cast<std::size_t>(s[j].rep)];
        }
      }
      EXPECT_TRUE(timing);
      for (int i = 0; i < impls; ++i) {
        EXPECT_EQ(warm[static_cast<std::size_t>(i)], 3);
        for (int r = 0; r < 20; ++r)
          EXPECT_EQ(timed[static_cast<std::size_t>(i)][static_cast<std::size_t>(r)], 1)
              << "implementation " << i << " repetition " << r;
      }
    }
  }
  EXPECT_THROW(interleaved_schedule(0, 3, 20, 5, 1), std::logic_error);
  EXPECT_THROW(interleaved_schedule(2, 3, 20, 0, 1), std::logic_error);
}

// The default runs' order: every implementation after every other one equally often (within
// one: the walk's closing pair), never after itself; the sweep's: random rounds.
TEST(Timing, InterleavedOrderIsBalanced) {
  for (const int impls : {2, 3, 5, 6, 11, 21}) {  // impls - 1 divides 20: whole walks
    for (const unsigned seed : {0x7A11u, 1u, 12345u}) {
      const std::vector<ScheduledRun> s = interleaved_schedule(impls, 3, 20, 7, seed);
      const std::size_t first = static_cast<std::size_t>(impls) * 3;
      ASSERT_EQ(s.size(), first + static_cast<std::size_t>(impls) * 20) << "no surplus runs";
      std::vector<std::vector<int>> after(static_cast<std::size_t>(impls),
                                          std::vector<int>(static_cast<std::size_t>(impls), 0));
      for (std::size_t j = first + 1; j < s.size(); ++j) {
        ASSERT_NE(s[j].impl, s[j - 1].impl) << impls << " impls: run " << j << " follows itself";
        ++after[static_cast<std::size_t>(s[j].impl)][static_cast<std::size_t>(s[j - 1].impl)];
      }
      int lo = 1 << 30, hi = 0;
      for (int i = 0; i < impls; ++i)
        for (int k = 0; k < impls; ++k)
          if (i != k) {
            lo = std::min(lo, after[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)]);
            hi = std::max(hi, after[static_cast<std::size_t>(i)][static_cast<std::size_t>(k)]);
          }
      EXPECT_LE(hi - lo, 1) << impls << " impls, seed " << seed;
      EXPECT_EQ(hi, 20 / (impls - 1)) << impls << " impls";
    }
  }
  // 4 implementations, 20 repetitions: 7 walks of 12 runs, the last walk's surplus untimed.
  const std::vector<ScheduledRun> four = interleaved_schedule(4, 3, 20, 7, 0x7A11u);
  EXPECT_EQ(four.size(), 12u + 7u * 12u);
  // The sweep (more implementations than repetitions + 1): rounds, each implementation once per
  // round, in an order that varies.
  const std::vector<ScheduledRun> sweep = interleaved_schedule(45, 0, 20, 7, 0x7A11u);
  ASSERT_EQ(sweep.size(), 45u * 20u);
  bool differs = false;
  for (std::size_t j = 0; j < sweep.size(); ++j) {
    EXPECT_EQ(sweep[j].rep, static_cast<int>(j / 45));
    differs = differs || sweep[j].impl != sweep[j % 45].impl;
  }
  EXPECT_TRUE(differs);
}

TEST(Timing, ProbeMhzIsCyclesPerMicrosecond) {
  EXPECT_DOUBLE_EQ(*probe_mhz(19'800, 10'000), 1980.0);
  EXPECT_DOUBLE_EQ(*probe_mhz(16'000, 10'048), 16'000.0 * 1e3 / 10'048);
  EXPECT_FALSE(probe_mhz(0, 10'000));  // an unwritten slot
  EXPECT_FALSE(probe_mhz(19'800, 0));
  EXPECT_FALSE(probe_mhz(-5, 10'000));
}

// Each timed run's clock is the probe ahead of it (before) and the one after it (after), as
// time_interleaved enqueues them; warm-up and surplus runs (rep -1) are not counted.
TEST(Timing, ClockByImplPairsEachRunWithItsNeighbouringProbes) {
  const std::vector<ScheduledRun> runs = {{0, 0, 0}, {1, 1, 0}, {0, 2, 1}, {1, 0, -1}, {1, 1, 1}};
  // Probe p precedes run p; the last follows run 4. Implementation 0's runs (0, 2) see
  // before {1000, 1200} and after {1100, 1300}; 1's timed runs (1, 4) before {1100, 1500} and
  // after {1200, 1600}; the surplus run 3 (probes 1300 / 1500) is left out.
  const std::vector<std::optional<double>> mhz = {1000.0, 1100.0, 1200.0, 1300.0, 1500.0, 1600.0};
  const std::vector<ClockProbe> c = clock_by_impl(runs, mhz, 2);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].samples, 2);
  EXPECT_DOUBLE_EQ(c[0].mhz_before, 1100.0);
  EXPECT_DOUBLE_EQ(c[0].mhz_after, 1200.0);
  EXPECT_EQ(c[1].samples, 2);
  EXPECT_DOUBLE_EQ(c[1].mhz_before, 1300.0);
  EXPECT_DOUBLE_EQ(c[1].mhz_after, 1400.0);

  // An invalid probe drops the runs beside it: run 0 (after) and run 1 (before).
  std::vector<std::optional<double>> gap = mhz;
  gap[1].reset();
  const std::vector<ClockProbe> g = clock_by_impl(runs, gap, 3);
  EXPECT_EQ(g[0].samples, 1);
  EXPECT_DOUBLE_EQ(g[0].mhz_before, 1200.0);
  EXPECT_EQ(g[1].samples, 1);
  EXPECT_DOUBLE_EQ(g[1].mhz_after, 1600.0);
  EXPECT_EQ(g[2].samples, 0);  // never ran

  EXPECT_THROW(clock_by_impl(runs, std::vector<std::optional<double>>(5, 1.0), 2),
               std::logic_error);
  EXPECT_THROW(clock_by_impl(runs, mhz, 1), std::logic_error);  // implementation 1 unknown
}

// The schedule time_interleaved probes: every timed run of every implementation gets a pair.
TEST(Timing, ClockByImplCountsEveryTimedRunOfASchedule) {
  const int impls = 3, warmup = 3, reps = 20;
  const std::vector<ScheduledRun> s = interleaved_schedule(impls, warmup, reps, 7, 0x7A11u);
  const std::vector<ScheduledRun> timed(s.begin() + impls * warmup, s.end());
  std::vector<std::optional<double>> mhz;
  for (std::size_t p = 0; p <= timed.size(); ++p)
    mhz.push_back(1500.0 + static_cast<double>(p));
  for (const ClockProbe& c : clock_by_impl(timed, mhz, impls)) {
    EXPECT_EQ(c.samples, reps);
    EXPECT_DOUBLE_EQ(c.mhz_after - c.mhz_before, 1.0);  // each run's after is the next probe
  }
}

TEST(Options, ClockProbeIsAFlag) {
  const char* argv[] = {"tma-bench", "gemm", "--clock-probe"};
  EXPECT_TRUE(parse_options(3, const_cast<char**>(argv)).clock_probe);
  const char* plain[] = {"tma-bench", "gemm"};
  EXPECT_FALSE(parse_options(2, const_cast<char**>(plain)).clock_probe);
  EXPECT_NE(usage().find("--clock-probe"), std::string_view::npos);
}

TEST(Options, SizesTakeBinaryUnits) {
  EXPECT_EQ(parse_size("1M", "--sizes"), kMiB);
  EXPECT_EQ(parse_size("4GiB", "--sizes"), 4ull << 30);
  EXPECT_EQ(parse_size("65536", "--sizes"), 65536u);
  EXPECT_THROW(parse_size("1X", "--sizes"), UsageError);
  EXPECT_THROW(parse_size("1K", "--sizes"), UsageError);  // below 64K
}

TEST(Options, RepsBelowTheMinimumAreRefused) {
  const char* argv[] = {"tma-bench", "copy", "--reps", "5"};
  EXPECT_THROW(parse_options(4, const_cast<char**>(argv)), UsageError);
  const char* ok[] = {"tma-bench", "copy", "--reps", "25", "--sizes", "1M,4M"};
  const Options o = parse_options(6, const_cast<char**>(ok));
  EXPECT_EQ(o.reps, 25);
  EXPECT_EQ(o.sizes, (std::vector<std::size_t>{kMiB, 4 * kMiB}));
}

TEST(Json, WritesNestedValuesAndEscapes) {
  JsonWriter j;
  j.begin_object();
  j.key("s").value("a\"b\n");
  j.key("n").begin_array(true).value(1).value(2.5).null().end_array();
  j.key("o").begin_object().end_object();
  j.key("inf").value(std::numeric_limits<double>::infinity());
  j.end_object();
  EXPECT_EQ(j.str(),
            "{\n  \"s\": \"a\\\"b\\n\",\n  \"n\": [1, 2.5, null],\n  \"o\": {},\n  \"inf\": "
            "null\n}\n");
  JsonWriter bad;
  bad.begin_object();
  EXPECT_THROW(bad.value(1), std::logic_error);  // a value without a key
}

TEST(Layout, IndexOfTellsViewFromPadding) {
  const TensorView v = pitched_layout(DataType::kBFloat16, {3, 5}, 8);
  EXPECT_EQ(footprint_elements(v), 2 * 8 + 5);
  const IndexOf in = index_of(v, 8 + 4);
  EXPECT_TRUE(in.inside);
  EXPECT_EQ(in.index, (std::vector<std::int64_t>{1, 4}));
  EXPECT_FALSE(index_of(v, 8 + 5).inside);
}

TEST(Layout, MergesDimensionsContiguousInBoth) {
  const TensorView a = contiguous_layout(DataType::kFloat32, {2, 3, 4});
  const TensorView b = pitched_layout(DataType::kFloat32, {2, 3, 4}, 8);
  EXPECT_EQ(merge_contiguous_dims(a, a).a.rank, 1);
  const MergedPair m = merge_contiguous_dims(a, b);
  EXPECT_EQ(m.a.rank, 2);
  EXPECT_EQ(m.a.shape[0], 6);
  EXPECT_EQ(m.b.strides[0], 8);
}

TEST(Layout, RowPitchRoundsToSixteenBytes) {
  EXPECT_EQ(row_pitch_for(DataType::kBFloat16, 999), 1000);
  EXPECT_EQ(row_pitch_for(DataType::kUInt8, 999, 64), 1072);
  EXPECT_EQ(row_pitch_for(DataType::kFloat32, 1), 4);
}

TEST(Suites, EveryCaseIsValidForTheOps) {
  Options o;
  o.sizes = default_sizes(false);
  std::set<std::string> names;
  int count = 0;
  for (const Suite* s : suites()) {
    for (const Case& c : s->cases(o)) {
      SCOPED_TRACE(c.name);
      ++count;
      EXPECT_TRUE(names.insert(c.name).second) << "duplicate name";
      EXPECT_EQ(c.suite, s->name);
      EXPECT_TRUE(c.name.starts_with(std::string(s->name) + "/" + c.family + "/"));
      for (const TensorView* v : {&c.src, &c.dst}) {
        EXPECT_TRUE(is_nested(*v));
        for (int d = 0; d + 1 < v->rank; ++d) {
          EXPECT_EQ(v->strides[d] * element_bytes(v->dtype) % 16, 0) << "stride " << d;
        }
      }
      if (c.gemm) {
        // A as stored, D row-major; leading dimensions multiples of 8 (TMA's 16 bytes).
        EXPECT_EQ(c.src.numel(), c.gemm->m * c.gemm->k);
        EXPECT_EQ(c.dst.numel(), c.gemm->m * c.gemm->n);
        EXPECT_EQ(c.gemm->k % 8, 0);
        EXPECT_EQ(c.gemm->n % 8, 0);
        EXPECT_EQ(c.gemm->m % 8, 0);
        EXPECT_GT(c.flops(), 0);
      } else {
        EXPECT_EQ(c.src.numel(), c.dst.numel());
        EXPECT_EQ(c.flops(), 0);
      }
      EXPECT_LE(c.input_bytes(), 4ull << 30);
    }
  }
  EXPECT_GT(count, 60);
  EXPECT_NE(find_suite("copy"), nullptr);
  EXPECT_NE(find_suite("gemm"), nullptr);
  EXPECT_FALSE(find_suite("gemm")->in_all);
  EXPECT_EQ(find_suite("nope"), nullptr);
}

TEST(Suites, GemmListsSquaresAndLlmShapes) {
  Options o;
  o.sizes = default_sizes(false);
  const std::vector<Case> all = find_suite("gemm")->cases(o);
  EXPECT_EQ(all.size(), 5u + 7u * 6u);
  int quick = 0;
  for (const Case& c : all)
    quick += c.quick;
  EXPECT_EQ(quick, 3 + 4);
  EXPECT_EQ(all.front().name, "gemm/square/bf16/1024x1024x1024");
  EXPECT_EQ(all.back().name, "gemm/llm/bf16/16384x28672x8192");
  // Default layout rc: A [M, K] row-major as stored; B column-major.
  EXPECT_TRUE(all.back().gemm->a_row_major);
  EXPECT_FALSE(all.back().gemm->b_row_major);
  EXPECT_EQ(all.back().input_bytes(), (16384ull * 8192 + 8192ull * 28672) * 2);
  EXPECT_EQ(all.back().moved_bytes(), all.back().input_bytes() + 16384ull * 28672 * 2);
  EXPECT_DOUBLE_EQ(all.back().flops(), 2.0 * 16384 * 28672 * 8192);

  o.layout = "cr";
  const Case cr = find_suite("gemm")->cases(o).back();
  EXPECT_FALSE(cr.gemm->a_row_major);
  EXPECT_TRUE(cr.gemm->b_row_major);
  EXPECT_EQ(cr.src.shape[0], 8192);  // A column-major: stored [K, M]
}

TEST(Options, GemmFlags) {
  const char* argv[] = {"tma-bench",     "gemm",     "--layout",       "cc",     "--sweep",
                        "--no-ordinary", "--no-pdl", "--no-gpc-order", "--tuned"};
  const Options o = parse_options(9, const_cast<char**>(argv));
  EXPECT_EQ(o.layout, "cc");
  EXPECT_TRUE(o.sweep);
  EXPECT_TRUE(o.no_ordinary);
  EXPECT_TRUE(o.no_pdl);
  EXPECT_TRUE(o.no_gpc_order);
  EXPECT_TRUE(o.tuned);
  EXPECT_TRUE(o.gemm_options_given);
  const char* bad[] = {"tma-bench", "gemm", "--layout", "rx"};
  EXPECT_THROW(parse_options(4, const_cast<char**>(bad)), UsageError);
  const char* shapes[] = {"tma-bench", "gemm", "--shapes", "2048x1536x2048,7x8x9"};
  const Options s = parse_options(4, const_cast<char**>(shapes));
  ASSERT_EQ(s.shapes.size(), 2u);
  EXPECT_EQ(s.shapes[0].m, 2048);
  EXPECT_EQ(s.shapes[0].n, 1536);
  EXPECT_EQ(s.shapes[0].k, 2048);
  EXPECT_EQ(s.shapes[1].k, 9);
  for (const char* text : {"2048x1536", "0x8x9", "2x3x4y", "2x3x4,", "axbxc"}) {
    const char* argv_bad[] = {"tma-bench", "gemm", "--shapes", text};
    EXPECT_THROW(parse_options(4, const_cast<char**>(argv_bad)), UsageError) << text;
  }
  const char* variants[] = {"tma-bench", "gemm", "--variants", "cfg1_cl2,cfg2_sk2,cfg0_sk"};
  const Options v = parse_options(4, const_cast<char**>(variants));
  ASSERT_EQ(v.variants.size(), 3u);
  EXPECT_EQ(v.variants[0], "cfg1_cl2");
  EXPECT_EQ(v.variants[2], "cfg0_sk");
  EXPECT_TRUE(v.gemm_options_given);
  const char* sk1[] = {"tma-bench", "gemm", "--variants", "cfg3_sk1"};
  EXPECT_EQ(parse_options(4, const_cast<char**>(sk1)).variants.at(0), "cfg3_sk");
  // A raster group suffix _gG (1..9999) rides on any variant; cfgN_sk1_gG is cfgN_sk_gG.
  const char* groups[] = {"tma-bench", "gemm", "--variants",
                          "cfg0_sk2_g4,cfg3_sk1_g16,cfg1_cl1_g1"};
  const Options g = parse_options(4, const_cast<char**>(groups));
  ASSERT_EQ(g.variants.size(), 3u);
  EXPECT_EQ(g.variants[0], "cfg0_sk2_g4");
  EXPECT_EQ(g.variants[1], "cfg3_sk_g16");
  EXPECT_EQ(g.variants[2], "cfg1_cl1_g1");
  for (const char* text :
       {"cfg1", "cfg1_cl3", "cfgx_cl2", "cfg1_cl2,", "tma_cfg1_cl2", "cfg1_sk8", "cfg0_sk2_g0",
        "cfg0_sk2_g", "cfg0_sk2_g12345", "cfg0_g4", "cfg0_sk2_g4_g4"}) {
    const char* argv_bad[] = {"tma-bench", "gemm", "--variants", text};
    EXPECT_THROW(parse_options(4, const_cast<char**>(argv_bad)), UsageError) << text;
  }
  const char* plan[] = {"tma-bench", "gemm", "--plan", "8192x4096x4096=cfg2_sk2,64x8x16=cfg1_sk1"};
  const Options p = parse_options(4, const_cast<char**>(plan));
  ASSERT_EQ(p.plan_overrides.size(), 2u);
  EXPECT_EQ(p.plan_overrides[0].shape.m, 8192);
  EXPECT_EQ(p.plan_overrides[0].shape.n, 4096);
  EXPECT_EQ(p.plan_overrides[0].variant, "cfg2_sk2");
  EXPECT_EQ(p.plan_overrides[1].shape.k, 16);
  EXPECT_EQ(p.plan_overrides[1].variant, "cfg1_sk");
  EXPECT_TRUE(p.gemm_options_given);
  for (const char* text : {"8192x4096x4096", "8192x4096x4096=", "=cfg2_sk2", "8192x4096=cfg2_sk2",
                           "8192x4096x4096=cfg2_sk2,", "8192x4096x4096=cfg2_sk2=cfg1_cl1"}) {
    const char* argv_bad[] = {"tma-bench", "gemm", "--plan", text};
    EXPECT_THROW(parse_options(4, const_cast<char**>(argv_bad)), UsageError) << text;
  }
}

// A verified, timed implementation of `c` that took `ms`.
ImplResult timed(const Case& c, std::string name, Role role, double ms) {
  ImplResult r;
  r.name = std::move(name);
  r.role = role;
  r.verified = true;
  r.timing = Timing{};
  r.timing->stats = summarize({ms});
  r.gbps = gbps(static_cast<double>(c.moved_bytes()), ms);
  r.tflops = tflops(c.flops(), ms);
  return r;
}

TEST(Record, GemmCaseCarriesTflopsAndItsRatios) {
  Options o;
  o.sizes = default_sizes(false);
  const Suite& gemm = *find_suite("gemm");
  const std::vector<Case> cases = gemm.cases(o);
  const Case& c = cases[2];
  ASSERT_EQ(c.name, "gemm/square/bf16/4096x4096x4096");
  CaseResult r;
  r.c = &c;
  r.impls = {timed(c, "tma", Role::kOurs, 0.25), timed(c, "cublasLt", Role::kPeer, 0.2),
             timed(c, "ordinary", Role::kPeer, 0.5), timed(c, "tma_cfg1_cl2", Role::kVariant, 0.1)};
  EXPECT_NEAR(r.impls[0].tflops, 2.0 * 4096 * 4096 * 4096 / 0.25e-3 / 1e12, 1e-9);
  // The variant is faster but not a peer: ratio is against cuBLAS.
  EXPECT_EQ(r.best_peer()->name, "cublasLt");
  EXPECT_DOUBLE_EQ(*r.ratio(), 0.8);
  EXPECT_DOUBLE_EQ(*r.ratio_of("tma", "ordinary"), 2.0);

  MachineInfo machine;
  RunRecord run;
  run.options = &o;
  run.machine = &machine;
  run.results.push_back(r);
  std::string json = to_json(run);
  EXPECT_EQ(json.find("\"clock_probe\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"clock_probe_window_ns\": null"), std::string::npos) << json;
  o.clock_probe = true;
  run.results.back().impls[1].timing->clock = ClockProbe{1755.5, 1740.25, 20};
  json = to_json(run);
  for (const char* want : {"\"clock_probe\": {", "\"mhz_before\": 1755.5", "\"mhz_after\": 1740.25",
                           "\"samples\": 20", "\"clock_probe_window_ns\": 10000"}) {
    EXPECT_NE(json.find(want), std::string::npos) << want << "\n" << json;
  }
  for (const char* want : {"\"suite\": \"gemm\"", "\"m\": 4096", "\"layout\": \"rc\"",
                           "\"tflops\": ", "\"ratio_vs_cublas\": 0.8", "\"tma_vs_ordinary\": 2",
                           "\"role\": \"variant\"", "\"complete\": false"}) {
    EXPECT_NE(json.find(want), std::string::npos) << want << "\n" << json;
  }

  testing::internal::CaptureStdout();
  print_table_header(gemm);
  print_table_row(gemm, r);
  const std::string table = testing::internal::GetCapturedStdout();
  for (const char* want :
       {"TFLOP/s", "vs cuBLAS", "4096x4096x4096", "0.80", "2.00", "tma_cfg1_cl2="}) {
    EXPECT_NE(table.find(want), std::string::npos) << want << "\n" << table;
  }
  EXPECT_EQ(table.find("%ceil"), std::string::npos) << table;
}

TEST(Record, RatioOfComparesSpeeds) {
  CaseResult r;
  ImplResult a;
  a.name = "tma";
  a.timing = Timing{};
  a.gbps = 300;
  ImplResult b = a;
  b.name = "cublasLt";
  b.gbps = 200;
  r.impls = {a, b};
  EXPECT_DOUBLE_EQ(*r.ratio_of("tma", "cublasLt"), 1.5);
  EXPECT_FALSE(r.ratio_of("tma", "ordinary"));
}

}  // namespace
}  // namespace tma::bench
