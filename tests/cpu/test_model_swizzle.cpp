// The swizzle the model shares with device code: a bijection inside each repeat block (atom) that
// matches the documented XOR pattern, for SWIZZLE_32B / 64B / 128B.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "tma/model/swizzle.hpp"

namespace tma::model {
namespace {

constexpr Swizzle kSwizzles[] = {Swizzle::k32B, Swizzle::k64B, Swizzle::k128B};

TEST(ModelSwizzle, BijectionInsideEachAtom) {
  for (Swizzle s : kSwizzles) {
    const auto atom = static_cast<std::uint32_t>(swizzle_repeat_bytes(s));
    for (std::uint32_t base = 0; base < 4 * atom; base += atom) {
      std::set<std::uint32_t> seen;
      for (std::uint32_t x = base; x < base + atom; ++x) {
        const std::uint32_t y = swizzle_offset(s, x);
        EXPECT_GE(y, base) << to_string(s) << " x=" << x;
        EXPECT_LT(y, base + atom) << to_string(s) << " x=" << x;
        seen.insert(y);
      }
      EXPECT_EQ(seen.size(), atom) << to_string(s) << " atom at " << base;
    }
  }
}

TEST(ModelSwizzle, MatchesDocumentedXorPattern) {
  // Chunk c (16 B) of span-row r lands at chunk c ^ (r mod 2^bits) of the same row; bytes inside
  // a chunk keep their place.
  for (Swizzle s : kSwizzles) {
    const std::uint32_t span = static_cast<std::uint32_t>(swizzle_span_bytes(s));
    const std::uint32_t bits = swizzle_bits(s);
    const std::uint32_t chunks = span / 16;
    EXPECT_EQ(chunks, 1u << bits);
    // Rows are 128 B apart in the address (the XOR source is bits 7.. of the byte offset).
    for (std::uint32_t r = 0; r < 24; ++r)
      for (std::uint32_t c = 0; c < chunks; ++c)
        for (std::uint32_t b : {0u, 5u, 15u}) {
          const std::uint32_t x = r * 128 + c * 16 + b;
          const std::uint32_t want = r * 128 + ((c ^ (r % (1u << bits))) * 16) + b;
          EXPECT_EQ(swizzle_offset(s, x), want) << to_string(s) << " r=" << r << " c=" << c;
        }
  }
}

TEST(ModelSwizzle, InvolutionAndIdentityWithoutSwizzle) {
  for (std::uint32_t x = 0; x < 4096; ++x) {
    EXPECT_EQ(swizzle_offset(Swizzle::kNone, x), x);
    for (Swizzle s : kSwizzles)
      EXPECT_EQ(swizzle_offset(s, swizzle_offset(s, x)), x);
  }
}

TEST(ModelSwizzle, StaysInsideItsSpanAlignedBlock) {
  // The model relies on this to size partly filled images (layout.hpp, smem_bytes).
  for (Swizzle s : kSwizzles) {
    const auto span = static_cast<std::uint32_t>(swizzle_span_bytes(s));
    for (std::uint32_t x = 0; x < 8192; ++x)
      EXPECT_EQ(swizzle_offset(s, x) / span, x / span);
  }
}

}  // namespace
}  // namespace tma::model
