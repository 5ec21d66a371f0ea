// tma-bench copy: dst = src through TMA (tma::ops::copy, Path::kTma), against the ordinary-loads
// path (Path::kOrdinary) and the CUDA runtime's own copy: cudaMemcpyAsync for contiguous tensors,
// cudaMemcpy2DAsync / cudaMemcpy3DAsync where the layouts are pitched (none for the rest).
//
// Cases: the size ladder as contiguous [rows, 8192] tensors in u8, bf16 and fp32, and ragged
// layouts: odd extents, padded rows (different padding in src and dst), a column slice of a wider
// tensor, an odd-length vector, and a 5-D tensor padded at two levels.
#include <cuda_runtime_api.h>

#include <functional>
#include <optional>

#include "cuda_check.hpp"
#include "runner.hpp"
#include "suite.hpp"
#include "tma/ops/copy.hpp"
#include "tma/ops/tuning.hpp"

namespace tma::bench {
namespace {

constexpr DataType kDtypes[] = {DataType::kUInt8, DataType::kBFloat16, DataType::kFloat32};
// Ladder tensors are [rows, kLadderCols]: rows long enough for full-speed TMA boxes and 16-byte
// loads in every dtype.
constexpr std::int64_t kLadderCols = 8192;

Case make_case(std::string family, std::string label, TensorView src, TensorView dst) {
  Case c;
  c.suite = "copy";
  c.name = "copy/" + family + "/" + std::string(dtype_name(src.dtype)) + "/" + label;
  c.family = std::move(family);
  c.src = src;
  c.dst = dst;
  c.quick = c.input_bytes() <= kQuickRaggedBytes;
  return c;
}

Case ladder_case(DataType t, std::size_t bytes) {
  const auto numel = static_cast<std::int64_t>(bytes / static_cast<std::size_t>(element_bytes(t)));
  const TensorView v = numel >= kLadderCols
                           ? contiguous_layout(t, {numel / kLadderCols, kLadderCols})
                           : contiguous_layout(t, {numel});
  Case c = make_case("ladder", size_label(logical_bytes(v)), v, v);
  c.quick = true;  // --quick shortens the ladder itself
  return c;
}

// Odd extents; padded rows in both tensors, differently.
void add_ragged(DataType t, std::vector<Case>& out) {
  const std::int64_t e = element_bytes(t);
  auto padded = [&](std::string family, const std::vector<std::int64_t>& shape,
                    std::int64_t src_extra, std::int64_t dst_extra) {
    const std::int64_t cols = shape.back();
    const TensorView src = pitched_layout(t, shape, row_pitch_for(t, cols, src_extra));
    const TensorView dst = pitched_layout(t, shape, row_pitch_for(t, cols, dst_extra));
    out.push_back(make_case(std::move(family), shape_string(src), src, dst));
  };
  padded("padded3d", {37, 1001, 999}, 64, 0);
  padded("padded2d", {4093, 3001}, 16, 48);

  // The left half of a [4096, 8192] tensor into a contiguous [4096, 4096] one.
  const TensorView slice_src = make_layout(t, {4096, 4096}, {8192, 1});
  out.push_back(make_case("slice", "4096x4096", slice_src, contiguous_layout(t, {4096, 4096})));

  const TensorView vec = contiguous_layout(t, {1000003});
  out.push_back(make_case("odd1d", "1000003", vec, vec));

  // [3, 5, 7, 129, 257], padded after each row and after each 129-row plane: no pitched memcpy
  // describes it, so only the ordinary path is its peer.
  const std::vector<std::int64_t> shape5{3, 5, 7, 129, 257};
  auto two_level = [&](std::int64_t row_extra, std::int64_t plane_extra) {
    const std::int64_t row = row_pitch_for(t, 257, row_extra);
    const std::int64_t plane = 129 * row + plane_extra / e;
    return make_layout(t, shape5, {5 * 7 * plane, 7 * plane, plane, row, 1});
  };
  const TensorView src5 = two_level(0, 64);
  out.push_back(make_case("padded5d", shape_string(src5), src5, two_level(32, 16)));
}

std::vector<Case> copy_cases(const Options& o) {
  std::vector<Case> cases;
  for (DataType t : kDtypes) {
    for (std::size_t s : o.sizes)
      cases.push_back(ladder_case(t, s));
  }
  for (DataType t : kDtypes)
    add_ragged(t, cases);
  return cases;
}

// The CUDA runtime's copy for the pair of layouts, when one describes it.
struct MemcpyPeer {
  std::string detail;
  std::function<void(void* dst, const void* src, cudaStream_t)> run;
};

std::optional<MemcpyPeer> memcpy_peer(const Case& c) {
  const MergedPair m = merge_contiguous_dims(c.dst, c.src);
  const TensorView& d = m.a;
  const TensorView& s = m.b;
  const auto e = static_cast<std::size_t>(element_bytes(c.src.dtype));
  auto bytes = [e](std::int64_t n) { return static_cast<std::size_t>(n) * e; };
  if (d.rank == 1) {
    const std::size_t n = bytes(d.shape[0]);
    return MemcpyPeer{"cudaMemcpyAsync", [n](void* dst, const void* src, cudaStream_t st) {
                        TMA_BENCH_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, st));
                      }};
  }
  if (d.rank == 2) {
    const std::size_t dpitch = bytes(d.strides[0]), spitch = bytes(s.strides[0]);
    const std::size_t width = bytes(d.shape[1]);
    const auto height = static_cast<std::size_t>(d.shape[0]);
    return MemcpyPeer{"cudaMemcpy2DAsync", [=](void* dst, const void* src, cudaStream_t st) {
                        TMA_BENCH_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height,
                                                          cudaMemcpyDeviceToDevice, st));
                      }};
  }
  // cudaMemcpy3D: planes must be a whole number of rows apart (slice pitch = pitch * ysize).
  if (d.rank == 3 && d.strides[0] % d.strides[1] == 0 && s.strides[0] % s.strides[1] == 0) {
    cudaMemcpy3DParms p{};
    p.extent = cudaExtent{bytes(d.shape[2]), static_cast<std::size_t>(d.shape[1]),
                          static_cast<std::size_t>(d.shape[0])};
    p.kind = cudaMemcpyDeviceToDevice;
    const std::size_t dpitch = bytes(d.strides[1]), spitch = bytes(s.strides[1]);
    const auto drows = static_cast<std::size_t>(d.strides[0] / d.strides[1]);
    const auto srows = static_cast<std::size_t>(s.strides[0] / s.strides[1]);
    return MemcpyPeer{
        "cudaMemcpy3DAsync", [=](void* dst, const void* src, cudaStream_t st) {
          cudaMemcpy3DParms q = p;
          q.dstPtr = cudaPitchedPtr{dst, dpitch, p.extent.width, drows};
          // cudaPitchedPtr has no const variant; the source is only read.
          q.srcPtr = cudaPitchedPtr{const_cast<void*>(src), spitch, p.extent.width, srows};
          TMA_BENCH_CHECK(cudaMemcpy3DAsync(&q, st));
        }};
  }
  return std::nullopt;
}

