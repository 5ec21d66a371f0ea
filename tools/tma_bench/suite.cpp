// tma-bench: case results (see suite.hpp).
#include "suite.hpp"

namespace tma::bench {

std::string_view role_name(Role r) {
  switch (r) {
    case Role::kOurs:
      return "ours";
    case Role::kPeer:
      return "peer";
    case Role::kCeiling:
      return "ceiling";
    case Role::kVariant:
      return "variant";
  }
  return "unknown";
}

std::string_view status_name(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kSkipped:
      return "skipped";
    case Status::kFailed:
      return "failed";
  }
  return "unknown";
}

namespace {

// Bytes of a GEMM operand of `rows` x `cols` elements of `t`.
std::size_t matrix_bytes(DataType t, std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) *
         static_cast<std::size_t>(element_bytes(t));
}

}  // namespace

std::size_t Case::input_bytes() const {
  if (!gemm) return logical_bytes(src);
  return matrix_bytes(src.dtype, gemm->m, gemm->k) + matrix_bytes(src.dtype, gemm->k, gemm->n);
}

std::size_t Case::moved_bytes() const {
  if (!gemm) return logical_bytes(src) + logical_bytes(dst);
  return input_bytes() + matrix_bytes(dst.dtype, gemm->m, gemm->n);
}

double Case::flops() const {
  if (!gemm) return 0;
  return 2.0 * static_cast<double>(gemm->m) * static_cast<double>(gemm->n) *
         static_cast<double>(gemm->k);
}

std::string Case::shape_label() const {
  if (!gemm) return shape_string(src);
  return std::to_string(gemm->m) + "x" + std::to_string(gemm->n) + "x" + std::to_string(gemm->k);
}

const ImplResult* CaseResult::find(std::string_view impl) const {
  for (const ImplResult& r : impls) {
    if (r.name == impl) return &r;
  }
  return nullptr;
}

const ImplResult* CaseResult::ours() const {
  for (const ImplResult& r : impls) {
    if (r.role == Role::kOurs) return &r;
  }
  return nullptr;
}

const ImplResult* CaseResult::ceiling() const {
  for (const ImplResult& r : impls) {
    if (r.role == Role::kCeiling) return &r;
  }
  return nullptr;
}

const ImplResult* CaseResult::best_peer() const {
  const ImplResult* best = nullptr;
  for (const ImplResult& r : impls) {
    if (r.role == Role::kPeer && r.verified && r.timing && (!best || r.gbps > best->gbps)) {
      best = &r;
    }
  }
  return best;
}

std::optional<double> CaseResult::ratio() const {
  const ImplResult* o = ours();
  const ImplResult* p = best_peer();
  if (!o || !o->timing || !p || p->gbps <= 0) return std::nullopt;
  return o->gbps / p->gbps;
}

std::optional<double> CaseResult::ceiling_fraction() const {
  const ImplResult* o = ours();
  const ImplResult* top = ceiling();
  if (!o || !o->timing || !top || !top->timing || top->gbps <= 0) return std::nullopt;
  return o->gbps / top->gbps;
}

std::optional<double> CaseResult::ratio_of(std::string_view numerator,
                                           std::string_view denominator) const {
  const ImplResult* a = find(numerator);
  const ImplResult* b = find(denominator);
  if (!a || !b || !a->timing || !b->timing || b->gbps <= 0) return std::nullopt;
  return a->gbps / b->gbps;  // the same bytes (and flops) on both sides: a ratio of speeds
}

bool CaseResult::verified() const {
  if (impls.empty()) return false;
  for (const ImplResult& r : impls) {
    if (!r.verified) return false;
  }
  return true;
}

}  // namespace tma::bench
