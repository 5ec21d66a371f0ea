// tma-bench's host logic, tested without a GPU: statistics, the L2 plan, sizes on the command
// line, the JSON writer, layouts, and the suites' case lists (every layout valid for the ops).
#include <gtest/gtest.h>

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
  const char* argv[] = {"tma-bench", "gemm",          "--layout", "cc",
                        "--sweep",   "--no-ordinary", "--no-pdl", "--no-gpc-order"};
  const Options o = parse_options(8, const_cast<char**>(argv));
  EXPECT_EQ(o.layout, "cc");
  EXPECT_TRUE(o.sweep);
  EXPECT_TRUE(o.no_ordinary);
  EXPECT_TRUE(o.no_pdl);
  EXPECT_TRUE(o.no_gpc_order);
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
  const std::string json = to_json(run);
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
