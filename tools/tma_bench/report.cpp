// tma-bench: progress line and results table (see report.hpp).
#include "report.hpp"

#include <unistd.h>

#include <cstdio>

namespace tma::bench {
namespace {

constexpr int kCaseWidth = 10;
constexpr int kDtypeWidth = 5;
constexpr int kShapeWidth = 16;
constexpr int kSizeWidth = 10;
constexpr int kImplWidth = 12;
constexpr int kRatioWidth = 7;

std::string gbps_cell(const ImplResult* r) {
  if (!r) return "-";
  if (!r->verified) return "FAIL";
  if (!r->timing) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", r->gbps);
  return buf;
}

}  // namespace

Progress::Progress() : tty_(isatty(STDERR_FILENO) == 1) {}

void Progress::show(int index, int total, std::string_view text) {
  line_.assign(1, '[');
  line_.append(std::to_string(index)).append(1, '/').append(std::to_string(total)).append("] ");
  line_.append(text);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s ...", line_.c_str());
  } else {
    std::fprintf(stderr, "%s ...\n", line_.c_str());
  }
  std::fflush(stderr);
  shown_ = true;
}

void Progress::step(std::string_view what) {
  if (!tty_ || !shown_) return;
  std::fprintf(stderr, "\r\033[K%s ... %.*s", line_.c_str(), static_cast<int>(what.size()),
               what.data());
  std::fflush(stderr);
}

void Progress::clear() {
  if (tty_ && shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  shown_ = false;
}

void print_table_header(const Suite& s) {
  std::printf("\n%.*s: %.*s\n", static_cast<int>(s.name.size()), s.name.data(),
              static_cast<int>(s.summary.size()), s.summary.data());
  std::printf(
      "GB/s = (bytes read + bytes written) / median time; ratio = %.*s / best verified "
      "peer; %%ceil = %.*s / ceiling\n",
      static_cast<int>(s.columns.front().size()), s.columns.front().data(),
      static_cast<int>(s.columns.front().size()), s.columns.front().data());
  std::printf("%-*s %-*s %-*s %*s", kCaseWidth, "case", kDtypeWidth, "dtype", kShapeWidth, "shape",
              kSizeWidth, "size");
  for (std::string_view c : s.columns) {
    std::printf(" %*.*s", kImplWidth, static_cast<int>(c.size()), c.data());
  }
  std::printf(" %*s %*s\n", kRatioWidth, "ratio", kRatioWidth, "%ceil");
  std::fflush(stdout);
}

void print_table_row(const Suite& s, const CaseResult& r) {
  const Case& c = *r.c;
  std::printf("%-*s %-*s %-*s %*s", kCaseWidth, c.family.c_str(), kDtypeWidth,
              std::string(dtype_name(c.src.dtype)).c_str(), kShapeWidth,
              shape_string(c.src).c_str(), kSizeWidth, size_human(c.input_bytes()).c_str());
  if (r.status == Status::kSkipped) {
    std::printf("  skipped: %s\n", r.note.c_str());
    std::fflush(stdout);
    return;
  }
  for (std::string_view col : s.columns) {
    std::printf(" %*s", kImplWidth, gbps_cell(r.find(col)).c_str());
  }
  char ratio[16] = "-";
  char ceil[16] = "-";
  if (const auto v = r.ratio()) std::snprintf(ratio, sizeof ratio, "%.2f", *v);
  if (const auto v = r.ceiling_fraction()) std::snprintf(ceil, sizeof ceil, "%.0f%%", 100 * *v);
  std::printf(" %*s %*s", kRatioWidth, ratio, kRatioWidth, ceil);
  if (r.status == Status::kFailed) {
    // The details were printed above the row and are in the JSON; the row names who failed.
    std::string who;
    for (const ImplResult& impl : r.impls) {
      if (!impl.verified) who += (who.empty() ? "" : ", ") + impl.name;
    }
    std::printf("  FAILED%s%s", who.empty() ? "" : ": ", who.c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace tma::bench
