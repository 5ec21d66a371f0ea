// tma-bench: what a person sees: the progress line on stderr and the results table on stdout.
//
// The progress line ("[12/40] transpose bf16 16384x16384 ...") is rewritten in place when stderr
// is a terminal and printed as plain lines otherwise (logs, CI). Anything written to stdout goes
// through Progress::clear() first so the two never share a line.
#pragma once

#include <string>
#include <string_view>

#include "suite.hpp"

namespace tma::bench {

class Progress {
 public:
  Progress();  // a terminal when stderr is one
  // Case `index` (1-based) of `total`: "[index/total] text ...".
  void show(int index, int total, std::string_view text);
  // The step within the case ("verify tma", "time cudaMemcpy"): on a terminal, appended to the
  // line in place; otherwise printed as a line of its own only when steps are logged.
  void step(std::string_view what);
  // Log steps on non-terminals too (Suite::log_steps).
  void set_log_steps(bool on) { log_steps_ = on; }
  // Erases the line (terminals) so stdout can be written.
  void clear();

 private:
  bool tty_ = false;
  bool shown_ = false;
  bool log_steps_ = false;
  std::string line_;
};

// The heading and column titles of a suite's table.
void print_table_header(const Suite& s);
// One row; failures and skips say why in place of the numbers.
void print_table_row(const Suite& s, const CaseResult& r);

}  // namespace tma::bench
