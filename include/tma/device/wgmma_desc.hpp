// tmakit device/: wgmma shared-memory matrix descriptors, the layout they describe, and the
// accumulator fragment layout.
//
// Plain C++ (no CUDA headers), so the CPU tests check the descriptor arithmetic against the
// reference model of TMA (tests/gemm/test_wgmma_layout.cpp): what TMA writes with SWIZZLE_128B
// is exactly what wgmma reads through these descriptors.
//
// The descriptor (PTX ISA, "Matrix Descriptor Format", wgmma), with enc(x) = (x & 0x3FFFF) >> 4:
//   bits  0..13  enc(start address)                   shared-memory byte address
//   bits 16..29  enc(leading dimension byte offset)   LBO
//   bits 32..45  enc(stride dimension byte offset)    SBO
//   bits 49..51  base offset                          0 when the swizzle pattern starts at a
//                                                     1024 / 512 / 256 B boundary (128/64/32B)
//   bits 62..63  swizzle: 0 none, 1 128B, 2 64B, 3 32B
//
// The canonical 128B-swizzled layouts for 16-bit elements (PTX ISA, "Canonical Layouts"; T = 8
// elements = 16 B; CuTe notation, strides in elements), the swizzle then applied to the absolute
// byte address (bits 4..6 ^= bits 7..9: swizzle_offset(Swizzle::k128B, .)):
//   K-major:  ((8,m),(T,2k)):((8T,SBO),(1,T))        row mn: 128 B of K; 8-row groups SBO apart;
//                                                     LBO unused ("assumed 1")
//   MN-major: ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))   row k: 128 B = 64 elements of MN; 8-row
//                                                     (K) groups SBO apart; 64-element MN blocks
//                                                     LBO apart
// One instruction reads K = 16 elements (32 B): for K-major the start address moves 32 B along
// the 128 B row per K step (the swizzle, applied to the absolute address, still matches the
// writer's); for MN-major it moves 16 rows = 2048 B.
#pragma once

#include <cstdint>

#include "tma/config.hpp"
#include "tma/host/types.hpp"
#include "tma/model/swizzle.hpp"

namespace tma {

// Which dimension of a wgmma operand is contiguous in shared memory. The value is the
// instruction's transpose immediate (imm-trans-a / imm-trans-b).
enum class MatrixMajor : std::uint8_t { kK = 0, kMN = 1 };

// The descriptor's swizzle field for a TMA swizzle mode (the two enums differ).
TMA_HOST_DEVICE constexpr std::uint64_t descriptor_swizzle(Swizzle s) {
  return s == Swizzle::k128B ? 1u : s == Swizzle::k64B ? 2u : s == Swizzle::k32B ? 3u : 0u;
}

// The 14-bit field value of a byte address or offset: (x & 0x3FFFF) >> 4.
TMA_HOST_DEVICE constexpr std::uint64_t descriptor_encode(std::uint32_t bytes) {
  return (bytes & 0x3FFFFu) >> 4;
}

// A matrix descriptor with base offset 0: `start` (shared-memory byte address, 16-byte aligned;
// the swizzle pattern anchored at a 1024 / 512 / 256 B boundary), LBO and SBO in bytes
// (multiples of 16).
TMA_HOST_DEVICE constexpr std::uint64_t matrix_descriptor(std::uint32_t start,
                                                          std::uint32_t lbo_bytes,
                                                          std::uint32_t sbo_bytes, Swizzle s) {
  return descriptor_encode(start) | (descriptor_encode(lbo_bytes) << 16) |
         (descriptor_encode(sbo_bytes) << 32) | (descriptor_swizzle(s) << 62);
}

// `desc` with its start address moved by `bytes` (a multiple of 16): the descriptor that
// matrix_descriptor builds at start + bytes, as one 32-bit add on the low word instead of the
// masks and shifts, valid while start + bytes < 256 KiB (the 14-bit field cannot carry into the
// bits above it; every shared-memory address is below that). The GEMM's k-loop steps its operand
// descriptors this way across stages, K steps and 64-row halves.
TMA_HOST_DEVICE constexpr std::uint64_t descriptor_advance(std::uint64_t desc,
                                                           std::uint32_t bytes) {
  return (desc & ~std::uint64_t{0xFFFFFFFFu}) |
         static_cast<std::uint32_t>(static_cast<std::uint32_t>(desc) + (bytes >> 4));
}

// The fields back, in bytes (for tests and debugging).
struct MatrixDescriptorFields {
  std::uint32_t start, lbo, sbo, base_offset, swizzle;
};
TMA_HOST_DEVICE constexpr MatrixDescriptorFields decode_matrix_descriptor(std::uint64_t d) {
  return {static_cast<std::uint32_t>(d & 0x3FFFu) << 4,
          static_cast<std::uint32_t>((d >> 16) & 0x3FFFu) << 4,
          static_cast<std::uint32_t>((d >> 32) & 0x3FFFu) << 4,
          static_cast<std::uint32_t>((d >> 49) & 0x7u), static_cast<std::uint32_t>(d >> 62)};
}

// Where wgmma reads element (mn, k) of a 16-bit operand described by `desc` (128B swizzle, base
// offset 0): the canonical layout above, then the swizzle on the absolute address. mn < 64 x
// (MN blocks) and k < 16 for one instruction. The PTX ISA's definition written as a function; the
// CPU tests compare it with where TMA put the element.
TMA_HOST_DEVICE constexpr std::uint32_t wgmma_smem_address_128b(std::uint64_t desc,
                                                                MatrixMajor major, int mn, int k) {
  const MatrixDescriptorFields f = decode_matrix_descriptor(desc);
  const auto umn = static_cast<std::uint32_t>(mn), uk = static_cast<std::uint32_t>(k);
  std::uint32_t offset = 0;
  if (major == MatrixMajor::kK) {
    offset = (umn % 8) * 128 + (umn / 8) * f.sbo + uk * 2;
  } else {
    offset = (umn % 64) * 2 + (umn / 64) * f.lbo + (uk % 8) * 128 + (uk / 8) * f.sbo;
  }
  return swizzle_offset(Swizzle::k128B, f.start + offset);
}

// A GEMM operand tile of 16-bit elements in shared memory as TMA writes it with SWIZZLE_128B in
// boxes ("atoms") of 64 x 64 elements (8 KiB, 1024-byte aligned), stacked along MN:
//   K-major atom:  64 rows of MN, each 64 elements of K (128 B)       box {64 K, 64 MN}
//   MN-major atom: 64 rows of K, each 64 elements of MN (128 B)       box {64 MN, 64 K}
// Atom j holds MN elements 64j .. 64j + 63 at byte 8192 j. descriptor(tile, kk) describes the
// K slice 16 kk .. 16 kk + 15 (kk = 0..3) of all the atoms from `tile` on.
template <MatrixMajor kMajor>
struct SwizzledTile128 {
  static constexpr int kAtomElements = 64;  // per side
  static constexpr std::uint32_t kAtomBytes = 64 * 128;
  static constexpr int kKSteps = 4;  // K = 16 per instruction, 64 per atom

