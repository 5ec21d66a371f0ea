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

bool CaseResult::verified() const {
  if (impls.empty()) return false;
  for (const ImplResult& r : impls) {
    if (!r.verified) return false;
  }
  return true;
}

}  // namespace tma::bench
