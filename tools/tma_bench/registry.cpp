// tma-bench: the list of suites. Adding one: a suite_<name>.cpp that defines <name>_suite(), its
// declaration here, and one entry in the list.
#include "suite.hpp"

namespace tma::bench {

const Suite& copy_suite();       // suite_copy.cpp
const Suite& transpose_suite();  // suite_transpose.cpp
const Suite& copy_tune_suite();  // suite_copy.cpp
const Suite& gemm_suite();       // suite_gemm.cpp (not in `all`)

std::span<const Suite* const> suites() {
  static const Suite* const kSuites[] = {
      &copy_suite(),
      &transpose_suite(),
      &copy_tune_suite(),
      &gemm_suite(),
  };
  return kSuites;
}

const Suite* find_suite(std::string_view name) {
  for (const Suite* s : suites()) {
    if (s->name == name) return s;
  }
  return nullptr;
}

}  // namespace tma::bench
