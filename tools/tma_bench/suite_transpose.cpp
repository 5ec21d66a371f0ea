// tma-bench transpose: dst = src^T (tma::ops::transpose) through TMA, against the ordinary-loads
// path, with the TMA copy of the same bytes (src into a buffer of src's layout) as the ceiling a
// transpose can reach: transpose / copy >= 0.90 is the target.
//
// Cases: the size ladder as [2^a, 2^b] matrices (square or 1:2) in bf16, fp16 and fp32, and
// ragged ones: odd extents with padded rows, a row and a column vector, and batches
// ([batch, rows, cols] -> [batch, cols, rows]). Rows whose bytes are not a multiple of 16 are
// padded to the next multiple, as TMA requires.
#include <bit>
#include <cmath>

#include "kernels.hpp"
#include "runner.hpp"
#include "suite.hpp"
#include "tma/ops/copy.hpp"

namespace tma::bench {
namespace {

constexpr DataType kDtypes[] = {DataType::kBFloat16, DataType::kFloat16, DataType::kFloat32};

// A row-major layout of `shape`, its rows padded to 16 bytes when they are not already.
TensorView tma_layout(DataType t, const std::vector<std::int64_t>& shape) {
  return pitched_layout(t, shape, row_pitch_for(t, shape.back()));
}

// The transposed shape: the last two extents swapped.
std::vector<std::int64_t> transposed(std::vector<std::int64_t> shape) {
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  return shape;
}

Case make_case(std::string family, std::string label, DataType t,
               const std::vector<std::int64_t>& shape) {
  Case c;
  c.suite = "transpose";
  c.name = "transpose/" + family + "/" + std::string(dtype_name(t)) + "/" + label;
  c.family = std::move(family);
  c.src = tma_layout(t, shape);
  c.dst = tma_layout(t, transposed(shape));
  c.quick = c.input_bytes() <= kQuickRaggedBytes;
  return c;
}

// About `bytes` of input as [rows, cols]: rows the largest power of two <= sqrt(elements), cols the
// rest, rounded down to a multiple of 16 (square for 4^k elements, 1:2 otherwise).
Case ladder_case(DataType t, std::size_t bytes) {
  const auto numel = static_cast<std::uint64_t>(bytes / static_cast<std::size_t>(element_bytes(t)));
  const auto rows = static_cast<std::int64_t>(
      std::bit_floor(static_cast<std::uint64_t>(std::sqrt(static_cast<double>(numel)))));
  const std::int64_t cols = static_cast<std::int64_t>(numel) / rows / 16 * 16;
  Case c = make_case("ladder", "", t, {rows, cols});
  c.name += size_label(c.input_bytes());
  c.quick = true;  // --quick shortens the ladder itself
  return c;
}

std::vector<Case> transpose_cases(const Options& o) {
  std::vector<Case> cases;
  for (DataType t : kDtypes) {
    for (std::size_t s : o.sizes)
      cases.push_back(ladder_case(t, s));
  }
  using Shape = std::vector<std::int64_t>;
  struct Ragged {
    const char* family;
    Shape shape;
  };
  const Ragged ragged[] = {
      {"padded", {4095, 1999}},    {"padded", {8191, 8193}},     {"rowvec", {1, 65536}},
      {"colvec", {65536, 1}},      {"batched", {7, 1000, 1000}}, {"batched", {3, 4095, 1999}},
      {"batched", {256, 128, 96}},
  };
  for (DataType t : kDtypes) {
    for (const Ragged& r : ragged) {
      Case c = make_case(r.family, "", t, r.shape);
      c.name += shape_string(c.src);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

CaseResult run_transpose(const Case& c, Runner& r) {
  CaseResult result;
  result.c = &c;
  // Set buffers: src, and one output buffer that holds either the transpose (dst's layout) or the
  // ceiling copy (src's layout). Extra: the reference transpose.
  const std::size_t out_bytes = std::max(footprint_bytes(c.dst), footprint_bytes(c.src));
  const std::optional<Workspace> ws =
      r.allocate({footprint_bytes(c.src), out_bytes}, {footprint_bytes(c.dst)}, result);
  if (!ws) return result;
  auto src = [&](int set) { return with_data(c.src, ws->buffer(set, 0)); };
  auto dst = [&](int set) { return with_data(c.dst, ws->buffer(set, 1)); };
  auto copy_dst = [&](int set) { return with_data(c.src, ws->buffer(set, 1)); };
  for (int set = 0; set < ws->sets(); ++set)
    r.fill_random(c, src(set), static_cast<std::uint64_t>(set));

  const TensorView reference = with_data(c.dst, ws->extra(0));
  poison(reference, r.stream());
  transpose_reference(reference, src(0), r.stream());

  auto op = [&](ops::Path path) {
    return [&, path](int set) { ops::transpose(dst(set), src(set), r.stream(), path); };
  };
  // All timed together, round-robin (Runner::measure_together): one clock and power state.
  std::vector<Impl> impls;
  impls.push_back({"tma", "tma::ops::transpose Path::kTma", Role::kOurs, op(ops::Path::kTma),
                   dst(0), reference});
  if (!r.options().no_ordinary) {
    impls.push_back({"ordinary", "tma::ops::transpose Path::kOrdinary", Role::kPeer,
                     op(ops::Path::kOrdinary), dst(0), reference});
  }
  auto copy = [&](int set) { ops::copy(copy_dst(set), src(set), r.stream(), ops::Path::kTma); };
  impls.push_back({"copy_ceiling", "tma::ops::copy Path::kTma of src", Role::kCeiling, copy,
                   copy_dst(0), src(0)});
  for (ImplResult& m : r.measure_together(c, impls, *ws))
    result.impls.push_back(std::move(m));
  return result;
}

}  // namespace

const Suite& transpose_suite() {
  static const Suite kSuite{
      "transpose",
      "dst = src^T: TMA vs ordinary loads; ceiling = the TMA copy of the same bytes",
      {"tma", "ordinary", "copy_ceiling"},
      transpose_cases,
      run_transpose,
  };
  return kSuite;
}

}  // namespace tma::bench
