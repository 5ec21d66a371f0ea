// tmakit GPU tests: drawing random specs that tmakit's validator accepts.
//
// The generator (tests/common/random_spec.hpp) follows the driver's documented rules; the
// validator may be stricter (e.g. it rejects permuted outer strides). The hardware-vs-model tests
// only run specs the validator accepts and report, as evidence, the generated specs it rejected.
#pragma once

#include <string>

#include "../common/random_spec.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/validate.hpp"

namespace tma::testing {

struct DrawnSpec {
  bool valid = false;           // false: no spec the validator accepts within the attempts
  int rejected_attempts = 0;    // generated specs the validator rejected before this one
  std::string first_rejection;  // the violations (and the spec) of the first rejected attempt
  TensorMapSpec spec{};
};

// Draws specs from gen(rng) until the validator accepts one (at most `attempts`), all from `rng`
// so that the case replays from its seed.
template <class Gen>
void draw_valid_spec(Rng& rng, DrawnSpec& out, Gen&& gen, int attempts = 100) {
  for (int i = 0; i < attempts; ++i) {
    TensorMapSpec s = gen(rng);
    const auto violations = validate(s);
    if (violations.empty()) {
      out.spec = s;
      out.valid = true;
      return;
    }
    if (out.rejected_attempts++ == 0) {
      for (const auto& v : violations)
        out.first_rejection += to_string(v) + "; ";
      out.first_rejection += "spec: " + to_string(s);
    }
  }
}

}  // namespace tma::testing
