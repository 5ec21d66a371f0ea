// tmakit: the enums that describe a TMA descriptor, and their properties.
//
// Plain C++ (no CUDA headers): the validator, the reference model and the tools use these without a
// GPU. The enumerator order matches the driver's CUtensorMap* enums, so encoding is a checked cast
// (host/tensor_map.hpp static_asserts each value).
#pragma once

#include <cstdint>
#include <string_view>

#include "tma/config.hpp"

namespace tma {

// The most dimensions a tensor map can describe (CUDA driver API, cuTensorMapEncodeTiled).
inline constexpr int kMaxRank = 5;

// Element type of the tensor (CUtensorMapDataType, same order).
enum class DataType : std::uint8_t {
  kUInt8 = 0,
  kUInt16,
  kUInt32,
  kInt32,
  kUInt64,
  kInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBFloat16,
  kFloat32Ftz,
  kTFloat32,
  kTFloat32Ftz,
  k16U4Align8B,   // 16 packed 4-bit values in 8 bytes; compute capability >= 10
  k16U4Align16B,  // 16 packed 4-bit values in 16 bytes (8 B gap); compute capability >= 10
  k16U6Align16B,  // 16 packed 6-bit values in 16 bytes (4 B gap); compute capability >= 10
};
inline constexpr int kNumDataTypes = 16;

// Interleaved layouts such as NC/8HWC8 (CUtensorMapInterleave, same order).
enum class Interleave : std::uint8_t { kNone = 0, k16B, k32B };

// Shared-memory swizzle pattern (CUtensorMapSwizzle, same order). model/swizzle.hpp defines what
// each one does to an address.
enum class Swizzle : std::uint8_t {
  kNone = 0,
  k32B,                // 16 B chunks XORed within a 32 B span (pattern repeats every 256 B)
  k64B,                // 16 B chunks XORed within a 64 B span (repeats every 512 B)
  k128B,               // 16 B chunks XORed within a 128 B span (repeats every 1024 B)
  k128BAtom32B,        // 32 B chunks within 128 B; compute capability >= 10
  k128BAtom32BFlip8B,  // as above, 8 B halves swapped on odd rows; compute capability >= 10
  k128BAtom64B,        // 64 B chunks within 128 B; compute capability >= 10
};

// L2 fill granularity (CUtensorMapL2promotion, same order).
enum class L2Promotion : std::uint8_t { kNone = 0, k64B, k128B, k256B };

// What a load writes for elements outside the tensor (CUtensorMapFloatOOBfill, same order):
// zeros, or a NaN that asks the FMA units to treat it as zero (floating-point types only).
enum class OobFill : std::uint8_t { kZero = 0, kNan };

// Tiled: a box of up to 256 elements per dimension. Im2col: rows of pixels for convolutions.
enum class Mode : std::uint8_t { kTiled = 0, kIm2col };

// Size of one element in bits (4 or 6 for the packed types, whose elements are single values).
constexpr int element_bits(DataType t) {
  switch (t) {
    case DataType::kUInt8:
      return 8;
    case DataType::kUInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 16;
    case DataType::kUInt32:
    case DataType::kInt32:
    case DataType::kFloat32:
    case DataType::kFloat32Ftz:
    case DataType::kTFloat32:
    case DataType::kTFloat32Ftz:
      return 32;
    case DataType::kUInt64:
    case DataType::kInt64:
    case DataType::kFloat64:
      return 64;
    case DataType::k16U4Align8B:
    case DataType::k16U4Align16B:
      return 4;
    case DataType::k16U6Align16B:
      return 6;
  }
  return 0;
}

// Size of one element in bytes; 0 for the packed sub-byte types.
constexpr int element_bytes(DataType t) {
  return element_bits(t) >= 8 ? element_bits(t) / 8 : 0;
}

constexpr bool is_packed(DataType t) {
  return element_bits(t) < 8;
}

constexpr bool is_floating_point(DataType t) {
  switch (t) {
    case DataType::kFloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kBFloat16:
    case DataType::kFloat32Ftz:
    case DataType::kTFloat32:
    case DataType::kTFloat32Ftz:
      return true;
    default:
      return false;
  }
}

constexpr bool is_valid(DataType t) {
  return static_cast<int>(t) < kNumDataTypes;
}
constexpr bool is_valid(Interleave v) {
  return static_cast<int>(v) <= 2;
}
constexpr bool is_valid(Swizzle v) {
  return static_cast<int>(v) <= 6;
}
constexpr bool is_valid(L2Promotion v) {
  return static_cast<int>(v) <= 3;
}
constexpr bool is_valid(OobFill v) {
  return static_cast<int>(v) <= 1;
}
constexpr bool is_valid(Mode v) {
  return static_cast<int>(v) <= 1;
}

// Bytes of the span a swizzle permutes within (the largest allowed inner box row), 0 for none.
constexpr int swizzle_span_bytes(Swizzle s) {
  switch (s) {
    case Swizzle::kNone:
      return 0;
    case Swizzle::k32B:
      return 32;
    case Swizzle::k64B:
      return 64;
    default:
      return 128;
  }
}

// Bytes after which a swizzle pattern repeats; the shared-memory buffer must be aligned to it.
constexpr int swizzle_repeat_bytes(Swizzle s) {
  return s == Swizzle::kNone ? 128 : swizzle_span_bytes(s) * 8;
}

constexpr int interleave_bytes(Interleave i) {
  return i == Interleave::k16B ? 16 : i == Interleave::k32B ? 32 : 0;
}

constexpr std::string_view to_string(DataType t) {
  switch (t) {
    case DataType::kUInt8:
      return "uint8";
    case DataType::kUInt16:
      return "uint16";
    case DataType::kUInt32:
      return "uint32";
    case DataType::kInt32:
      return "int32";
    case DataType::kUInt64:
      return "uint64";
    case DataType::kInt64:
      return "int64";
    case DataType::kFloat16:
      return "float16";
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kFloat32Ftz:
      return "float32_ftz";
    case DataType::kTFloat32:
      return "tfloat32";
    case DataType::kTFloat32Ftz:
      return "tfloat32_ftz";
    case DataType::k16U4Align8B:
      return "16u4_align8b";
    case DataType::k16U4Align16B:
      return "16u4_align16b";
    case DataType::k16U6Align16B:
      return "16u6_align16b";
  }
  return "invalid";
}

constexpr std::string_view to_string(Interleave v) {
  switch (v) {
    case Interleave::kNone:
      return "none";
    case Interleave::k16B:
      return "16B";
    case Interleave::k32B:
      return "32B";
  }
  return "invalid";
}

constexpr std::string_view to_string(Swizzle v) {
  switch (v) {
    case Swizzle::kNone:
      return "none";
    case Swizzle::k32B:
      return "32B";
    case Swizzle::k64B:
      return "64B";
    case Swizzle::k128B:
      return "128B";
    case Swizzle::k128BAtom32B:
      return "128B_atom_32B";
    case Swizzle::k128BAtom32BFlip8B:
      return "128B_atom_32B_flip_8B";
    case Swizzle::k128BAtom64B:
      return "128B_atom_64B";
  }
  return "invalid";
}

constexpr std::string_view to_string(L2Promotion v) {
  switch (v) {
    case L2Promotion::kNone:
      return "none";
    case L2Promotion::k64B:
      return "64B";
    case L2Promotion::k128B:
      return "128B";
    case L2Promotion::k256B:
      return "256B";
  }
  return "invalid";
}

constexpr std::string_view to_string(OobFill v) {
  switch (v) {
    case OobFill::kZero:
      return "zero";
    case OobFill::kNan:
      return "nan";
  }
  return "invalid";
}

constexpr std::string_view to_string(Mode v) {
  switch (v) {
    case Mode::kTiled:
      return "tiled";
    case Mode::kIm2col:
      return "im2col";
  }
  return "invalid";
}

}  // namespace tma