// Buffers for one copy case: src and dst views into each rotation set, src filled with random
// bytes. Empty (with the reason in `result`) when the case does not fit.
struct CopyBuffers {
  const Case& c;
  Workspace ws;
  TensorView src(int set) const { return with_data(c.src, ws.buffer(set, 0)); }
  TensorView dst(int set) const { return with_data(c.dst, ws.buffer(set, 1)); }
};

std::optional<CopyBuffers> copy_buffers(const Case& c, Runner& r, CaseResult& result) {
  std::optional<Workspace> ws =
      r.allocate({footprint_bytes(c.src), footprint_bytes(c.dst)}, {}, result);
  if (!ws) return std::nullopt;
  CopyBuffers b{c, std::move(*ws)};
  for (int set = 0; set < b.ws.sets(); ++set)
    r.fill_random(c, b.src(set), static_cast<std::uint64_t>(set));
  return b;
}

// The cudaMemcpy(2D/3D)Async peer of case `c` on `b`'s buffers, when the layout has one.
std::optional<Impl> memcpy_impl(const Case& c, const CopyBuffers& b, Runner& r) {
  std::optional<MemcpyPeer> peer = memcpy_peer(c);
  if (!peer) return std::nullopt;
  auto launch = [&b, &r, run = peer->run](int set) {
    run(b.dst(set).data, b.src(set).data, r.stream());
  };
  return Impl{"cudaMemcpy", peer->detail, Role::kPeer, launch, b.dst(0), b.src(0)};
}

