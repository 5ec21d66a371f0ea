// tmakit: what went wrong with a tensor map, as data (Rule, Violation) and as an exception (Error).
//
// Every rule the validator (host/validate.hpp) or the row-major builder (host/builder.hpp) checks
// has a stable id ("TMA017") and a kebab-case name, so that tests, logs and users can refer to it.
// Plain C++: no CUDA headers.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tma/config.hpp"

namespace tma {

// One value per rule. The numbering is stable: new rules are appended, none is renumbered.
// Rules 1..32 come from the driver's documentation of cuTensorMapEncodeTiled / Im2col
// (cuda.h, "Tensor Map Object Management"), except TMA009 (a null address) and TMA012 (dimension
// 0's stride), which are tmakit's own; 33..36 are the row-major builder's own checks; 37 was found
// by the validator-vs-driver sweep on a GPU; 38 is tmakit's own (interleaved chunks, finding 12).
// validate.hpp says which the driver enforces.
enum class Rule : std::uint16_t {
  kModeValid = 1,           // TMA001 mode-valid
  kDataTypeValid,           // TMA002 dtype-valid
  kInterleaveValid,         // TMA003 interleave-valid
  kSwizzleValid,            // TMA004 swizzle-valid
  kL2PromotionValid,        // TMA005 l2-promotion-valid
  kOobFillValid,            // TMA006 oob-fill-valid
  kRankRange,               // TMA007 rank-range
  kRankInterleave,          // TMA008 rank-at-least-3-with-interleave
  kAddressNonNull,          // TMA009 address-non-null
  kAddressAligned,          // TMA010 address-aligned
  kDimRange,                // TMA011 dim-range
  kInnerStride,             // TMA012 innermost-dimension-contiguous
  kStrideMultiple,          // TMA013 stride-multiple-of-16
  kStrideMax,               // TMA014 stride-below-2^40
  kStrideOverlap,           // TMA015 stride-covers-lower-dimension (lint(), not validate())
  kBoxRange,                // TMA016 box-range
  kBoxInnerBytes,           // TMA017 box-inner-bytes-multiple-of-16
  kElementStrideRange,      // TMA018 element-stride-range
  kSwizzleSpan,             // TMA019 swizzle-span
  kInterleaveSwizzle,       // TMA020 interleave-32b-needs-swizzle-32b
  kSwizzleArch,             // TMA021 swizzle-needs-sm100
  kDataTypeArch,            // TMA022 dtype-needs-sm100
  kPackedDim0,              // TMA023 packed-dim0-multiple
  kPackedBox0,              // TMA024 packed-box0-is-128
  kPackedSwizzle,           // TMA025 packed-swizzle
  kPackedInterleave,        // TMA026 packed-16u6-interleave-none
  kOobNanFloat,             // TMA027 oob-nan-needs-float
  kIm2colCornerRange,       // TMA028 im2col-corner-range
  kIm2colBoundingBox,       // TMA029 im2col-bounding-box-non-empty
  kIm2colChannelsRange,     // TMA030 im2col-channels-range
  kIm2colPixelsRange,       // TMA031 im2col-pixels-range
  kArchTma,                 // TMA032 arch-needs-sm90
  kBuilderRankMismatch,     // TMA033 builder-rank-mismatch
  kBuilderInnermostStride,  // TMA034 builder-innermost-stride-1
  kBuilderNegative,         // TMA035 builder-non-negative
  kBuilderOverflow,         // TMA036 builder-byte-overflow
  kBoxBytes,                // TMA037 box-bytes-fit-sm-shared-memory
  kInterleavedImageBytes,   // TMA038 interleaved-image-fits-sm-shared-memory (tmakit's own)
};
inline constexpr int kNumRules = 38;

// Stable id of a rule, "TMA001" .. "TMA038"; "TMA???" for a value outside the enum.
constexpr std::string_view rule_code(Rule r) {
  constexpr std::string_view kCodes[kNumRules] = {
      "TMA001", "TMA002", "TMA003", "TMA004", "TMA005", "TMA006", "TMA007", "TMA008",
      "TMA009", "TMA010", "TMA011", "TMA012", "TMA013", "TMA014", "TMA015", "TMA016",
      "TMA017", "TMA018", "TMA019", "TMA020", "TMA021", "TMA022", "TMA023", "TMA024",
      "TMA025", "TMA026", "TMA027", "TMA028", "TMA029", "TMA030", "TMA031", "TMA032",
      "TMA033", "TMA034", "TMA035", "TMA036", "TMA037", "TMA038"};
  const int i = static_cast<int>(r) - 1;
  return i >= 0 && i < kNumRules ? kCodes[i] : std::string_view("TMA???");
}

// Kebab-case name of a rule, e.g. "box-inner-bytes-multiple-of-16".
constexpr std::string_view rule_name(Rule r) {
  constexpr std::string_view kNames[kNumRules] = {"mode-valid",
                                                  "dtype-valid",
                                                  "interleave-valid",
                                                  "swizzle-valid",
                                                  "l2-promotion-valid",
                                                  "oob-fill-valid",
                                                  "rank-range",
                                                  "rank-at-least-3-with-interleave",
                                                  "address-non-null",
                                                  "address-aligned",
                                                  "dim-range",
                                                  "innermost-dimension-contiguous",
                                                  "stride-multiple-of-16",
                                                  "stride-below-2^40",
                                                  "stride-covers-lower-dimension",
                                                  "box-range",
                                                  "box-inner-bytes-multiple-of-16",
                                                  "element-stride-range",
                                                  "swizzle-span",
                                                  "interleave-32b-needs-swizzle-32b",
                                                  "swizzle-needs-sm100",
                                                  "dtype-needs-sm100",
                                                  "packed-dim0-multiple",
                                                  "packed-box0-is-128",
                                                  "packed-swizzle",
                                                  "packed-16u6-interleave-none",
                                                  "oob-nan-needs-float",
                                                  "im2col-corner-range",
                                                  "im2col-bounding-box-non-empty",
                                                  "im2col-channels-range",
                                                  "im2col-pixels-range",
                                                  "arch-needs-sm90",
                                                  "builder-rank-mismatch",
                                                  "builder-innermost-stride-1",
                                                  "builder-non-negative",
                                                  "builder-byte-overflow",
                                                  "box-bytes-fit-sm-shared-memory",
                                                  "interleaved-image-fits-sm-shared-memory"};
  const int i = static_cast<int>(r) - 1;
  return i >= 0 && i < kNumRules ? kNames[i] : std::string_view("unknown-rule");
}

// One broken rule. `field` is the TensorMapSpec member (or, from the builder, the row-major
// argument) at fault, `index` its array index or -1. `message` is one line naming the field, the
// index, the value, the rule and a fix.
struct Violation {
  Rule rule;
  std::string field;
  int index = -1;
  std::string message;

