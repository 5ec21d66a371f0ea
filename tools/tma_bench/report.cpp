// tma-bench: progress line and results table (see report.hpp).
#include "report.hpp"

#include <unistd.h>

#include <cstdio>
#include <optional>

namespace tma::bench {
namespace {

constexpr int kCaseWidth = 10;
constexpr int kDtypeWidth = 5;
constexpr int kShapeWidth = 16;
constexpr int kSizeWidth = 10;
constexpr int kImplWidth = 12;
constexpr int kRatioWidth = 7;

// The implementation's speed in the suite's unit (GB/s or TFLOP/s), FAIL, or "-".
std::string speed_cell(const Suite& s, const ImplResult* r) {
  if (!r) return "-";
  if (!r->verified) return "FAIL";
  if (!r->timing) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s.metric == Metric::kFlops ? r->tflops : r->gbps);
  return buf;
}

std::string ratio_cell(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", *v);
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
  if (line_.empty() || (!tty_ && !log_steps_)) return;
  // Whatever the table printed so far is out before the step that may not return.
  std::fflush(stdout);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s ... %.*s", line_.c_str(), static_cast<int>(what.size()),
                 what.data());
  } else {
    std::fprintf(stderr, "%s ... %.*s\n", line_.c_str(), static_cast<int>(what.size()),
                 what.data());
  }
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (tty_ && shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  shown_ = false;
}

void print_table_header(const Suite& s) {
  const int ours_len = static_cast<int>(s.columns.front().size());
  const char* ours = s.columns.front().data();
  std::printf("\n%.*s: %.*s\n", static_cast<int>(s.name.size()), s.name.data(),
              static_cast<int>(s.summary.size()), s.summary.data());
  if (s.metric == Metric::kFlops) {
    std::printf("TFLOP/s = 2 M N K / median time; ratio = %.*s / best verified peer", ours_len,
                ours);
    for (const RatioColumn& r : s.ratios) {
      std::printf("; %.*s = %.*s / %.*s", static_cast<int>(r.title.size()), r.title.data(),
                  static_cast<int>(r.numerator.size()), r.numerator.data(),
                  static_cast<int>(r.denominator.size()), r.denominator.data());
    }
    std::printf("\n");
  } else {
    std::printf(
        "GB/s = (bytes read + bytes written) / median time; ratio = %.*s / best verified "
        "peer; %%ceil = %.*s / ceiling\n",
        ours_len, ours, ours_len, ours);
  }
  std::printf("%-*s %-*s %-*s %*s", kCaseWidth, "case", kDtypeWidth, "dtype", kShapeWidth,
              s.metric == Metric::kFlops ? "MxNxK" : "shape", kSizeWidth, "size");
  for (std::string_view c : s.columns) {
    std::printf(" %*.*s", kImplWidth, static_cast<int>(c.size()), c.data());
  }
  std::printf(" %*s", kRatioWidth, "ratio");
  if (s.metric == Metric::kBandwidth) std::printf(" %*s", kRatioWidth, "%ceil");
  for (const RatioColumn& r : s.ratios) {
    std::printf(" %*.*s", kRatioWidth + 2, static_cast<int>(r.title.size()), r.title.data());
  }
  std::printf("\n");
  std::fflush(stdout);
}

void print_table_row(const Suite& s, const CaseResult& r) {
  const Case& c = *r.c;
  std::printf("%-*s %-*s %-*s %*s", kCaseWidth, c.family.c_str(), kDtypeWidth,
              std::string(dtype_name(c.src.dtype)).c_str(), kShapeWidth, c.shape_label().c_str(),
              kSizeWidth, size_human(c.input_bytes()).c_str());
  if (r.status == Status::kSkipped) {
    std::printf("  skipped: %s\n", r.note.c_str());
    std::fflush(stdout);
    return;
  }
  for (std::string_view col : s.columns) {
    std::printf(" %*s", kImplWidth, speed_cell(s, r.find(col)).c_str());
  }
  std::printf(" %*s", kRatioWidth, ratio_cell(r.ratio()).c_str());
  if (s.metric == Metric::kBandwidth) {
    char ceil[16] = "-";
    if (const auto v = r.ceiling_fraction()) std::snprintf(ceil, sizeof ceil, "%.0f%%", 100 * *v);
    std::printf(" %*s", kRatioWidth, ceil);
  }
  for (const RatioColumn& x : s.ratios) {
    std::printf(" %*s", kRatioWidth + 2,
                ratio_cell(r.ratio_of(x.numerator, x.denominator)).c_str());
  }
  // Variants (a tuning sweep) follow the row as name=speed pairs.
  for (const ImplResult& impl : r.impls) {
    if (impl.role == Role::kVariant) {
      std::printf("  %s=%s", impl.name.c_str(), speed_cell(s, &impl).c_str());
    }
  }
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
