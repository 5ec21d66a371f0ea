// tmakit device/: the box a tensor copy moves, as a type, so that byte counts come from it.
//
// A load completes `Box::kBytes` on its mbarrier; Barrier::arrive_expect_tx<Box>() and
// Pipeline::producer_commit<Box>() take the count from the type instead of a formula retyped at the
// call site (an expect-tx count off by one tile is a deadlock). Plain C++ (no CUDA headers): host
// code checks a TensorMapSpec against the kernel's box with box_matches<Box>(spec).
//
//   Box<std::uint16_t, 64, 128>          64 x 128 elements, innermost first: 16 KiB
//   BoxStrided<float, Extents<32, 8>, Extents<1, 2>>   element stride 2 along dim 1: 32 x 4
//   delivered
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "tma/config.hpp"
#include "tma/host/spec.hpp"

namespace tma {

// A list of compile-time extents, innermost first.
template <int... kValues>
struct Extents {
  static constexpr int kRank = sizeof...(kValues);
  static constexpr std::array<int, kRank> kInnerFirst{kValues...};
};

template <class T, class BoxInnerFirst, class ElementStridesInnerFirst>
struct BoxStrided;

// A tiled-mode box of element type T (interleave none): kBox elements per dimension traversed with
// element stride kStride, innermost first. Along dimension d it delivers ceil(kBox[d] / kStride[d])
// elements; the stride of dimension 0 is ignored without interleave, as the driver documents.
template <class T, int... kBox, int... kStride>
struct BoxStrided<T, Extents<kBox...>, Extents<kStride...>> {
  using Element = T;
  static constexpr int kRank = sizeof...(kBox);
  static_assert(kRank >= 1 && kRank <= 5, "a box has rank 1..5 (the tensor map's rank)");
  static_assert(sizeof...(kStride) == kRank, "one element stride per box dimension");
  static_assert(((kBox >= 1 && kBox <= 256) && ...),
                "every box dimension is 1..256 elements (cuTensorMapEncodeTiled boxDim)");
  static_assert(((kStride >= 1 && kStride <= 8) && ...),
                "every element stride is 1..8 (cuTensorMapEncodeTiled elementStrides)");

  static constexpr std::array<int, kRank> kBoxInnerFirst{kBox...};
  static constexpr std::array<int, kRank> kElementStridesInnerFirst{kStride...};

  // Elements delivered along each dimension.
  static constexpr std::array<int, kRank> kExtentsInnerFirst = [] {
    std::array<int, kRank> e{};
    for (int d = 0; d < kRank; ++d) {
      const int step = d == 0 ? 1 : kElementStridesInnerFirst[d];
      e[d] = (kBoxInnerFirst[d] + step - 1) / step;
    }
    return e;
  }();

  static constexpr std::uint32_t kElements = [] {
    std::uint32_t n = 1;
    for (int e : kExtentsInnerFirst)
      n *= static_cast<std::uint32_t>(e);
    return n;
  }();

  // Bytes one load of this box writes to shared memory and completes on its mbarrier.
  static constexpr std::uint32_t kBytes = kElements * static_cast<std::uint32_t>(sizeof(T));
  // Bytes of one innermost row: TMA needs a multiple of 16 (interleave none).
  static constexpr std::uint32_t kInnerBytes =
      static_cast<std::uint32_t>(kExtentsInnerFirst[0]) * static_cast<std::uint32_t>(sizeof(T));
  static_assert(kInnerBytes % 16 == 0,
                "box_inner_first[0] * sizeof(T) must be a multiple of 16 bytes (TMA moves 16-byte "
                "chunks): widen the innermost box dimension");
};

// A box with unit element strides: Box<T, inner, ..., outer>.
template <class T, int... kBoxInnerFirst>
struct Box : BoxStrided<T, Extents<kBoxInnerFirst...>, Extents<(kBoxInnerFirst * 0 + 1)...>> {};

// Shared-memory storage for one box, aligned for TMA: 128 bytes at least, or the swizzle pattern's
// repeat (256 / 512 / 1024 bytes: swizzle_repeat_bytes()) so the hardware's swizzle matches the
// model.
template <class BoxT, int kAlignment = 128>
struct alignas(kAlignment) BoxStorage {
  static_assert(kAlignment == 128 || kAlignment == 256 || kAlignment == 512 || kAlignment == 1024,
                "shared-memory alignment for TMA is 128, or 256 / 512 / 1024 for swizzle 32B / 64B "
                "/ 128B");
  typename BoxT::Element data[BoxT::kElements];
};

// True when `spec` describes the box BoxT (tiled mode, same rank, box, element strides and
// element size), so a kernel written for BoxT receives the byte count it expects.
template <class BoxT>
constexpr bool box_matches(const TensorMapSpec& spec) {
  if (spec.mode != Mode::kTiled || spec.rank != BoxT::kRank) return false;
  if (element_bytes(spec.dtype) != static_cast<int>(sizeof(typename BoxT::Element))) return false;
  if (spec.interleave != Interleave::kNone) return false;
  for (int d = 0; d < BoxT::kRank; ++d) {
    if (spec.box_inner_first[d] != static_cast<std::uint32_t>(BoxT::kBoxInnerFirst[d]))
      return false;
    if (box_extent(spec, d) != static_cast<std::uint64_t>(BoxT::kExtentsInnerFirst[d]))
      return false;
  }
  return transaction_bytes(spec) == BoxT::kBytes;
}

}  // namespace tma