  bool operator==(const Violation&) const = default;
};

// "TMA017 box-inner-bytes-multiple-of-16: box_inner_first[0] = ..." (one line, no newline).
inline std::string to_string(const Violation& v) {
  std::string s(rule_code(v.rule));
  s += ' ';
  s += rule_name(v.rule);
  s += ": ";
  s += v.message;
  return s;
}

// Thrown by make_tensor_map and the builder. what() is the headline (when there is one) followed
// by every violation, one per line.
class Error : public std::runtime_error {
 public:
  // A spec that breaks rules; the driver was not called.
  explicit Error(std::vector<Violation> violations, std::string headline = {})
      : std::runtime_error(compose(headline, violations)), violations_(std::move(violations)) {}

  // The driver (or the runtime around it) failed. `driver_code` is the CUresult (0 when the
  // driver was not reached); `pending_runtime_error` a cudaError_t: the one already pending before
  // encoding (make_tensor_map), or the failed runtime call's (tma::ops); 0 when none.
  Error(std::string headline, int driver_code, int pending_runtime_error = 0)
      : std::runtime_error(std::move(headline)),
        driver_code_(driver_code),
        pending_runtime_error_(pending_runtime_error) {}

  // Every broken rule; empty when the error came from the driver.
  const std::vector<Violation>& violations() const { return violations_; }
  // The CUresult the driver returned; 0 when the driver was not called.
  int driver_code() const { return driver_code_; }
  // A cudaError_t: pending before encoding (an earlier kernel faulted), or, from tma::ops, the
  // runtime call that failed; 0 when none.
  int pending_runtime_error() const { return pending_runtime_error_; }

 private:
  static std::string compose(const std::string& headline, const std::vector<Violation>& vs) {
    std::string s = headline;
    for (const Violation& v : vs) {
      if (!s.empty()) s += '\n';
      s += to_string(v);
    }
    return s;
  }

  std::vector<Violation> violations_;
  int driver_code_ = 0;
  int pending_runtime_error_ = 0;
};

}  // namespace tma