CaseResult run_copy(const Case& c, Runner& r) {
  CaseResult result;
  result.c = &c;
  const std::optional<CopyBuffers> b = copy_buffers(c, r, result);
  if (!b) return result;
  const Workspace* ws = &b->ws;
  auto src = [&](int set) { return b->src(set); };
  auto dst = [&](int set) { return b->dst(set); };

  auto op = [&](ops::Path path) {
    return [&, path](int set) { ops::copy(dst(set), src(set), r.stream(), path); };
  };
  // All timed together, round-robin (Runner::measure_together): one clock and power state.
  std::vector<Impl> impls;
  impls.push_back(
      {"tma", "tma::ops::copy Path::kTma", Role::kOurs, op(ops::Path::kTma), dst(0), src(0)});
  if (!r.options().no_ordinary) {
    impls.push_back({"ordinary", "tma::ops::copy Path::kOrdinary", Role::kPeer,
                     op(ops::Path::kOrdinary), dst(0), src(0)});
  }
  if (std::optional<Impl> peer = memcpy_impl(c, *b, r)) impls.push_back(std::move(*peer));
  for (ImplResult& m : r.measure_together(c, impls, *ws))
    result.impls.push_back(std::move(m));
  return result;
}

// copy-tune: the contiguous ladder cases through every TMA copy configuration
// (tma::ops::kCopyConfigs), cudaMemcpyAsync beside them: the measurement that picks the default.
std::vector<Case> copy_tune_cases(const Options& o) {
  std::vector<Case> cases;
  for (Case& c : copy_cases(o)) {
    if (c.family != "ladder") continue;
    c.suite = "copy-tune";
    c.name = "copy-tune" + c.name.substr(c.name.find('/'));
    cases.push_back(std::move(c));
  }
  return cases;
}

CaseResult run_copy_tune(const Case& c, Runner& r) {
  CaseResult result;
  result.c = &c;
  const std::optional<CopyBuffers> b = copy_buffers(c, r, result);
  if (!b) return result;
  const Workspace* ws = &b->ws;
  auto src = [&](int set) { return b->src(set); };
  auto dst = [&](int set) { return b->dst(set); };
  std::vector<Impl> impls;
  for (int k = 0; k < ops::kNumCopyConfigs; ++k) {
    const ops::CopyConfig& cfg = ops::kCopyConfigs[k];
    auto launch = [&, k](int set) { ops::copy_with_config(dst(set), src(set), r.stream(), k); };
    const std::string name = "cfg" + std::to_string(k);
    const std::string detail = "stages " + std::to_string(cfg.stages) + ", lookahead " +
                               std::to_string(cfg.lookahead) + ", tile " +
                               std::to_string(cfg.tile_bytes) + " B, " +
                               std::to_string(cfg.ctas_per_sm) + " CTAs/SM";
    impls.push_back({name, detail, k == 0 ? Role::kOurs : Role::kPeer, launch, dst(0), src(0)});
  }
  if (std::optional<Impl> peer = memcpy_impl(c, *b, r)) impls.push_back(std::move(*peer));
  for (ImplResult& m : r.measure_together(c, impls, *ws))
    result.impls.push_back(std::move(m));
  return result;
}

}  // namespace

const Suite& copy_tune_suite() {
  static const Suite kSuite{
      "copy-tune",
      "the copy ladder through every TMA copy configuration (tma::ops::kCopyConfigs)",
      {"cfg0", "cfg1", "cfg2", "cfg3", "cfg4", "cfg5", "cfg6", "cudaMemcpy"},
      copy_tune_cases,
      run_copy_tune,
  };
  return kSuite;
}

const Suite& copy_suite() {
  static const Suite kSuite{
      "copy",
      "dst = src: TMA vs ordinary 16-byte loads vs cudaMemcpy(2D/3D)Async",
      {"tma", "ordinary", "cudaMemcpy"},
      copy_cases,
      run_copy,
  };
  return kSuite;
}

}  // namespace tma::bench