  // K-major: rows of 128 B, 8-row groups 1024 B apart across all atoms; LBO unused (16 B, the
  //          "assumed 1" encoding). Each K step moves 32 B along the row.
  // MN-major: 8-row (K) groups 1024 B apart; MN blocks of 64 one atom (8 KiB) apart. Each K step
  //          moves 16 rows (2048 B).
  static constexpr std::uint32_t kLbo = kMajor == MatrixMajor::kK ? 16u : kAtomBytes;
  static constexpr std::uint32_t kSbo = 1024u;
  static constexpr std::uint32_t kStepBytes = kMajor == MatrixMajor::kK ? 32u : 2048u;

  TMA_HOST_DEVICE static constexpr std::uint64_t descriptor(std::uint32_t tile_smem_addr, int kk) {
    return matrix_descriptor(tile_smem_addr + static_cast<std::uint32_t>(kk) * kStepBytes, kLbo,
                             kSbo, Swizzle::k128B);
  }

  // Byte offset (from the tile) where TMA puts element (mn, k), k < 64: the box's row-major
  // image (innermost dimension first), swizzled. What the CPU model's load_box produces.
  TMA_HOST_DEVICE static constexpr std::uint32_t tma_offset(int mn, int k) {
    const auto umn = static_cast<std::uint32_t>(mn), uk = static_cast<std::uint32_t>(k);
    const std::uint32_t atom = umn / 64;
    const std::uint32_t row = kMajor == MatrixMajor::kK ? umn % 64 : uk;
    const std::uint32_t col = kMajor == MatrixMajor::kK ? uk : umn % 64;
    return atom * kAtomBytes + swizzle_offset(Swizzle::k128B, row * 128 + col * 2);
  }
};

// Where accumulator register `reg` of thread `t` (0..127) of a warpgroup sits in its 64 x N tile
// of D after wgmma m64nNk16 with f32 accumulators (PTX ISA, "Register fragment layout for
// accumulator matrix D"): warp w = t / 32 owns rows 16 w .. 16 w + 15; lane l holds, for each
// 8-column group j, rows l / 4 and l / 4 + 8, columns 2 (l % 4) and 2 (l % 4) + 1:
//   acc[4 j + 2 i + c] = D[16 w + 8 i + l / 4][8 j + 2 (l % 4) + c],   i, c in {0, 1}.
struct FragmentCoord {
  int row;
  int col;
};
TMA_HOST_DEVICE constexpr FragmentCoord accumulator_coord(int t, int reg) {
  const int warp = t / 32, lane = t % 32;
  const int j = reg / 4, i = (reg / 2) % 2, c = reg % 2;
  return {16 * warp + 8 * i + lane / 4, 8 * j + 2 * (lane % 4) + c};
}

// Every (mn, k) of every K step reads where TMA wrote, for a tile of `atoms` atoms at a
// 1024-aligned address: the compile-time proof behind SwizzledTile128 (the CPU test repeats it
// against model::load_box itself).
template <MatrixMajor kMajor>
constexpr bool swizzled_tile_matches_tma(int atoms, std::uint32_t tile_addr) {
  using Tile = SwizzledTile128<kMajor>;
  for (int kk = 0; kk < Tile::kKSteps; ++kk) {
    const std::uint64_t d = Tile::descriptor(tile_addr, kk);
    for (int mn = 0; mn < 64 * atoms; ++mn)
      for (int k = 0; k < 16; ++k) {
        if (wgmma_smem_address_128b(d, kMajor, mn, k) !=
            tile_addr + Tile::tma_offset(mn, 16 * kk + k))
          return false;
      }
  }
  return true;
}
static_assert(swizzled_tile_matches_tma<MatrixMajor::kK>(4, 0x2000) &&
                  swizzled_tile_matches_tma<MatrixMajor::kMN>(4, 0x2000) &&
                  swizzled_tile_matches_tma<MatrixMajor::kK>(3, 0x6000) &&
                  swizzled_tile_matches_tma<MatrixMajor::kMN>(3, 0x6000),
              "SwizzledTile128: the wgmma descriptors must read exactly what TMA's SWIZZLE_128B "
              "boxes wrote (PTX ISA canonical layouts)");

}  // namespace tma
