// CPU tests of the GEMM's layout arithmetic and argument checks (no GPU needed):
//  - what TMA writes (the reference model's load_box, SWIZZLE_128B, 64 x 64 boxes) is what the
//    wgmma descriptors of SwizzledTile128 read, element for element (the PTX ISA's canonical
//    layouts, wgmma_smem_address_128b), for K-major and MN-major operands and every K step;
//  - the epilogue's staging (accumulator fragment -> swizzled chunk buffer -> TMA store, the
//    model's store_box) puts every accumulator at its (row, column) of D, once;
//  - the TMA path's D map (dims[0] = tma_store_columns(n)) makes the model's stores, which write
//    whole 16-byte chunks as the hardware does, end inside D's view, and leaves the edge kernel
//    fewer columns than one chunk;
//  - the stream-K schedule (gemm_schedule.hpp, the functions the kernel runs): every (tile,
//    k-block) computed exactly once, one finisher per split tile which finds exactly the tile's
//    contributors, contributions first and finishes last in each CTA's schedule, and a simulated
//    run of all CTAs that never deadlocks; the same per CTA for 2-CTA clusters (the grouped
//    raster, same-rank slots, the idle CTA of an odd tile-row count);
//  - the plan heuristic (gemm_config.hpp: choose_plan) on every shape the sweep measured;
//  - tma::ops::gemm rejects bad arguments with a tma::Error naming the argument, the value and
//    the fix, before touching the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gemm_config.hpp"    // src/ops: tma_store_columns
#include "gemm_order.hpp"     // src/ops: the GPC-aware worker order
#include "gemm_schedule.hpp"  // src/ops: the stream-K schedule
#include "tma/device/wgmma_desc.hpp"
#include "tma/host/error.hpp"
#include "tma/model/load.hpp"
#include "tma/model/store.hpp"
#include "tma/ops/gemm.hpp"

namespace tma {
namespace {

// A row-major matrix of distinct 16-bit values (the element's index), as TMA's global memory.
std::vector<std::byte> numbered(int rows, int cols) {
  std::vector<std::byte> g(static_cast<std::size_t>(rows) * cols * 2);
  for (int i = 0; i < rows * cols; ++i) {
    const auto v = static_cast<std::uint16_t>(i & 0xFFFF);
    g[2 * static_cast<std::size_t>(i)] = static_cast<std::byte>(v & 0xFF);
    g[2 * static_cast<std::size_t>(i) + 1] = static_cast<std::byte>(v >> 8);
  }
  return g;
}

std::uint16_t at16(const std::vector<std::byte>& b, std::size_t offset) {
  return static_cast<std::uint16_t>(std::to_integer<unsigned>(b[offset]) |
                                    (std::to_integer<unsigned>(b[offset + 1]) << 8));
}

// The operand map as gemm.cu builds it (operand_spec): innermost dim = K (K-major) or MN.
TensorMapSpec operand_map(MatrixMajor major, int mn, int k, const void* base, int box_rows = 64) {
  TensorMapSpec s;
  s.dtype = DataType::kBFloat16;
  s.rank = 2;
  s.address = base;
  const int inner = major == MatrixMajor::kK ? k : mn;
  const int outer = major == MatrixMajor::kK ? mn : k;
  s.dims_inner_first = {static_cast<std::uint64_t>(inner), static_cast<std::uint64_t>(outer), 0, 0,
                        0};
  s.strides_bytes_inner_first = {0, static_cast<std::uint64_t>(inner) * 2, 0, 0, 0};
  s.box_inner_first = {64, static_cast<std::uint32_t>(box_rows), 0, 0, 0};
  s.swizzle = Swizzle::k128B;
  return s;
}

// Loads a tile of `rows` rows of MN at (mn0, k0) of an mn_total x k_total operand the way the
// producer does (64 x 64 atoms; K-major with box_rows != 64: boxes of box_rows rows, the row-box
// B of a 2- or 4-CTA cluster's shares or one box), then reads it back through the descriptors of
// every K step.
void check_operand(MatrixMajor major, int rows, int mn_total, int k_total, int mn0, int k0,
                   int box_rows = 64) {
  SCOPED_TRACE(testing::Message() << (major == MatrixMajor::kK ? "K-major" : "MN-major")
                                  << " rows=" << rows << " box rows=" << box_rows
                                  << " tile at mn0=" << mn0 << " k0=" << k0);
  ASSERT_TRUE(box_rows == 64 || major == MatrixMajor::kK);
  ASSERT_EQ(rows % box_rows, 0);
  const int boxes = rows / box_rows;
  const std::size_t box_bytes = static_cast<std::size_t>(box_rows) * 128;
  // Global memory: element (mn, k) at outer * inner_extent + inner.
  const int inner_extent = major == MatrixMajor::kK ? k_total : mn_total;
  const int outer_extent = major == MatrixMajor::kK ? mn_total : k_total;
  const std::vector<std::byte> global = numbered(outer_extent, inner_extent);
  const TensorMapSpec spec = operand_map(major, mn_total, k_total, global.data(), box_rows);
  ASSERT_EQ(model::smem_bytes(spec), box_bytes);
  std::vector<std::byte> smem(static_cast<std::size_t>(boxes) * box_bytes, std::byte{0});
  for (int j = 0; j < boxes; ++j) {
    const std::int32_t c[2] = {major == MatrixMajor::kK ? k0 : mn0 + box_rows * j,
                               major == MatrixMajor::kK ? mn0 + box_rows * j : k0};
    model::load_box(spec, global, c,
                    std::span(smem).subspan(static_cast<std::size_t>(j) * box_bytes, box_bytes));
  }
  // The tile sits at shared address 0x4000 (1024-aligned, as the kernel's stages are).
  constexpr std::uint32_t kTile = 0x4000;
  int checked = 0;
  for (int kk = 0; kk < 4; ++kk) {
    const std::uint64_t desc = major == MatrixMajor::kK
                                   ? SwizzledTile128<MatrixMajor::kK>::descriptor(kTile, kk)
                                   : SwizzledTile128<MatrixMajor::kMN>::descriptor(kTile, kk);
    const MatrixDescriptorFields f = decode_matrix_descriptor(desc);
    ASSERT_EQ(f.swizzle, 1u) << "128B swizzle is encoded as 1";
    ASSERT_EQ(f.base_offset, 0u);
    ASSERT_EQ(f.sbo, 1024u);
    for (int mn = 0; mn < rows; ++mn) {
      for (int k = 0; k < 16; ++k) {
        const std::uint32_t addr = wgmma_smem_address_128b(desc, major, mn, k);
        ASSERT_GE(addr, kTile);
        ASSERT_LT(addr + 2, kTile + smem.size() + 1);
        const int gmn = mn0 + mn, gk = k0 + 16 * kk + k;
        const std::uint16_t want =
            gmn < mn_total && gk < k_total
                ? static_cast<std::uint16_t>(
                      ((major == MatrixMajor::kK ? gmn * inner_extent + gk
                                                 : gk * inner_extent + gmn)) &
                      0xFFFF)
                : 0;  // TMA's zero fill outside the matrix
        ASSERT_EQ(at16(smem, addr - kTile), want)
            << "K step " << kk << ", element (mn " << mn << ", k " << k << ")";
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 4 * rows * 16);
}

TEST(GemmLayout, KMajorOperandMatchesTma) {
  // The producer loads K-major operands as boxes of rows (gemm_kernel.cuh: produce_tma).
  check_operand(MatrixMajor::kK, 128, 256, 192, 64, 64, 128);  // A: one box of 128 rows
  check_operand(MatrixMajor::kK, 128, 256, 192, 64, 64);       // the same bytes as 2 atoms
  // B (every width): one box of block_n rows, or two of block_n / 2 (a 2-CTA cluster's halves,
  // the second at block_n / 2 x 128 B); the last tile runs past mn_total.
  for (const int block_n : {256, 240, 224, 192, 176, 144, 136, 128}) {
    check_operand(MatrixMajor::kK, block_n, 700, 128, block_n, 64, block_n);
    // A 2-CTA cluster's halves where block_n / 2 is a whole number of swizzle repeats (136: the
    // overlapping shares of KMajorOverlappingSharesMatchOneBox).
    if (block_n % 16 == 0)
      check_operand(MatrixMajor::kK, block_n, 700, 128, 2 * block_n, 0, block_n / 2);
    // A 4-CTA cluster's quarters where block_n / 4 is a whole number of swizzle repeats (the
    // others: KMajorOverlappingSharesMatchOneBox).
    if (block_n % 32 == 0)
      check_operand(MatrixMajor::kK, block_n, 700, 128, 2 * block_n, 0, block_n / 4);
  }
}

TEST(GemmLayout, KMajorOverlappingSharesMatchOneBox) {
  // A K-major B tile loaded as a cluster's shares (row_box_rows rows each, at row_box_start: the
  // producer's boxes, multicast to every CTA) lands byte for byte as one box of block_n rows,
  // which KMajorOperandMatchesTma reads back through the wgmma descriptors. For 144, 176 and 240
  // in clusters of 4, and 136 in clusters of 2 and 4, the last share overlaps the one before (the
  // same bytes written twice).
  for (const int block_n : {256, 240, 224, 192, 176, 144, 136, 128})
    for (const int cluster : {1, 2, 4})
      for (const int mn0 : {0, 700 - 96}) {  // an inner tile; one past the matrix's end
        SCOPED_TRACE(testing::Message()
                     << "block_n " << block_n << ", cluster " << cluster << ", mn0 " << mn0);
        const int rows = ops::detail::gemm::row_box_rows(block_n, cluster);
        EXPECT_EQ(rows % 8, 0);  // each share starts on a 1024-byte swizzle repeat
        EXPECT_GE(rows * cluster, block_n);
        EXPECT_EQ(ops::detail::gemm::row_box_stage_rows(block_n, cluster), rows * cluster);
        const std::vector<std::byte> global = numbered(700, 128);
        const TensorMapSpec whole = operand_map(MatrixMajor::kK, 700, 128, global.data(), block_n);
        const TensorMapSpec share = operand_map(MatrixMajor::kK, 700, 128, global.data(), rows);
        const std::size_t tile_bytes = static_cast<std::size_t>(block_n) * 128;
        std::vector<std::byte> want(tile_bytes), got(tile_bytes, std::byte{0x5a});
        const std::int32_t c_whole[2] = {64, mn0};
        model::load_box(whole, global, c_whole, want);
        std::vector<int> covered(static_cast<std::size_t>(block_n), 0);
        for (int r = 0; r < cluster; ++r) {
          const int start = ops::detail::gemm::row_box_start(block_n, cluster, r);
          EXPECT_EQ(start % 8, 0);
          EXPECT_GE(start, 0);
          EXPECT_LE(start + rows, block_n);
          for (int i = start; i < start + rows; ++i)
            ++covered[static_cast<std::size_t>(i)];
          const std::int32_t c[2] = {64, mn0 + start};
          model::load_box(share, global, c,
                          std::span(got).subspan(static_cast<std::size_t>(start) * 128,
                                                 static_cast<std::size_t>(rows) * 128));
        }
        EXPECT_EQ(std::count(covered.begin(), covered.end(), 0), 0);  // every row loaded
        EXPECT_EQ(got, want);
      }
  // The 144-wide tile in clusters of 4: boxes of 40 rows at 0, 40, 80 and 104.
  EXPECT_EQ(ops::detail::gemm::row_box_rows(144, 4), 40);
  EXPECT_EQ(ops::detail::gemm::row_box_start(144, 4, 3), 104);
  EXPECT_EQ(ops::detail::gemm::row_box_stage_rows(144, 4), 160);
  EXPECT_EQ(ops::detail::gemm::row_box_rows(176, 2), 88);
  EXPECT_EQ(ops::detail::gemm::row_box_start(176, 2, 1), 88);
  // The 136-wide tile: in clusters of 2, boxes of 72 rows at 0 and 64 (rows 64-71 twice); of 4,
  // boxes of 40 rows at 0, 40, 80 and 96.
  EXPECT_EQ(ops::detail::gemm::row_box_rows(136, 2), 72);
  EXPECT_EQ(ops::detail::gemm::row_box_start(136, 2, 1), 64);
  EXPECT_EQ(ops::detail::gemm::row_box_stage_rows(136, 2), 144);
  EXPECT_EQ(ops::detail::gemm::row_box_rows(136, 4), 40);
  EXPECT_EQ(ops::detail::gemm::row_box_start(136, 4, 3), 96);
  EXPECT_EQ(ops::detail::gemm::row_box_stage_rows(136, 4), 160);
}

TEST(GemmLayout, MnMajorOperandMatchesTma) {
  check_operand(MatrixMajor::kMN, 128, 256, 192, 128, 64);
  check_operand(MatrixMajor::kMN, 256, 512, 128, 0, 64);
}

TEST(GemmLayout, PartialTilesAreZeroFilled) {
  // Ragged edges in both dimensions: the descriptors read TMA's zeros past the matrix.
  check_operand(MatrixMajor::kK, 128, 100, 72, 64, 64);
  check_operand(MatrixMajor::kMN, 128, 100, 72, 64, 64);
  check_operand(MatrixMajor::kMN, 256, 200, 40, 128, 0);
}

TEST(GemmLayout, DescriptorFields) {
  const std::uint64_t d = matrix_descriptor(0x12340, 8192, 1024, Swizzle::k128B);
  EXPECT_EQ(d & 0x3FFF, 0x1234u);
  EXPECT_EQ((d >> 16) & 0x3FFF, 8192u >> 4);
  EXPECT_EQ((d >> 32) & 0x3FFF, 1024u >> 4);
  EXPECT_EQ((d >> 49) & 7, 0u);
  EXPECT_EQ(d >> 62, 1u);
  EXPECT_EQ(descriptor_swizzle(Swizzle::k64B), 2u);
  EXPECT_EQ(descriptor_swizzle(Swizzle::k32B), 3u);
  EXPECT_EQ(descriptor_swizzle(Swizzle::kNone), 0u);
  // K-major: LBO unused, encoded as 1 ("assumed 1"); MN-major: one atom between MN blocks.
  EXPECT_EQ(decode_matrix_descriptor(SwizzledTile128<MatrixMajor::kK>::descriptor(0, 0)).lbo, 16u);
  EXPECT_EQ(decode_matrix_descriptor(SwizzledTile128<MatrixMajor::kMN>::descriptor(0, 0)).lbo,
            8192u);
  // K steps: 32 B along the row (K-major), 16 rows of 128 B (MN-major).
  EXPECT_EQ(decode_matrix_descriptor(SwizzledTile128<MatrixMajor::kK>::descriptor(0x8000, 3)).start,
            0x8000u + 96);
  EXPECT_EQ(
      decode_matrix_descriptor(SwizzledTile128<MatrixMajor::kMN>::descriptor(0x8000, 3)).start,
      0x8000u + 3 * 2048);
}

// Stepping a descriptor (descriptor_advance, the GEMM's k-loop) builds the descriptor of the moved
// address, over every 1024-aligned tile start in 227 KiB of shared memory and every offset the
// k-loop adds (stages of up to 80 KiB, 64-row halves, K steps), for both majors.
TEST(GemmLayout, DescriptorAdvanceEqualsRebuilding) {
  int checked = 0;
  for (std::uint32_t base = 0; base < 227u * 1024; base += 1024)
    for (std::uint32_t off = 0; base + off + 3 * 2048 < 227u * 1024 && off < 80u * 1024;
         off += 8192)
      for (int kk = 0; kk < 4; ++kk) {
        using K = SwizzledTile128<MatrixMajor::kK>;
        using MN = SwizzledTile128<MatrixMajor::kMN>;
        ASSERT_EQ(descriptor_advance(K::descriptor(base, 0), off + kk * K::kStepBytes),
                  K::descriptor(base + off, kk))
            << base << " + " << off << ", kk " << kk;
        ASSERT_EQ(descriptor_advance(MN::descriptor(base, 0), off + kk * MN::kStepBytes),
                  MN::descriptor(base + off, kk))
            << base << " + " << off << ", kk " << kk;
        ++checked;
      }
  EXPECT_GT(checked, 5000);
}

// The D fragment of wgmma m64nNk16 as transcribed here from the PTX ISA figure ("WGMMA
// .m64nNk16 register fragment layout for accumulator matrix D"), independently of
// accumulator_coord, which the epilogue uses.
struct Coord {
  int row, col;
};
Coord fragment(int t, int r) {
  const int warp = t / 32, lane = t % 32;
  return {16 * warp + 8 * ((r / 2) % 2) + lane / 4, 8 * (r / 4) + 2 * (lane % 4) + r % 2};
}

TEST(GemmLayout, AccumulatorCoordIsThePtxFragmentLayout) {
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < 128; ++r) {
      const FragmentCoord a = accumulator_coord(t, r);
      const Coord b = fragment(t, r);
      ASSERT_EQ(a.row, b.row) << t << " " << r;
      ASSERT_EQ(a.col, b.col) << t << " " << r;
    }
}

// The epilogue writes accumulator pair (r, r + 1) of chunk q at swizzled offset
// row * 128 + col_in_chunk * esize of its buffer (16-bit: through stmatrix); the chunk goes out
// with a TMA store of box {128 / esize, 64} at (col0 + q * cols, row0). Check with the model that
// every accumulator lands at its (row, column) of D and every element of the 64 x N tile is written
// exactly once.
void check_epilogue(int esize, int block_n) {
  SCOPED_TRACE(testing::Message() << "element size " << esize << " block_n " << block_n);
  // A tile's last chunk may be narrower (block_n % cols columns: gemm_epilogue.cuh), stored
  // through a box of that width from the same buffer layout (rows padded to 128 B).
  const int cols = 128 / esize, full = block_n / cols, groups = cols / 8;
  const int chunks = full + (block_n % cols > 0 ? 1 : 0);
  const int n_total = block_n, m_total = 64;
  // Global D: row-major 64 x block_n, elements of esize bytes holding a tag (t * 256 + r + 1).
  std::vector<std::byte> global(static_cast<std::size_t>(m_total) * n_total * esize, std::byte{0});
  TensorMapSpec spec;
  spec.dtype = esize == 4 ? DataType::kFloat32 : DataType::kBFloat16;
  spec.rank = 2;
  spec.address = global.data();
  spec.dims_inner_first = {static_cast<std::uint64_t>(n_total), 64, 0, 0, 0};
  spec.strides_bytes_inner_first = {0, static_cast<std::uint64_t>(n_total) * esize, 0, 0, 0};
  spec.box_inner_first = {static_cast<std::uint32_t>(cols), 64, 0, 0, 0};
  spec.swizzle = Swizzle::k128B;
  auto tag_of = [](int t, int r) { return static_cast<std::uint32_t>(t * 256 + r + 1); };
  for (int q = 0; q < chunks; ++q) {
    const int q_cols = q < full ? cols : block_n % cols, q_groups = q_cols / 8;
    std::vector<std::byte> buf(8192, std::byte{0});
    std::set<std::uint32_t> offsets;
    // Where the epilogue puts accumulator pair (reg, reg + 1) of thread t: fp32 with one store
    // per pair at its fragment coordinate; 16-bit with stmatrix .x4 per 16 x 16 block b, which
    // writes lane l's register of matrix j at row l / 4 of the row address that lane
    // 8 j + l / 4 of the same warp gives, bytes 4 (l % 4) .. + 3.
    std::vector<std::pair<int, std::uint32_t>> placed;  // (thread * 1024 + reg, offset)
    for (int t = 0; t < 128; ++t) {
      if (esize == 4) {
        for (int g = 0; g < q_groups; ++g)
          for (int i = 0; i < 2; ++i) {
            const int reg = 4 * (q * groups + g) + 2 * i;
            const FragmentCoord f = accumulator_coord(t, reg);
            const int row = f.row, col = f.col - q * cols;
            placed.emplace_back(t * 1024 + reg,
                                swizzle_offset(Swizzle::k128B, static_cast<std::uint32_t>(
                                                                   row * 128 + col * esize)));
          }
      } else {
        const int lane = t % 32, warp_first = t - lane;
        for (int b = 0; b < q_groups / 2; ++b)
          for (int j = 0; j < 4; ++j) {
            const int reg = 4 * q * groups + ops::detail::gemm::stmatrix_register(b, j);
            const std::uint32_t row =
                ops::detail::gemm::stmatrix_row_offset(warp_first + 8 * j + lane / 4, b);
            placed.emplace_back(t * 1024 + reg, row + 4u * static_cast<std::uint32_t>(lane % 4));
          }
      }
    }
    for (const auto& [tr, off] : placed) {
      const int t = tr / 1024, reg = tr % 1024;
      for (int c = 0; c < 2; ++c) {
        const std::uint32_t o = off + static_cast<std::uint32_t>(c * esize);
        ASSERT_TRUE(offsets.insert(o).second) << "two accumulators share byte " << o;
        const std::uint32_t tag = tag_of(t, reg + c);
        for (int b = 0; b < esize; ++b)
          buf[o + static_cast<std::uint32_t>(b)] = static_cast<std::byte>((tag >> (8 * b)) & 0xFF);
      }
    }
    ASSERT_EQ(offsets.size(), std::size_t{64} * static_cast<std::size_t>(q_cols))
        << "the chunk's buffer is not covered exactly once";
    // Every byte written lies in the first q_cols columns of its (padded) 128-byte row.
    for (const std::uint32_t o : offsets) {
      const std::uint32_t logical = swizzle_offset(Swizzle::k128B, o);  // an involution
      ASSERT_LT(logical % 128, static_cast<std::uint32_t>(q_cols * esize)) << "byte " << o;
    }
    TensorMapSpec chunk_spec = spec;
    chunk_spec.box_inner_first[0] = static_cast<std::uint32_t>(q_cols);
    const std::int32_t c[2] = {q * cols, 0};
    model::store_box(chunk_spec, buf, c, global);
  }
  // Every accumulator is at its fragment coordinate (16-bit tags are truncated consistently).
  for (int t = 0; t < 128; ++t) {
    for (int r = 0; r < block_n / 2; ++r) {
      const Coord at = fragment(t, r);
      const std::size_t off = (static_cast<std::size_t>(at.row) * n_total + at.col) * esize;
      std::uint32_t got = 0;
      for (int b = 0; b < esize; ++b)
        got |= std::to_integer<std::uint32_t>(global[off + static_cast<std::size_t>(b)]) << (8 * b);
      const std::uint32_t want = esize == 4 ? tag_of(t, r) : tag_of(t, r) & 0xFFFF;
      ASSERT_EQ(got, want) << "thread " << t << " register " << r << " -> (" << at.row << ", "
                           << at.col << ")";
    }
  }
}

TEST(GemmLayout, EpilogueStagingPutsEveryAccumulatorInPlace) {
  check_epilogue(2, 256);
  check_epilogue(4, 256);
  check_epilogue(2, 128);
  check_epilogue(4, 128);
  // The row-box widths: 16-bit tails of 32 / 48 / 48 columns, fp32 of 0 / 16 / 16.
  for (const int block_n : {224, 240, 176}) {
    check_epilogue(2, block_n);
    check_epilogue(4, block_n);
  }
}

// Swapped operands (Config::kSwap): the accumulators of a warpgroup hold the transpose of its
// wgmma_n x 64 part of D (accumulator row = D's column n, accumulator column = D's row m). The
// transposed epilogue stages chunk q (D's rows 64 q .. 64 q + 63) with stmatrix .x4 .trans per
// 16 x 16 block b, which writes element (r, c) of lane l's matrix j (fragment row r = l / 4,
// columns c = 2 (l % 4), + 1) at bytes 2 r, 2 r + 1 of the row address that lane 8 j + c of the
// same warp gives, and stores it with a TMA store of box {64, 64} at (col0, row0 + 64 q). Check
// with the model that every accumulator lands at D(m, n) and every element is written once.
void check_transposed_epilogue(int wgmma_n) {
  SCOPED_TRACE(testing::Message() << "wgmma N " << wgmma_n);
  constexpr int kEsize = 2, kCols = 64, kGroups = 8;
  const int m_total = wgmma_n, n_total = 64, chunks = wgmma_n / 64;
  std::vector<std::byte> global(static_cast<std::size_t>(m_total) * n_total * kEsize, std::byte{0});
  TensorMapSpec spec;
  spec.dtype = DataType::kBFloat16;
  spec.rank = 2;
  spec.address = global.data();
  spec.dims_inner_first = {static_cast<std::uint64_t>(n_total), static_cast<std::uint64_t>(m_total),
                           0, 0, 0};
  spec.strides_bytes_inner_first = {0, static_cast<std::uint64_t>(n_total) * kEsize, 0, 0, 0};
  spec.box_inner_first = {kCols, 64, 0, 0, 0};
  spec.swizzle = Swizzle::k128B;
  auto tag_of = [](int t, int r) { return static_cast<std::uint16_t>((t * 256 + r + 1) & 0xFFFF); };
  for (int q = 0; q < chunks; ++q) {
    std::vector<std::byte> buf(8192, std::byte{0});
    std::set<std::uint32_t> offsets;
    for (int t = 0; t < 128; ++t) {
      const int lane = t % 32, warp_first = t - lane;
      for (int b = 0; b < kGroups / 2; ++b)
        for (int j = 0; j < 4; ++j) {
          const int reg = 4 * q * kGroups + ops::detail::gemm::stmatrix_register(b, j);
          for (int e = 0; e < 2; ++e) {
            const int r = lane / 4, c = 2 * (lane % 4) + e;
            const std::uint32_t o =
                ops::detail::gemm::stmatrix_trans_row_offset(warp_first + 8 * j + c, b) +
                2u * static_cast<std::uint32_t>(r);
            ASSERT_TRUE(offsets.insert(o).second) << "two accumulators share byte " << o;
            const std::uint16_t tag = tag_of(t, reg + e);
            buf[o] = static_cast<std::byte>(tag & 0xFF);
            buf[o + 1] = static_cast<std::byte>(tag >> 8);
          }
        }
    }
    ASSERT_EQ(offsets.size(), std::size_t{64} * kCols) << "the chunk's buffer is not covered once";
    const std::int32_t c[2] = {0, 64 * q};
    model::store_box(spec, buf, c, global);
  }
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < wgmma_n / 2; ++r) {
      const Coord at = fragment(t, r);  // (n, m) of D
      const std::size_t off = (static_cast<std::size_t>(at.col) * n_total + at.row) * kEsize;
      const std::uint32_t got = std::to_integer<std::uint32_t>(global[off]) |
                                std::to_integer<std::uint32_t>(global[off + 1]) << 8;
      ASSERT_EQ(got, tag_of(t, r))
          << "thread " << t << " register " << r << " -> D(" << at.col << ", " << at.row << ")";
    }
}

TEST(GemmLayout, TransposedEpiloguePutsEveryAccumulatorInPlace) {
  check_transposed_epilogue(128);  // cooperative: each warpgroup 128 of the tile's 256 rows
  check_transposed_epilogue(256);  // ping-pong: a warpgroup the whole tile
}

// ---- D's edge: TMA stores write whole 16-byte chunks ----------------------------------------

// D (m rows of ld elements of esize bytes, poisoned with 0xAB) after the TMA path's epilogue stores
// (model::store_box, which writes a row's whole last 16 B chunk as the hardware does) of every
// chunk {128 B, 64 rows} of every 128 x 128 tile, through a D map whose dims[0] is dim0.
std::vector<std::byte> store_every_chunk(int esize, int m, int ld, std::int64_t dim0) {
  std::vector<std::byte> global(static_cast<std::size_t>(m) * ld * esize, std::byte{0xAB});
  TensorMapSpec spec;
  spec.dtype = esize == 4 ? DataType::kFloat32 : DataType::kBFloat16;
  spec.rank = 2;
  spec.address = global.data();
  spec.dims_inner_first = {static_cast<std::uint64_t>(dim0), static_cast<std::uint64_t>(m), 0, 0,
                           0};
  spec.strides_bytes_inner_first = {0, static_cast<std::uint64_t>(ld) * esize, 0, 0, 0};
  spec.box_inner_first = {static_cast<std::uint32_t>(128 / esize), 64, 0, 0, 0};
  spec.swizzle = Swizzle::k128B;
  const std::vector<std::byte> buf(8192, std::byte{0x11});
  const std::int64_t tiles_n = (dim0 + 127) / 128, cols = 128 / esize;
  for (int row0 = 0; row0 < m; row0 += 64)
    for (std::int64_t col0 = 0; col0 < tiles_n * 128; col0 += cols) {
      const std::int32_t c[2] = {static_cast<std::int32_t>(col0), row0};
      model::store_box(spec, buf, c, global);
    }
  return global;
}

// Bytes of D at columns >= `from` that are no longer poison.
int written_from(const std::vector<std::byte>& global, int esize, int m, int ld, int from) {
  int written = 0;
  for (int r = 0; r < m; ++r)
    for (int b = from * esize; b < ld * esize; ++b)
      written += global[static_cast<std::size_t>(r) * ld * esize + b] != std::byte{0xAB};
  return written;
}

TEST(GemmEdge, TmaStoresStayInsideTheViewAndLeaveLessThanAChunk) {
  for (int esize : {2, 4}) {
    const int per_chunk = 16 / esize;
    for (int n = 1; n <= 300; ++n) {
      SCOPED_TRACE(testing::Message() << "element size " << esize << " n " << n);
      const std::int64_t n_tma = ops::detail::gemm::tma_store_columns(n, esize);
      EXPECT_EQ(n_tma * esize % 16, 0);
      EXPECT_LE(n_tma, n);
      EXPECT_LT(n - n_tma, per_chunk);
      EXPECT_LE(n - n_tma, ops::detail::gemm::kMaxEdgeColumns);
      if (n_tma == 0 || n % 37 != 0) continue;  // the model runs below: a sample of n
      // ld as tight as the argument checks allow (a multiple of 16 B): the padding is the rest of
      // the last chunk, exactly what a D map with dims[0] = n overwrites.
      const int m = 70, ld = (n + per_chunk - 1) / per_chunk * per_chunk;
      const auto ours = store_every_chunk(esize, m, ld, n_tma);
      EXPECT_EQ(written_from(ours, esize, m, ld, static_cast<int>(n_tma)), 0)
          << "the TMA path's stores wrote past column " << n_tma;
      EXPECT_EQ(written_from(ours, esize, m, ld, 0), m * static_cast<int>(n_tma) * esize)
          << "the TMA path's stores did not write every column below " << n_tma;
      // Why: a map with dims[0] = n writes the whole last chunk of each row, padding included.
      const auto naive = store_every_chunk(esize, m, ld, n);
      EXPECT_EQ(written_from(naive, esize, m, ld, n), m * (ld - n) * esize);
    }
  }
}

// ---- the stream-K schedule --------------------------------------------------------------------

namespace sk = ops::detail::gemm;

// Every worker's units, in the order the kernel walks them.
std::vector<std::vector<sk::Unit>> walk(const sk::Schedule& s) {
  std::vector<std::vector<sk::Unit>> units(static_cast<std::size_t>(s.workers));
  for (std::int32_t w = 0; w < s.workers; ++w) {
    sk::Cursor c = sk::schedule_start(s, w);
    sk::Unit u{};
    while (sk::next_unit(s, c, u))
      units[static_cast<std::size_t>(w)].push_back(u);
  }
  return units;
}

void check_schedule_of(const sk::Schedule& s, bool split);

// All the schedule's promises for one (tiles, k_blocks, workers, split).
void check_schedule(std::int32_t tiles, std::int32_t k, std::int32_t workers, bool split) {
  SCOPED_TRACE(testing::Message() << "tiles=" << tiles << " k_blocks=" << k
                                  << " workers=" << workers << " split=" << split);
  check_schedule_of(sk::make_schedule(tiles, k, workers, split), split);
}

// The same promises for a schedule as built (make_schedule or make_aligned_schedule).
void check_schedule_of(const sk::Schedule& s, bool split) {
  const std::int32_t tiles = s.tiles, k = s.k_blocks, workers = s.workers;
  ASSERT_EQ(s.dp_tiles + s.sk_tiles, tiles);
  if (split) {
    ASSERT_EQ(s.dp_tiles % workers, 0) << "the data-parallel tiles are full waves";
    ASSERT_LE(s.sk_tiles, tiles < workers ? tiles : 2 * workers - 1);
  } else {
    ASSERT_EQ(s.sk_tiles, 0);
  }
  const auto units = walk(s);
  const auto T = static_cast<std::size_t>(tiles), K = static_cast<std::size_t>(k);

  // Coverage: every (tile, k-block) exactly once; units well-formed.
  std::vector<int> covered(T * K, 0);
  std::vector<int> finisher(T, -1);
  std::vector<std::vector<std::int32_t>> contributors(T);
  for (std::int32_t w = 0; w < workers; ++w) {
    const auto& mine = units[static_cast<std::size_t>(w)];
    std::int64_t sk_iters = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const sk::Unit& u = mine[i];
      ASSERT_GE(u.tile, 0);
      ASSERT_LT(u.tile, tiles);
      ASSERT_GE(u.kb_begin, 0);
      ASSERT_LT(u.kb_begin, u.kb_end);
      ASSERT_LE(u.kb_end, k);
      for (std::int32_t kb = u.kb_begin; kb < u.kb_end; ++kb)
        ++covered[static_cast<std::size_t>(u.tile) * K + static_cast<std::size_t>(kb)];
      if (u.tile >= s.dp_tiles) sk_iters += u.kb_end - u.kb_begin;
      switch (u.kind) {
        case sk::UnitKind::kWhole:
          ASSERT_EQ(u.kb_begin, 0);
          ASSERT_EQ(u.kb_end, k);
          break;
        case sk::UnitKind::kPartial:
          ASSERT_GT(u.kb_begin, 0);
          // A contribution is the first stream-K unit: the worker signals before any wait.
          ASSERT_TRUE(i == 0 || mine[i - 1].tile < s.dp_tiles)
              << "worker " << w << " unit " << i << " contributes after other stream-K units";
          contributors[static_cast<std::size_t>(u.tile)].push_back(w);
          break;
        case sk::UnitKind::kFinish:
          ASSERT_EQ(u.kb_begin, 0);
          ASSERT_LT(u.kb_end, k);
          ASSERT_EQ(i + 1, mine.size())
              << "worker " << w << " finishes a tile before its last unit";
          ASSERT_EQ(finisher[static_cast<std::size_t>(u.tile)], -1) << "two finishers";
          finisher[static_cast<std::size_t>(u.tile)] = w;
          break;
      }
    }
    if (split && s.sk_pieces == 0) {
      // Equal shares (+-1 k-block) of the stream-K iterations.
      ASSERT_TRUE(sk_iters == s.sk_quot || sk_iters == s.sk_quot + 1) << "worker " << w;
    } else if (split) {
      // Aligned: one piece of one tile each, sk_piece k-blocks after the tile's first piece.
      ASSERT_EQ(mine.size(), 1u) << "worker " << w;
      ASSERT_EQ(mine[0].tile, w / s.sk_pieces) << "worker " << w;
      if (w % s.sk_pieces != 0) {
        ASSERT_EQ(sk_iters, s.sk_piece) << "worker " << w;
      }
    }
  }
  for (std::size_t i = 0; i < covered.size(); ++i)
    ASSERT_EQ(covered[i], 1) << "tile " << i / K << " k-block " << i % K;

  // The k order (k_shift, rotated_k_block): the k-blocks a tile's pieces load, all under the
  // tile's one shift, are [0, K) exactly once; data-parallel tiles are not rotated; and every
  // stream-K unit that runs to its tile's end loads k-block tau mod K at time tau (iterations
  // since the worker's stream-K start): the aligned loads that the rotation is for.
  std::vector<int> loaded(T * K, 0);
  for (std::int32_t w = 0; w < workers; ++w) {
    for (const sk::Unit& u : units[static_cast<std::size_t>(w)]) {
      const std::int32_t shift = sk::k_shift(s, u.tile);
      ASSERT_GE(shift, 0);
      ASSERT_LT(shift, k);
      if (u.tile >= s.dp_tiles) {
        // The general form (aligned schedules return it without a division): minus the start of
        // the last piece, modulo K.
        const std::int32_t last = (u.tile - s.dp_tiles + 1) * k - 1;
        const std::int32_t into = sk::sk_begin(s, sk::sk_owner(s, last)) % k;
        ASSERT_EQ(shift, into == 0 ? 0 : k - into) << "tile " << u.tile;
      }
      if (u.tile < s.dp_tiles) {
        ASSERT_EQ(shift, 0) << "data-parallel tile " << u.tile;
      }
      for (std::int32_t kb = u.kb_begin; kb < u.kb_end; ++kb) {
        const std::int32_t loads = sk::rotated_k_block(s, shift, kb);
        ASSERT_GE(loads, 0);
        ASSERT_LT(loads, k);
        ++loaded[static_cast<std::size_t>(u.tile) * K + static_cast<std::size_t>(loads)];
        if (u.tile >= s.dp_tiles && u.kb_end == k) {
          const std::int64_t tau = std::int64_t{u.tile - s.dp_tiles} * k + kb - sk::sk_begin(s, w);
          ASSERT_EQ(loads, tau % k) << "worker " << w << " tile " << u.tile << " k-block " << kb;
        }
      }
    }
  }
  for (std::size_t i = 0; i < loaded.size(); ++i)
    ASSERT_EQ(loaded[i], 1) << "tile " << i / K << " loads k-block " << i % K;
  // sk_owner inverts sk_begin.
  for (std::int32_t i = 0; i < s.sk_tiles * k; ++i) {
    const std::int32_t w = sk::sk_owner(s, i);
    ASSERT_TRUE(w >= 0 && w < workers && sk::sk_begin(s, w) <= i && i < sk::sk_begin(s, w + 1))
        << "iteration " << i << " owner " << w;
  }

  // One finisher per split tile, and its peers are exactly the tile's contributors, in order.
  for (std::int32_t t = 0; t < tiles; ++t) {
    const auto& c = contributors[static_cast<std::size_t>(t)];
    const int f = finisher[static_cast<std::size_t>(t)];
    if (c.empty()) continue;
    ASSERT_GE(f, 0) << "tile " << t << " has contributors but no finisher";
    ASSERT_TRUE(std::is_sorted(c.begin(), c.end()));
    std::vector<std::int32_t> peers;
    for (std::int32_t v = sk::next_peer(s, t, f); v >= 0; v = sk::next_peer(s, t, v))
      peers.push_back(v);
    ASSERT_EQ(peers, c) << "tile " << t;
    ASSERT_GT(c.front(), f) << "a finisher waits only for workers after it";
    // The kernel's order (last_peer, prev_peer): the same peers, decreasing.
    std::vector<std::int32_t> down;
    for (std::int32_t v = sk::last_peer(s, t, f); v >= 0; v = sk::prev_peer(s, f, v))
      down.push_back(v);
    ASSERT_EQ(down, std::vector<std::int32_t>(c.rbegin(), c.rend())) << "tile " << t;
  }
  for (std::int32_t t = 0; t < tiles; ++t) {
    if (finisher[static_cast<std::size_t>(t)] >= 0) {
      ASSERT_FALSE(contributors[static_cast<std::size_t>(t)].empty())
          << "tile " << t << " has a finisher but no contributor";
    }
  }

  // A run of all workers at once, each advancing one unit per round: a finish waits for its
  // peers' flags, a contribution sets the worker's flag. Every round must make progress.
  std::vector<std::size_t> next(static_cast<std::size_t>(workers), 0);
  std::vector<bool> flag(static_cast<std::size_t>(workers), false);
  for (;;) {
    bool progress = false, done = true;
    for (std::int32_t w = 0; w < workers; ++w) {
      const auto wi = static_cast<std::size_t>(w);
      if (next[wi] == units[wi].size()) continue;
      done = false;
      const sk::Unit& u = units[wi][next[wi]];
      if (u.kind == sk::UnitKind::kFinish) {
        bool ready = true;
        for (std::int32_t v = sk::next_peer(s, u.tile, w); v >= 0; v = sk::next_peer(s, u.tile, v))
          ready = ready && flag[static_cast<std::size_t>(v)];
        if (!ready) continue;
      }
      if (u.kind == sk::UnitKind::kPartial) flag[wi] = true;
      ++next[wi];
      progress = true;
    }
    if (done) break;
    ASSERT_TRUE(progress) << "the workers deadlock";
  }
}

// The one-row split's aligned schedule (gemm.cu: every split of one cluster row into P pieces
// a tile on the TMA path): the same promises, and the finisher's piece the longest.
TEST(GemmStreamK, AlignedScheduleGivesTheFinisherTheLongerPiece) {
  for (std::int32_t tiles : {1, 2, 17, 32, 44})
    for (std::int32_t pieces : {2, 3, 4})
      for (std::int32_t k : {4, 5, 8, 64, 112, 172})
        for (std::int32_t lead : {0, 1, 4, 100}) {
          if (k < 2 * pieces) continue;  // gemm.cu aligns only then
          SCOPED_TRACE(testing::Message() << "tiles=" << tiles << " pieces=" << pieces
                                          << " k_blocks=" << k << " lead=" << lead);
          const sk::Schedule s = sk::make_aligned_schedule(tiles, k, pieces, lead);
          ASSERT_EQ(s.sk_pieces, pieces);
          ASSERT_EQ(s.workers, tiles * pieces);
          ASSERT_GE(s.sk_piece, 1);
          const std::int32_t first = k - (pieces - 1) * s.sk_piece;
          const std::int32_t even = (k + pieces - 1) / pieces;
          ASSERT_GE(first, std::min(k - (pieces - 1), even + lead));
          ASSERT_LT(first, k);
          ASSERT_GE(first, s.sk_piece);
          check_schedule_of(s, true);
          if (testing::Test::HasFatalFailure()) return;
        }
  // 128 x 4096 x 4096 (32 tiles of 64 k-blocks over 96 workers) with the lead of 4: 26 + 19 + 19.
  const sk::Schedule s = sk::make_aligned_schedule(32, 64, 3, 4);
  EXPECT_EQ(s.sk_piece, 19);
  EXPECT_EQ(sk::sk_begin(s, 0), 0);
  EXPECT_EQ(sk::sk_begin(s, 1), 26);
  EXPECT_EQ(sk::sk_begin(s, 2), 45);
  EXPECT_EQ(sk::sk_begin(s, 3), 64);
  EXPECT_EQ(sk::sk_begin(s, 96), 32 * 64);
  EXPECT_EQ(sk::k_shift(s, 5), 19);
}

TEST(GemmStreamK, ScheduleCoversEveryIterationOnceWithoutDeadlock) {
  const std::int32_t kTiles[] = {1,  2,  3,   5,   8,   9,   17,  31, 32,
                                 33, 72, 131, 132, 133, 144, 263, 288};
  const std::int32_t kK[] = {1, 2, 3, 7, 8, 16, 112};
  const std::int32_t kWorkers[] = {1, 2, 3, 5, 7, 64, 131, 132};
  for (std::int32_t tiles : kTiles)
    for (std::int32_t k : kK)
      for (std::int32_t workers : kWorkers)
        for (bool split : {false, true}) {
          check_schedule(tiles, k, workers, split);
          if (testing::Test::HasFatalFailure()) return;
        }
}

TEST(GemmStreamK, LastWavePlusOneFullWaveIsSplit) {
  // 72 tiles on 132 CTAs (M = 1024, N = 2112, 128 x 256): all split, 61 or 62 k-blocks each.
  sk::Schedule s = sk::make_schedule(72, 112, 132, true);
  EXPECT_EQ(s.dp_tiles, 0);
  EXPECT_EQ(s.sk_tiles, 72);
  EXPECT_EQ(s.sk_quot, 72 * 112 / 132);
  // 288 tiles (M = 4096): 2 waves + 24 tiles -> 1 data-parallel wave, 156 tiles split.
  s = sk::make_schedule(288, 112, 132, true);
  EXPECT_EQ(s.dp_tiles, 132);
  EXPECT_EQ(s.sk_tiles, 156);
  // Exact waves: the last wave "split" into whole tiles.
  s = sk::make_schedule(264, 64, 132, true);
  EXPECT_EQ(s.dp_tiles, 132);
  for (const auto& mine : walk(s))
    for (const sk::Unit& u : mine)
      EXPECT_EQ(u.kind, sk::UnitKind::kWhole);
}

// ---- clusters of 2: both CTAs walk the worker's units on their own tile rows ------------------

// All promises of the schedule as the CTAs of cluster_m-CTA clusters run it: the cluster tiles
// (cluster_rows x tiles_n, raster_tile) split or not over `workers` clusters. Per CTA (worker w,
// rank r; tile row tm = 2 c + r may be tiles_m, past the last row, for rank 1 when tiles_m is
// odd: that CTA computes nothing and hands over nothing):
//   - every (output tile, k-block) computed exactly once, by CTAs with rows;
//   - a finisher CTA's peers (next_peer's workers at its own rank, cta_slot) are exactly the CTAs
//     that contributed to its output tile; their slots are distinct and inside the workspace
//     (workers x cluster_m slots); every contributor CTA publishes one partial at most;
//   - a run of all CTAs never deadlocks, with the clusters in lock step (stronger than the
//     kernel, whose two CTAs are tied only inside the k-loops: no deadlock here, none there).
void check_cluster_schedule(std::int32_t tiles_m, std::int32_t tiles_n, std::int32_t k,
                            std::int32_t workers, int cluster_m, std::int32_t group, bool split) {
  SCOPED_TRACE(testing::Message() << "tiles_m=" << tiles_m << " tiles_n=" << tiles_n << " k_blocks="
                                  << k << " workers=" << workers << " cluster_m=" << cluster_m
                                  << " group=" << group << " split=" << split);
  const std::int32_t cluster_rows = (tiles_m + cluster_m - 1) / cluster_m;
  const sk::Schedule s = sk::make_schedule(cluster_rows * tiles_n, k, workers, split);
  const auto units = walk(s);
  const auto K = static_cast<std::size_t>(k);
  const auto out_tile = [&](std::int32_t tm, std::int32_t tn) {
    return static_cast<std::size_t>(tm) * static_cast<std::size_t>(tiles_n) +
           static_cast<std::size_t>(tn);
  };
  const std::size_t out_tiles = static_cast<std::size_t>(tiles_m) * tiles_n;
  const std::int32_t slots = workers * cluster_m;
  std::vector<int> covered(out_tiles * K, 0);
  std::vector<int> finisher(out_tiles, -1);                        // CTA slot
  std::vector<std::vector<std::int32_t>> contributors(out_tiles);  // CTA slots, in order
  std::vector<int> published(static_cast<std::size_t>(slots), 0);
  for (std::int32_t w = 0; w < workers; ++w) {
    for (int r = 0; r < cluster_m; ++r) {
      const std::int32_t slot = sk::cta_slot(w, r, cluster_m);
      ASSERT_GE(slot, 0);
      ASSERT_LT(slot, slots) << "a CTA slot outside the workspace";
      for (const sk::Unit& u : units[static_cast<std::size_t>(w)]) {
        int tm = -1, tn = -1;
        sk::raster_tile(u.tile, cluster_rows, tiles_n, group, r, cluster_m, tm, tn);
        ASSERT_GE(tn, 0);
        ASSERT_LT(tn, tiles_n);
        ASSERT_EQ(tm % cluster_m, r) << "rank r takes tile row cluster_m c + r";
        ASSERT_LT(tm, cluster_rows * cluster_m);
        if (tm >= tiles_m) {
          ASSERT_TRUE(r > 0 && tiles_m % cluster_m != 0 && tm / cluster_m == cluster_rows - 1)
              << "only CTAs of the last cluster row may lie past the last tile row";
          continue;
        }
        const std::size_t o = out_tile(tm, tn);
        for (std::int32_t kb = u.kb_begin; kb < u.kb_end; ++kb)
          ++covered[o * K + static_cast<std::size_t>(kb)];
        if (u.kind == sk::UnitKind::kPartial) {
          contributors[o].push_back(slot);
          ++published[static_cast<std::size_t>(slot)];
        } else if (u.kind == sk::UnitKind::kFinish) {
          ASSERT_EQ(finisher[o], -1) << "two finishers for output tile " << tm << "," << tn;
          finisher[o] = slot;
          for (std::int32_t v = sk::next_peer(s, u.tile, w); v >= 0;
               v = sk::next_peer(s, u.tile, v))
            ASSERT_GT(sk::cta_slot(v, r, cluster_m), slot)
                << "a finisher waits only for CTAs of later workers";
        }
      }
    }
  }
  for (std::size_t i = 0; i < covered.size(); ++i)
    ASSERT_EQ(covered[i], 1) << "output tile " << i / K << " k-block " << i % K;
  for (std::int32_t c = 0; c < slots; ++c)
    ASSERT_LE(published[static_cast<std::size_t>(c)], 1) << "CTA slot " << c << " reused";
  // Each finisher's peers (recomputed from its worker and rank) are its tile's contributors.
  for (std::int32_t w = 0; w < workers; ++w)
    for (int r = 0; r < cluster_m; ++r)
      for (const sk::Unit& u : units[static_cast<std::size_t>(w)]) {
        if (u.kind != sk::UnitKind::kFinish) continue;
        int tm = -1, tn = -1;
        sk::raster_tile(u.tile, cluster_rows, tiles_n, group, r, cluster_m, tm, tn);
        if (tm >= tiles_m) continue;
        std::vector<std::int32_t> peers;
        for (std::int32_t v = sk::next_peer(s, u.tile, w); v >= 0; v = sk::next_peer(s, u.tile, v))
          peers.push_back(sk::cta_slot(v, r, cluster_m));
        ASSERT_EQ(peers, contributors[out_tile(tm, tn)]) << "output tile " << tm << "," << tn;
      }
  for (std::size_t o = 0; o < out_tiles; ++o) {
    if (!contributors[o].empty()) {
      ASSERT_GE(finisher[o], 0) << "contributions nobody adds up";
    }
  }

  // Lock-step run: a cluster advances one unit when each of its CTAs with rows can (a finisher
  // CTA needs its peers' flags); a contributing CTA with rows sets its flag.
  std::vector<std::size_t> next(static_cast<std::size_t>(workers), 0);
  std::vector<bool> flag(static_cast<std::size_t>(slots), false);
  for (;;) {
    bool progress = false, done = true;
    for (std::int32_t w = 0; w < workers; ++w) {
      const auto wi = static_cast<std::size_t>(w);
      if (next[wi] == units[wi].size()) continue;
      done = false;
      const sk::Unit& u = units[wi][next[wi]];
      bool ready = true;
      for (int r = 0; r < cluster_m; ++r) {
        int tm = -1, tn = -1;
        sk::raster_tile(u.tile, cluster_rows, tiles_n, group, r, cluster_m, tm, tn);
        if (tm >= tiles_m || u.kind != sk::UnitKind::kFinish) continue;
        for (std::int32_t v = sk::next_peer(s, u.tile, w); v >= 0; v = sk::next_peer(s, u.tile, v))
          ready = ready && flag[static_cast<std::size_t>(sk::cta_slot(v, r, cluster_m))];
      }
      if (!ready) continue;
      if (u.kind == sk::UnitKind::kPartial)
        for (int r = 0; r < cluster_m; ++r) {
          int tm = -1, tn = -1;
          sk::raster_tile(u.tile, cluster_rows, tiles_n, group, r, cluster_m, tm, tn);
          if (tm < tiles_m) flag[static_cast<std::size_t>(sk::cta_slot(w, r, cluster_m))] = true;
        }
      ++next[wi];
      progress = true;
    }
    if (done) break;
    ASSERT_TRUE(progress) << "the clusters deadlock";
  }
}

TEST(GemmStreamK, ClusterSchedulesCoverEveryOutputTileOnceWithoutDeadlock) {
  const std::int32_t kTilesM[] = {1, 2, 3, 8, 9, 17};
  const std::int32_t kTilesN[] = {1, 3, 17};
  const std::int32_t kK[] = {1, 7, 112};
  const std::int32_t kWorkers[] = {1, 3, 64, 66};
  const std::int32_t kGroups[] = {1, 3, 8};
  for (std::int32_t tiles_m : kTilesM)
    for (std::int32_t tiles_n : kTilesN)
      for (std::int32_t k : kK)
        for (std::int32_t workers : kWorkers)
          for (int cluster_m : {1, 2, 4})
            for (std::int32_t group : kGroups)
              for (bool split : {false, true}) {
                check_cluster_schedule(tiles_m, tiles_n, k, workers, cluster_m, group, split);
                if (testing::Test::HasFatalFailure()) return;
              }
}

// The kernel's divisions by run-time values (FastDiv: a multiply and a shift) against `/`: every
// divisor up to 4,096 and a spread above it up to 2^31 - 1, each with the dividends where the
// quotient steps (multiples of d and their neighbours), the largest ones and random ones.
// The first-tile table (Params::first_tile) names exactly the tile of the worker's first unit
// whenever that unit is a whole data-parallel tile starting at k-block 0, and nothing otherwise:
// the kernel's producer issues that tile's k-block 0 before its walk and skips it after.
TEST(GemmSchedule, FirstTileTableAgreesWithTheWalk) {
  int checked = 0, none = 0;
  for (std::int32_t rows : {1, 2, 3, 8, 64})
    for (std::int32_t cols : {1, 5, 16, 33, 224})
      for (int cluster_m : {1, 2, 4})
        for (std::int32_t group : {1, 3, 8})
          for (std::int32_t workers : {1, 7, 66, 132})
            for (bool split : {false, true}) {
              const std::int32_t tiles = rows * cols;
              const sk::Schedule s = sk::make_schedule(tiles, 64, workers, split);
              const sk::Raster g = sk::make_raster(rows, cols, group);
              for (std::int32_t w = 0; w < workers; ++w) {
                SCOPED_TRACE(testing::Message()
                             << rows << " x " << cols << " cluster tiles, cluster " << cluster_m
                             << ", group " << group << ", " << workers << " workers, split "
                             << split << ", worker " << w);
                const std::uint32_t f = sk::first_tile_of(s, g, w, cluster_m);
                sk::Cursor c = sk::schedule_start(s, w);
                sk::Unit u;
                const bool have = sk::next_unit(s, c, u);
                const bool whole = have && u.tile < s.dp_tiles && u.kb_begin == 0 &&
                                   u.kb_end == s.k_blocks && sk::k_shift(s, u.tile) == 0;
                if (f == sk::kNoFirstTile) {
                  ++none;
                  EXPECT_FALSE(have && u.tile < s.dp_tiles);
                  continue;
                }
                ASSERT_TRUE(whole);
                for (int rank = 0; rank < cluster_m; ++rank) {
                  int tm = 0, tn = 0, ftm = -1, ftn = -1;
                  sk::raster_tile(g, u.tile, rank, cluster_m, tm, tn);
                  sk::first_tile_decode(f, rank, ftm, ftn);  // what the producer reads
                  EXPECT_EQ(ftm, tm);
                  EXPECT_EQ(ftn, tn);
                }
                ++checked;
              }
            }
  EXPECT_GT(checked, 10000);
  EXPECT_GT(none, 1000);  // stream-K first units and workers without a whole tile
}

TEST(GemmSchedule, FastDivIsExactBelow2To31) {
  constexpr std::uint32_t kMaxDividend = 0x7FFFFFFFu;
  std::uint64_t rng = 0x9E3779B97F4A7C15ull;
  const auto next = [&] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return static_cast<std::uint32_t>(rng);
  };
  std::vector<std::uint32_t> divisors;
  for (std::uint32_t d = 1; d <= 4096; ++d)
    divisors.push_back(d);
  for (int i = 0; i < 2000; ++i)
    divisors.push_back(1u + next() % kMaxDividend);
  for (std::uint32_t e = 12; e <= 31; ++e) {
    divisors.push_back((1u << e) - 1);
    divisors.push_back(1u << e);
    divisors.push_back((1u << e) + 1);
  }
  int checked = 0;
  for (const std::uint32_t d : divisors) {
    if (d > kMaxDividend) continue;
    const sk::FastDiv f = sk::make_fast_div(d);
    ASSERT_EQ(f.d, d);
    std::vector<std::uint32_t> n = {0,
                                    1,
                                    d - 1,
                                    d,
                                    kMaxDividend,
                                    kMaxDividend - 1,
                                    kMaxDividend - kMaxDividend % d,
                                    kMaxDividend / d * d - 1};
    for (std::uint32_t q = 1; q < 40; ++q) {
      const std::uint64_t at = std::uint64_t{q} * (kMaxDividend / d / 40 + 1) * d;
      if (at <= kMaxDividend)
        n.insert(n.end(), {static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(at - 1)});
    }
    for (int i = 0; i < 40; ++i)
      n.push_back(next() % (kMaxDividend + 1u));
    for (const std::uint32_t x : n) {
      if (x > kMaxDividend) continue;
      ASSERT_EQ(f.div(x), x / d) << x << " / " << d;
      ++checked;
    }
  }
  EXPECT_GT(checked, 300000);
}

// raster_tile (prepared divisors) against the grouped raster written with plain division, for
// groups smaller than, equal to and larger than the cluster rows, clusters of 1, 2 and 4; odd
// groups walk their columns backwards. Every (row, column) once: the raster is a bijection.
TEST(GemmStreamK, RasterMatchesPlainDivision) {
  for (std::int32_t cluster_rows : {1, 2, 3, 5, 8, 9, 16, 33, 64, 127})
    for (std::int32_t tiles_n : {1, 2, 7, 28, 41, 86})
      for (std::int32_t group : {1, 2, 3, 4, 8, 16, 1000})
        for (int cluster_m : {1, 2, 4}) {
          const sk::Raster g = sk::make_raster(cluster_rows, tiles_n, group);
          std::vector<int> seen(static_cast<std::size_t>(cluster_rows * tiles_n), 0);
          for (std::int32_t t = 0; t < cluster_rows * tiles_n; ++t) {
            const std::int32_t per_group = group * tiles_n;
            const std::int32_t first = t / per_group * group;
            const std::int32_t rows = std::min(group, cluster_rows - first);
            const std::int32_t r = t % per_group;
            for (int rank = 0; rank < cluster_m; ++rank) {
              int tm = -1, tn = -1;
              sk::raster_tile(g, t, rank, cluster_m, tm, tn);
              ASSERT_EQ(tm, (first + r % rows) * cluster_m + rank)
                  << cluster_rows << " rows, " << tiles_n << " columns, group " << group << ", t "
                  << t;
              const std::int32_t column = r / rows;
              ASSERT_EQ(tn, (t / per_group) % 2 == 0 ? column : tiles_n - 1 - column);
              if (rank == 0) ++seen[static_cast<std::size_t>(tm / cluster_m * tiles_n + tn)];
            }
          }
          for (const int n : seen)
            ASSERT_EQ(n, 1) << cluster_rows << " rows, " << tiles_n << " columns, group " << group;
        }
}

TEST(GemmStreamK, RasterIsTheKernelsGroupedOrder) {
  // 5 cluster rows of 2 (tiles_m = 9), 3 columns, groups of 2 cluster rows: M fastest in a group,
  // odd groups from the last column.
  int tm = -1, tn = -1;
  sk::raster_tile(0, 5, 3, 2, 0, 2, tm, tn);
  EXPECT_EQ(tm, 0);
  EXPECT_EQ(tn, 0);
  sk::raster_tile(1, 5, 3, 2, 1, 2, tm, tn);  // second cluster row, rank 1
  EXPECT_EQ(tm, 3);
  EXPECT_EQ(tn, 0);
  sk::raster_tile(2, 5, 3, 2, 0, 2, tm, tn);  // next column
  EXPECT_EQ(tm, 0);
  EXPECT_EQ(tn, 1);
  sk::raster_tile(6, 5, 3, 2, 0, 2, tm, tn);  // the second group (odd): from the last column
  EXPECT_EQ(tm, 4);
  EXPECT_EQ(tn, 2);
  sk::raster_tile(11, 5, 3, 2, 1, 2, tm, tn);  // its last tile: back in column 0
  EXPECT_EQ(tm, 7);
  EXPECT_EQ(tn, 0);
  sk::raster_tile(12, 5, 3, 2, 1, 2, tm, tn);  // the last group has one cluster row: row 4
  EXPECT_EQ(tm, 9);                            // past tiles_m = 9: the idle CTA
  EXPECT_EQ(tn, 0);
  EXPECT_EQ(sk::cta_slot(5, 1, 2), 11);
  EXPECT_EQ(sk::cta_slot(5, 0, 1), 5);
}

// ---- the plan heuristic (gemm_config.hpp: choose_plan) -----------------------------------------

namespace plan = ops::detail::gemm;

// Every shape of the session-8 sweep (tma-bench gemm --no-ordinary --sweep --seed 13, H200, 132
// SMs, 2026-11-24, bench/results/h200-2026-11-24-s8-gemm-sweep.json; the first with the row-box
// widths 224, 240 and 176): the choice, what that variant measured, and the best variant measured
// (TFLOP/s; config 2 left out: tuning only). Variants of one case were timed round-robin;
// identical kernels still differ by up to ~5% between variants and runs (clock at the power cap).
// bench/fit_plan.py reproduces these choices from the record.
struct SweptShape {
  std::int64_t m, n, k;
  int config, cluster_m;
  bool split;
  double chosen_tflops, best_tflops;
};

// A split of one tile row takes at most 3 workers per split tile (gemm_config.hpp:
// one_row_split_workers; measured in session 33), never more than the launch has.
TEST(GemmPlan, OneRowSplitTakesAtMostThreeWorkersPerTile) {
  EXPECT_EQ(plan::one_row_split_workers(132, 32), 96);  // 128 x 4096 x 4096
  EXPECT_EQ(plan::one_row_split_workers(132, 17), 51);  // 128 x 2112 x 7168
  EXPECT_EQ(plan::one_row_split_workers(132, 44), 132);
  EXPECT_EQ(plan::one_row_split_workers(132, 60), 132);
  EXPECT_EQ(plan::one_row_split_workers(5, 1), 3);
  EXPECT_EQ(plan::one_row_split_workers(2, 1), 2);
}

// The shapes of issue 5's list that the long-K split rule (session 40) takes.
bool is_long_split_shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  const std::array<std::int64_t, 3> kLongSplit[] = {
      {1024, 28672, 8192}, {2048, 28672, 8192},  {4096, 28672, 8192},
      {8192, 28672, 8192}, {16384, 28672, 8192}, {2048, 11008, 4096},
      {8192, 4096, 4096},  {8192, 4096, 11008},  {16384, 11008, 4096}};
  for (const auto& s : kLongSplit)
    if (s[0] == m && s[1] == n && s[2] == k) return true;
  return false;
}

TEST(GemmPlan, SweptShapesGetTheirBestVariant) {
  const SweptShape kShapes[] = {
      {1024, 1024, 1024, 1, 2, false, 161.7, 163.1},    // best: cfg1_cl1
      {2048, 2048, 2048, 0, 2, false, 573.0, 573.0},    // best: cfg0_cl2
      {4096, 4096, 4096, 0, 2, false, 771.4, 771.4},    // best: cfg0_cl2
      {8192, 8192, 8192, 0, 2, true, 687.5, 687.5},     // best: cfg0_sk2
      {16384, 16384, 16384, 0, 2, true, 682.1, 682.1},  // best: cfg0_sk2
      {128, 4096, 4096, 1, 1, true, 198.3, 198.3},      // best: cfg1_sk
      {128, 11008, 4096, 1, 1, false, 344.8, 344.8},    // best: cfg1_cl1
      {128, 4096, 11008, 1, 1, true, 302.6, 302.6},     // best: cfg1_sk
      {128, 2112, 7168, 1, 1, true, 159.1, 159.1},      // best: cfg1_sk
      {128, 7168, 2048, 1, 1, false, 193.2, 193.2},     // best: cfg1_cl1
      {128, 28672, 8192, 4, 1, false, 494.0, 497.0},    // best: cfg5_cl1
      {512, 4096, 4096, 1, 2, false, 524.3, 524.3},     // best: cfg1_cl2
      {512, 11008, 4096, 6, 2, false, 667.8, 667.8},    // best: cfg6_cl2
      {512, 4096, 11008, 3, 2, true, 606.5, 629.9},     // best: cfg6_sk2
      {512, 2112, 7168, 6, 2, true, 445.3, 445.3},      // best: cfg6_sk2
      {512, 7168, 2048, 4, 2, false, 536.9, 537.5},     // best: cfg4_cl1
      {512, 28672, 8192, 4, 2, false, 657.8, 670.1},    // best: cfg6_cl1
      {1024, 4096, 4096, 0, 2, false, 671.3, 671.3},    // best: cfg0_cl2
      {1024, 11008, 4096, 5, 2, false, 690.4, 690.4},   // best: cfg5_cl2
      {1024, 4096, 11008, 0, 2, false, 763.9, 763.9},   // best: cfg0_cl2
      {1024, 2112, 7168, 3, 2, true, 580.9, 582.8},     // best: cfg6_sk2
      {1024, 7168, 2048, 4, 2, false, 633.1, 641.5},    // best: cfg4_cl1
      {1024, 28672, 8192, 3, 2, true, 684.5, 691.3},    // best: cfg4_sk2
      {2048, 4096, 4096, 0, 2, false, 722.9, 727.1},    // best: cfg0_cl1
      {2048, 11008, 4096, 3, 2, true, 670.2, 679.7},    // best: cfg0_sk2
      {2048, 4096, 11008, 0, 2, false, 702.8, 702.8},   // best: cfg0_cl2
      {2048, 2112, 7168, 3, 2, true, 676.7, 676.7},     // best: cfg3_sk2
      {2048, 7168, 2048, 4, 2, false, 701.5, 701.5},    // best: cfg4_cl2
      {2048, 28672, 8192, 4, 2, true, 694.9, 700.0},    // best: cfg0_sk2
      {4096, 4096, 4096, 0, 2, false, 667.0, 671.7},    // best: cfg0_cl1
      {4096, 11008, 4096, 3, 2, true, 671.2, 684.1},    // best: cfg0_sk2
      {4096, 4096, 11008, 0, 2, false, 684.7, 694.4},   // best: cfg0_sk2
      {4096, 2112, 7168, 6, 2, false, 685.9, 704.4},    // best: cfg6_cl1
      {4096, 7168, 2048, 0, 2, false, 657.2, 663.4},    // best: cfg6_cl1
      {4096, 28672, 8192, 4, 2, true, 689.9, 689.9},    // best: cfg4_sk2
      {8192, 4096, 4096, 0, 2, false, 665.1, 673.3},    // best: cfg0_sk2
      {8192, 11008, 4096, 0, 2, false, 687.1, 687.1},   // best: cfg0_cl2
      {8192, 4096, 11008, 0, 2, false, 683.7, 699.1},   // best: cfg0_sk2
      {8192, 2112, 7168, 3, 2, true, 680.6, 682.8},     // best: cfg6_sk
      {8192, 7168, 2048, 0, 2, false, 656.4, 661.5},    // best: cfg6_cl1
      {8192, 28672, 8192, 4, 2, true, 680.6, 682.5},    // best: cfg0_sk2
      {16384, 4096, 4096, 0, 2, true, 681.2, 681.2},    // best: cfg0_sk2
      {16384, 11008, 4096, 0, 2, false, 683.0, 683.0},  // best: cfg0_cl2
      {16384, 4096, 11008, 0, 2, true, 691.4, 691.4},   // best: cfg0_sk2
      {16384, 2112, 7168, 3, 2, true, 685.3, 685.3},    // best: cfg3_sk2
      {16384, 7168, 2048, 4, 2, true, 651.8, 658.0},    // best: cfg0_sk2
      {16384, 28672, 8192, 4, 2, true, 672.3, 680.0},   // best: cfg0_sk2
  };
  double log_sum = 0;
  int pingpong = 0, one_wave = 0, full_wave = 0, wave144 = 0, long_split = 0;
  for (const SweptShape& x : kShapes) {
    SCOPED_TRACE(testing::Message() << x.m << " x " << x.n << " x " << x.k);
    const plan::GemmChoice c = plan::choose_plan(x.m, x.n, x.k, 132, plan::PlanRequest{});
    // Since session 40 the long-K split rule takes these (LongKSplitRule): the 128 x 256 split in
    // clusters of 2, this sweep's best variant at five of them (2048 x 11008 x 4096, 8192 x 4096 x
    // 11008, 2048 / 8192 / 16384 x 28672 x 8192).
    if (is_long_split_shape(x.m, x.n, x.k)) {
      EXPECT_EQ(c.config, 0);
      EXPECT_EQ(c.cluster_m, 2);
      EXPECT_TRUE(c.split);
      ++long_split;
      continue;
    }
    // Since session 24 the one-wave rule takes 2048^3 (OneWaveOfWideTilesTakesTwoOfNarrow; the
    // 128 x 128 ping-pong since session 27).
    if (x.m == 2048 && x.n == 2048 && x.k == 2048) {
      EXPECT_EQ(c.config, plan::kNarrowPingPongConfig);
      ++one_wave;
      continue;
    }
    // Since session 20 (K <= 2048) and session 24 (K <= 8192) the ping-pong rule takes these
    // (config 7 was not in this sweep, config 2 not a choice; ManyWavesTakeAPingPong below has
    // their measurements).
    if (c.config == plan::kWidePingPongConfig || c.config == plan::kNarrowPingPongConfig) {
      ++pingpong;
      continue;
    }
    // Since session 28 the 144 rule takes 1024 x 2112 x 7168 (OneWaveOf144WideTiles; this sweep
    // had no configuration 8), with 128 x 136 tiles since session 30, and 2048 x 2112 x 7168 (two
    // waves of them) since session 37.
    if ((x.m == 1024 || x.m == 2048) && x.n == 2112 && x.k == 7168) {
      EXPECT_EQ(c.config, plan::kConfig136);
      EXPECT_FALSE(c.split);
      ++wave144;
      continue;
    }
    // Since session 27 the full-wave rule keeps 512 x 4096 x 11008 data-parallel
    // (AFullLastWaveIsNotSplit; this sweep: 128 x 128 in clusters of 2 at 0.818x cuBLASLt, the
    // split chosen here at 0.817x).
    if (x.m == 512 && x.n == 4096 && x.k == 11008) {
      EXPECT_EQ(c.config, 1);
      EXPECT_FALSE(c.split);
      ++full_wave;
      continue;
    }
    EXPECT_EQ(c.config, x.config);
    EXPECT_EQ(c.cluster_m, x.cluster_m);
    EXPECT_EQ(c.split, x.split);
    // Every choice within 5% of the best variant (the worst was 512 x 4096 x 11008, 128 x 192
    // split 607 against 128 x 176 split 630 TFLOP/s, now the full-wave rule's).
    EXPECT_GE(x.chosen_tflops, 0.95 * x.best_tflops);
    log_sum += std::log(x.chosen_tflops / x.best_tflops);
  }
  // On average the choice is within 1% of the best variant measured (0.994 on this sweep).
  EXPECT_EQ(pingpong, 7);
  EXPECT_EQ(one_wave, 1);
  EXPECT_EQ(full_wave, 1);
  EXPECT_EQ(wave144, 2);
  EXPECT_EQ(long_split, 9);
  EXPECT_GE(std::exp(log_sum / static_cast<double>(std::size(kShapes) - pingpong - one_wave -
                                                   full_wave - wave144 - long_split)),
            0.99);
}

TEST(GemmPlan, OneWaveOf144WideTiles) {
  // One wave of 128 x 144 cluster tiles at >= 90% of the clusters, where the data-parallel choice
  // gives each worker more columns: configuration 8 in clusters of 2, data-parallel. Measured
  // (H100, session 28, bench/results/h100-2026-11-27-s28-gemm-investigation.txt call 1, three
  // seeds): 1024 x 2112 x 7168 (8 x 15 = 120 tiles: 60 cluster tiles on 66 clusters) 45.8-46.2 us
  // against 48.7-49.3 us for the split 128 x 192 tiles chosen before (0.945x cuBLASLt against
  // 0.887x).
  //
  // With K >= 4096 (64 k-blocks) the rule takes 128 x 136 tiles first where they make one such
  // wave: 1024 x 2112 (128 tiles, 64 cluster tiles on 66 clusters). Measured (H100, session 30,
  // bench/results/h100-2026-11-27-s30-gemm-investigation.txt call 1, three seeds side by side):
  // 1.8-2.1% faster than 144 at K = 7168, 1.7-2.3% at K = 4096, 1.7-2.7% slower at K = 1024.
  plan::GemmChoice c = plan::choose_plan(1024, 2112, 7168, 132, plan::PlanRequest{});
  EXPECT_EQ(c.config, plan::kConfig136);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_FALSE(c.split);
  EXPECT_EQ(plan::choose_plan(1024, 2112, 4096, 132, plan::PlanRequest{}).config, plan::kConfig136);
  EXPECT_EQ(plan::choose_plan(1024, 2112, 4032, 132, plan::PlanRequest{}).config, plan::kConfig144);
  // Short K: 144 (the wave model's choice there, 128 x 176, is one wave of 176 columns a worker).
  EXPECT_EQ(plan::choose_plan(1024, 2112, 1024, 132, plan::PlanRequest{}).config, plan::kConfig144);
  // 1024 x 2200 x 7168: 17 tile columns of 136 (68 cluster tiles: more than a wave), 16 of 144.
  EXPECT_EQ(plan::choose_plan(1024, 2200, 7168, 132, plan::PlanRequest{}).config, plan::kConfig144);
  // Two waves of 128 x 136 tiles, the last at >= 90% of the clusters: 2048 x 2112 x 7168 (128
  // cluster tiles on 66 clusters, the last wave 62). Session 30 measured it 1-2% slower than the
  // split 128 x 192 tiles; session 37 (H100, after sessions 32-37's kernel changes) 4% faster in
  // the sweep and in the README regime's rounds (docs/perf-log.md, session 37 items 7-8).
  c = plan::choose_plan(2048, 2112, 7168, 132, plan::PlanRequest{});
  EXPECT_EQ(c.config, plan::kConfig136);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_FALSE(c.split);
  // Not: a wave under 90% (512 x 2112 x 7168: 30 of 66 clusters; 1024 x 1856: 52; 1536 x 2112:
  // a second wave of 30), three waves (3072 x 2112), two waves of 144 (2048 x 2304 x 7168: 16 x
  // 16 tiles of 144, K too short for 136 at 2048 x 2112 x 2048), one tile row (128 x 2112), or a
  // data-parallel choice of <= 144 columns a worker (2048 x 1024 x 4096: one wave of 128 x 128).
  for (const auto& [m, n, k] :
       {std::array<std::int64_t, 3>{512, 2112, 7168}, std::array<std::int64_t, 3>{1024, 1856, 7168},
        std::array<std::int64_t, 3>{1536, 2112, 7168},
        std::array<std::int64_t, 3>{3072, 2112, 7168},
        std::array<std::int64_t, 3>{2048, 2304, 7168},
        std::array<std::int64_t, 3>{2048, 2112, 2048}, std::array<std::int64_t, 3>{128, 2112, 7168},
        std::array<std::int64_t, 3>{2048, 1024, 4096}})
    for (const int config : {plan::kConfig144, plan::kConfig136})
      EXPECT_NE(plan::choose_plan(m, n, k, 132, plan::PlanRequest{}).config, config)
          << m << " x " << n << " x " << k;
  // Explicit choices, a row-major B and the ordinary path are left alone.
  plan::PlanRequest req;
  req.cluster_m = 1;
  EXPECT_NE(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kConfig136);
  req = plan::PlanRequest{};
  req.stream_k = 2;
  EXPECT_TRUE(plan::choose_plan(1024, 2112, 7168, 132, req).split);
  req = plan::PlanRequest{};
  req.k_major_b = false;
  EXPECT_NE(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kConfig136);
  req = plan::PlanRequest{};
  req.may_cluster = false;
  EXPECT_NE(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kConfig136);
  // Forced data-parallel (stream_k = 1) still takes it.
  req = plan::PlanRequest{};
  req.stream_k = 1;
  EXPECT_EQ(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kConfig136);
}

// The LLM shapes of the README's command (tma-bench gemm): M from 128 to 16384 against issue 5's
// six (N, K).
std::vector<std::array<std::int64_t, 3>> readme_llm_shapes() {
  std::vector<std::array<std::int64_t, 3>> out;
  for (const std::int64_t m : {128, 512, 1024, 2048, 4096, 8192, 16384})
    for (const auto& [n, k] : {std::array<std::int64_t, 2>{4096, 4096},
                               {11008, 4096},
                               {4096, 11008},
                               {2112, 7168},
                               {7168, 2048},
                               {28672, 8192}})
      out.push_back({m, n, k});
  return out;
}

TEST(GemmPlan, SwapRuleTakesFullWavesOf256x64Tiles) {
  // A plain product (D in the inputs' type, alpha 1, beta 0) with A row-major and B column-major
  // and K >= 7168 (112 k-blocks), whose 256 x 64 tiles fill at most two waves of the SMs, the last
  // >= 90%, with fewer outputs per CTA than the choice so far: configuration 10 (swapped operands,
  // ping-pong) in clusters of 1, data-parallel. Measured (H200, session 39, bench/results/
  // h200-2026-11-28-s39-investigation.txt call 2, three seeds beside the 136 rule's choice):
  // 1024 x 2112 x 7168 (132 tiles) 42.5 us against 43.3-43.7, 2048 x 2112 x 7168 (264) 80.2-80.4
  // against 84.1-84.5; at K = 4096 no gain. Only with the H200's DRAM bandwidth (4,814 GB/s;
  // kSwapMinMemoryGbps): SwapRuleNeedsTheMemoryBandwidth below.
  plan::PlanRequest plain;
  plain.plain = true;
  plain.memory_gbps = 4814.304;  // the H200 (tma-bench's JSON: 3201 MHz x 6016 bits)
  for (const std::int64_t m : {1024, 2048}) {
    const plan::GemmChoice c = plan::choose_plan(m, 2112, 7168, 132, plain);
    EXPECT_EQ(c.config, plan::kSwapConfig) << m;
    EXPECT_EQ(c.cluster_m, 1) << m;
    EXPECT_FALSE(c.split) << m;
  }
  // Forced data-parallel (stream_k = 1) or clusters of 1 asked for: still.
  plan::PlanRequest req = plain;
  req.stream_k = 1;
  EXPECT_EQ(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kSwapConfig);
  req = plain;
  req.cluster_m = 1;
  EXPECT_EQ(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kSwapConfig);
  // Not: K below 112 k-blocks (1024 x 2112 x 4096: the 136 rule's tile), more than two waves
  // (4096 x 2112 x 7168: 528 tiles), a last wave under 90% (512 x 2112: 66 tiles; 1536 x 2112: a
  // second wave of 66), or no fewer outputs a CTA (1024 x 4096 x 11008: two waves of 256 x 64
  // against one of 128 x 256 in clusters of 2: 32768 each).
  EXPECT_EQ(plan::choose_plan(1024, 2112, 4096, 132, plain).config, plan::kConfig136);
  for (const auto& [m, n, k] :
       {std::array<std::int64_t, 3>{4096, 2112, 7168}, std::array<std::int64_t, 3>{512, 2112, 7168},
        std::array<std::int64_t, 3>{1536, 2112, 7168},
        std::array<std::int64_t, 3>{1024, 4096, 11008}})
    EXPECT_NE(plan::choose_plan(m, n, k, 132, plain).config, plan::kSwapConfig)
        << m << " x " << n << " x " << k;
  // Not for another product (not plain, A column-major, B row-major), the ordinary path, a given
  // configuration, clusters of 2 or a forced split: the 136 rule's choice or the caller's.
  EXPECT_EQ(plan::choose_plan(1024, 2112, 7168, 132, plan::PlanRequest{}).config, plan::kConfig136);
  req = plain;
  req.k_major_a = false;
  EXPECT_EQ(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kConfig136);
  req = plain;
  req.k_major_b = false;
  EXPECT_NE(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kSwapConfig);
  req = plain;
  req.may_cluster = false;
  EXPECT_NE(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kSwapConfig);
  req = plain;
  req.cluster_m = 2;
  EXPECT_EQ(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kConfig136);
  req = plain;
  req.stream_k = 2;
  EXPECT_TRUE(plan::choose_plan(1024, 2112, 7168, 132, req).split);
  req = plain;
  req.config = 9;
  EXPECT_EQ(plan::choose_plan(1024, 2112, 7168, 132, req).config, 9);
}

TEST(GemmPlan, SwapRuleNeedsTheMemoryBandwidth) {
  // On the H100 SXM (3,352 GB/s) the swapped tile loses to the 136 rule's choice at 1024 / 2048 x
  // 2112 x 7168 (docs/perf-log.md session 44: tma-bench, three seeds, 647-668 against 707-715
  // TFLOP/s and 714-719 against 730-748; three README-regime rounds: +7.0% / +1.7% with the 136
  // rule): there, and on a device whose bandwidth is unknown (0), the plan is session 37's, 128 x
  // 136 tiles in clusters of 2, data-parallel. At the threshold itself the swap rule applies.
  plan::PlanRequest req;
  req.plain = true;
  for (const double gbps : {3352.32, 0.0, plan::kSwapMinMemoryGbps - 1}) {
    req.memory_gbps = gbps;
    for (const std::int64_t m : {1024, 2048}) {
      const plan::GemmChoice c = plan::choose_plan(m, 2112, 7168, 132, req);
      EXPECT_EQ(c.config, plan::kConfig136) << m << " at " << gbps << " GB/s";
      EXPECT_EQ(c.cluster_m, 2) << m << " at " << gbps << " GB/s";
      EXPECT_FALSE(c.split) << m << " at " << gbps << " GB/s";
    }
  }
  req.memory_gbps = plan::kSwapMinMemoryGbps;
  EXPECT_EQ(plan::choose_plan(1024, 2112, 7168, 132, req).config, plan::kSwapConfig);
  // The bandwidth changes nothing else: of the README command's LLM shapes (plain products),
  // only those two plan differently on the H100 and the H200.
  for (const auto& [m, n, k] : readme_llm_shapes()) {
    plan::PlanRequest h100, h200;
    h100.plain = h200.plain = true;
    h100.memory_gbps = 3352.32;
    h200.memory_gbps = 4814.304;
    const plan::GemmChoice a = plan::choose_plan(m, n, k, 132, h100);
    const plan::GemmChoice b = plan::choose_plan(m, n, k, 132, h200);
    const bool same = a.config == b.config && a.cluster_m == b.cluster_m && a.split == b.split;
    EXPECT_EQ(same, !((m == 1024 || m == 2048) && n == 2112 && k == 7168))
        << m << " x " << n << " x " << k;
  }
}

TEST(GemmPlan, LongKSplitRule) {
  // K >= 4096 (64 k-blocks) and at least 5 waves of 128 x 256 cluster tiles (clusters of 2): the
  // 128 x 256 split in clusters of 2 in place of the 128 x 176 ping-pong where its even share gives
  // a CTA no more outputs than the ping-pong's whole waves, and in place of the 128 x 256
  // data-parallel plan whose last wave is at most 80% full. Measured (H200, session 40,
  // bench/results/h200-2026-11-28-s40-investigation.txt call 5: the README command's regime, eight
  // alternating rounds, the plan overridden on the shapes it changes): 1024 / 2048 / 4096 x 28672
  // x 8192 +3.2 / +1.5 / +2.0%, 2048 x 11008 x 4096 +2.7%, 8192 x 4096 x 4096 / 11008 +1.4 /
  // +1.8%, 16384 x 11008 x 4096 +1.2%, 8192 / 16384 x 28672 x 8192 +0.1 / +0.5%.
  for (const auto& [m, n, k] : readme_llm_shapes()) {
    const plan::GemmChoice c = plan::choose_plan(m, n, k, 132, plan::PlanRequest{});
    const bool taken = c.config == 0 && c.cluster_m == 2 && c.split;
    // Issue 5's shapes on it: the nine above, and the three the cost model already split there
    // (8192^3-like: 16384 x 4096 x 4096 / 11008 and, below, the squares).
    const bool already = m == 16384 && n == 4096;
    EXPECT_EQ(taken, is_long_split_shape(m, n, k) || already) << m << " x " << n << " x " << k;
  }
  // Not where the same split lost: 4096 x 11008 x 4096 (-1.8%: the 128 x 128 ping-pong's 85%-full
  // waves), 16384 x 2112 x 7168 (-9.7%: N = 2112 wastes 12% of 256-wide columns), 1024 x 11008 x
  // 4096 (-2.4%: 2.6 waves); nor at K = 2048 (the ping-pong's: 8192 x 7168 x 2048).
  EXPECT_EQ(plan::choose_plan(4096, 11008, 4096, 132, plan::PlanRequest{}).config,
            plan::kNarrowPingPongConfig);
  EXPECT_EQ(plan::choose_plan(16384, 2112, 7168, 132, plan::PlanRequest{}).config, 3);
  EXPECT_EQ(plan::choose_plan(1024, 11008, 4096, 132, plan::PlanRequest{}).config,
            plan::kWidePingPongConfig);
  EXPECT_EQ(plan::choose_plan(8192, 7168, 2048, 132, plan::PlanRequest{}).config,
            plan::kWidePingPongConfig);
  // It leaves the caller's choices alone: data-parallel asked for (stream_k = 1), a configuration,
  // clusters of 1.
  plan::PlanRequest req;
  req.stream_k = 1;
  EXPECT_FALSE(plan::choose_plan(2048, 11008, 4096, 132, req).split);
  req = plan::PlanRequest{};
  req.config = 7;
  EXPECT_EQ(plan::choose_plan(2048, 11008, 4096, 132, req).config, 7);
  req = plan::PlanRequest{};
  req.cluster_m = 1;
  EXPECT_EQ(plan::choose_plan(2048, 11008, 4096, 132, req).cluster_m, 1);
}

TEST(GemmPlan, CandidatesStartWithThePlanAndListEachOtherAllowedPlanOnce) {
  // tma::ops::gemm_candidates' list (candidate_plans): the plan first, then distinct plans the
  // heuristic could take, each one the product and path allow, sorted by the wave model.
  struct Shape {
    std::int64_t m, n, k;
  };
  const Shape shapes[] = {
      {2048, 11008, 4096}, {1024, 2112, 7168}, {128, 4096, 4096}, {16384, 16384, 16384},
      {1024, 7168, 2048},  {1000, 1000, 1000}, {1, 8, 64}};
  for (const Shape& sh : shapes) {
    for (const bool tma : {true, false}) {
      for (const bool plain : {true, false}) {
        for (const bool k_major_b : {true, false}) {
          plan::PlanRequest req;
          req.may_cluster = tma;
          req.plain = plain;
          req.k_major_b = k_major_b;
          const std::string what = std::to_string(sh.m) + " x " + std::to_string(sh.n) + " x " +
                                   std::to_string(sh.k) + (tma ? " tma" : " ordinary") +
                                   (plain ? " plain" : "") + (k_major_b ? " B col" : " B row");
          const std::vector<plan::GemmChoice> all =
              plan::candidate_plans(sh.m, sh.n, sh.k, 132, req, 64);
          ASSERT_FALSE(all.empty()) << what;
          const plan::GemmChoice p = plan::choose_plan(sh.m, sh.n, sh.k, 132, req);
          EXPECT_EQ(all[0].config, p.config) << what;
          EXPECT_EQ(all[0].cluster_m, p.cluster_m) << what;
          EXPECT_EQ(all[0].split, p.split) << what;
          EXPECT_GE(all.size(), 3u) << what;  // something to choose from on every shape
          for (std::size_t i = 0; i < all.size(); ++i) {
            const plan::GemmChoice& c = all[i];
            const ops::GemmConfig& g = ops::kGemmConfigs[c.config];
            EXPECT_TRUE(ops::gemm_config_allowed(g, c.cluster_m, k_major_b)) << what << " " << i;
            EXPECT_TRUE(ops::gemm_config_swap_supported(g, true, k_major_b, plain, c.split))
                << what << " " << i;
            if (!tma) {
              EXPECT_EQ(c.cluster_m, 1) << what << " " << i;
              EXPECT_FALSE(ops::gemm_config_tma_only(g)) << what << " " << i;
            }
            // K below 32 k-blocks: no split offered (the plan's kMinStreamKBlocks).
            if (sh.k < 2048 && i > 0) {
              EXPECT_FALSE(c.split) << what << " " << i;
            }
            for (std::size_t j = 0; j < i; ++j) {
              EXPECT_FALSE(all[j].config == c.config && all[j].cluster_m == c.cluster_m &&
                           all[j].split == c.split)
                  << what << ": " << j << " and " << i << " are the same plan";
            }
          }
          // max_count caps the list, its head unchanged.
          const std::vector<plan::GemmChoice> three =
              plan::candidate_plans(sh.m, sh.n, sh.k, 132, req, 3);
          ASSERT_EQ(three.size(), std::min<std::size_t>(3, all.size())) << what;
          for (std::size_t i = 0; i < three.size(); ++i)
            EXPECT_EQ(three[i].config, all[i].config) << what << " " << i;
          EXPECT_EQ(plan::candidate_plans(sh.m, sh.n, sh.k, 132, req, 1).size(), 1u) << what;
        }
      }
    }
  }
  // At 1024 x 11008 x 4096 (the plan: 128 x 176 ping-pong, data-parallel, clusters of 2) the
  // first alternatives by the model include the 128 x 256 split and the 128 x 240 tiles.
  plan::PlanRequest plain;
  plain.plain = true;
  const std::vector<plan::GemmChoice> c = plan::candidate_plans(1024, 11008, 4096, 132, plain, 8);
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c[0].config, plan::kWidePingPongConfig);
  const auto has = [&](int config, bool split) {
    return std::any_of(c.begin(), c.end(), [&](const plan::GemmChoice& x) {
      return x.config == config && x.split == split;
    });
  };
  EXPECT_TRUE(has(0, true));
  EXPECT_TRUE(has(5, false));
}

TEST(GemmPlan, AFullLastWaveIsNotSplit) {
  // 512 x 4096 x 11008: 128 tiles of 128 x 128 (64 cluster tiles on 66 clusters: one wave, 97%
  // of the workers). The cost model alone splits it on 128 x 192 tiles; every recorded sweep had
  // the data-parallel wave as fast or faster (H100, sessions 20 / 24: 0.893 / 0.923x cuBLASLt
  // against 0.801 / 0.819x).
  plan::GemmChoice c = plan::choose_plan(512, 4096, 11008, 132, plan::PlanRequest{});
  EXPECT_EQ(c.config, 1);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_FALSE(c.split);
  // A last wave under 95% full still splits: 8192 x 2112 x 7168 (704 tiles of 128 x 192: 352
  // cluster tiles on 66 clusters, the last wave 33%). (2048 x 2112 x 7168, this example before
  // session 37, now takes two waves of 128 x 136 tiles: OneWaveOf144WideTiles.)
  c = plan::choose_plan(8192, 2112, 7168, 132, plan::PlanRequest{});
  EXPECT_EQ(c.config, 3);
  EXPECT_TRUE(c.split);
  // The same wave with K = 8192 (the model alone splits it too) and with two tile rows (256 x
  // 8192: 64 cluster tiles); at N = 3968 the wave is 62 cluster tiles on 66 clusters (94%): left
  // to the model, which splits it.
  EXPECT_FALSE(plan::choose_plan(512, 4096, 8192, 132, plan::PlanRequest{}).split);
  EXPECT_FALSE(plan::choose_plan(256, 8192, 11008, 132, plan::PlanRequest{}).split);
  EXPECT_TRUE(plan::choose_plan(512, 3968, 11008, 132, plan::PlanRequest{}).split);
  // A forced split is still a split.
  plan::PlanRequest req;
  req.stream_k = 2;
  EXPECT_TRUE(plan::choose_plan(512, 4096, 11008, 132, req).split);
}

TEST(GemmPlan, OneWaveOfWideTilesTakesTwoOfNarrow) {
  // One wave of 128 x 256 cluster tiles with K <= 2048: 128 x 128 tiles in clusters of 2 (two
  // waves), data-parallel; the ping-pong with a column-major B (session 27), the cooperative
  // otherwise. Measured (H100, session 24,
  // bench/results/h100-2026-11-26-s24-gemm-investigation.txt call 10, tma-bench's default timing,
  // four alternating rounds): 2048^3 3.6% faster on the cooperative 128 x 128 (28.59 -> 27.61 us;
  // 0.98 -> 0.99x cuBLASLt over the squares); four sweeps had it 1.5-2% ahead. Session 27
  // (bench/results/h100-2026-11-27-s27-gemm-investigation.txt calls 4-5): the ping-pong +0.3-3.3%
  // over the cooperative on five one-wave shapes.
  plan::GemmChoice c = plan::choose_plan(2048, 2048, 2048, 132, plan::PlanRequest{});
  EXPECT_EQ(c.config, plan::kNarrowPingPongConfig);
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_FALSE(c.split);
  c = plan::choose_plan(1024, 4096, 1024, 132, plan::PlanRequest{});
  EXPECT_EQ(c.config, plan::kNarrowPingPongConfig);
  // A row-major B: the cooperative 128 x 128 (the ping-pong lost 2-17% with it, session 24).
  plan::PlanRequest row_b;
  row_b.k_major_b = false;
  c = plan::choose_plan(2048, 2048, 2048, 132, row_b);
  EXPECT_EQ(c.config, 1);
  EXPECT_EQ(c.cluster_m, 2);
  // Longer K, more than one wave of wide tiles, or a wide choice other than 128 x 256 keep theirs:
  // 1024 x 4096 x 4096 (K = 4096: equal in the sweeps), 4096^3, 512 x 7168 x 2048 (128 x 224:
  // 128 x 128 was 6% slower in the sweeps).
  EXPECT_EQ(plan::choose_plan(1024, 4096, 4096, 132, plan::PlanRequest{}).config, 0);
  EXPECT_EQ(plan::choose_plan(4096, 4096, 4096, 132, plan::PlanRequest{}).config, 0);
  EXPECT_EQ(plan::choose_plan(512, 7168, 2048, 132, plan::PlanRequest{}).config, 4);
  // Explicit choices are left alone; the ordinary path too.
  plan::PlanRequest req;
  req.cluster_m = 1;
  EXPECT_EQ(plan::choose_plan(2048, 2048, 2048, 132, req).config, 0);
  req = plan::PlanRequest{};
  req.config = 0;
  EXPECT_EQ(plan::choose_plan(2048, 2048, 2048, 132, req).config, 0);
  req = plan::PlanRequest{};
  req.may_cluster = false;
  EXPECT_EQ(plan::choose_plan(2048, 2048, 2048, 132, req).config, 0);
  req = plan::PlanRequest{};
  req.stream_k = 2;
  EXPECT_TRUE(plan::choose_plan(2048, 2048, 2048, 132, req).split);
}

TEST(GemmPlan, ManyWavesTakeAPingPong) {
  // K <= 8192, a column-major B, at least 3.5 waves of ping-pong cluster tiles, and at least 3%
  // fewer idle columns than the cooperative choice (waves x block_n): config 7 (128 x 176) or 2
  // (128 x 128) in clusters of 2, data-parallel. Measured (H100, tma-bench's default timing,
  // alternating rounds of two binaries or of one):
  //   - session 20 (bench/results/h100-2026-11-26-s20-gemm-investigation.txt call 9): config 7
  //     against the previous choice (config 4 / 0 / 0 / 4), 2048 / 4096 / 8192 / 16384 x 7168 x
  //     2048 1.3 / 1.6 / 2.7 / 5.8% faster;
  //   - session 24 (bench/results/h100-2026-11-26-s24-gemm-investigation.txt call 5, with the
  //     GPC-aware order), against the session-20 plan: 4096 x 11008 x 4096 (config 2) +4.0%,
  //     1024 x 11008 x 4096 +2.4%, 512 / 1024 / 2048 / 4096 x 28672 x 8192 +0.9 / +0.7 / +0.3 /
  //     -0.8%, 2048 x 11008 x 4096 0.0%.
  struct Expected {
    std::int64_t m, n, k;
    int config;
  };
  // (1024 / 2048 / 4096 x 28672 x 8192 and 2048 x 11008 x 4096 are the long-K split rule's since
  // session 40: LongKSplitRule.)
  const Expected kChoices[] = {
      {2048, 7168, 2048, 7}, {4096, 7168, 2048, 7},  {8192, 7168, 2048, 7},  {16384, 7168, 2048, 7},
      {512, 28672, 8192, 7}, {1024, 11008, 4096, 7}, {4096, 11008, 4096, 2},
  };
  for (const Expected& x : kChoices) {
    const plan::GemmChoice c = plan::choose_plan(x.m, x.n, x.k, 132, plan::PlanRequest{});
    EXPECT_EQ(c.config, x.config) << x.m << " x " << x.n << " x " << x.k;
    EXPECT_EQ(c.cluster_m, 2) << x.m << " x " << x.n << " x " << x.k;
    EXPECT_FALSE(c.split) << x.m << " x " << x.n << " x " << x.k;
  }
  // The same session-24 run: where the ping-pong fills the waves no better than the cooperative
  // tiles, it lost in tma-bench's default timing (the GPU at its power cap), although a sweep
  // (cooler) had it ahead: 4096^3 (config 2, a tie of idle columns) -1.8%, 8192^3 (config 7, 2.7%
  // fewer) -1.7%, 16384 x 11008 x 4096 (1.6% fewer) -1.5%, 2048 / 8192 / 16384 x 4096 x 4096
  // -1.1 to -1.6%. Those keep the cooperative tiles, as do fewer waves (1024 x 7168 x 2048: 2.5;
  // 2048^3, 1.5, is the one-wave rule's: OneWaveOfWideTilesTakesTwoOfNarrow) and longer K (11008,
  // 8256).
  for (const auto& [m, n, k] : {std::array<std::int64_t, 3>{4096, 4096, 4096},
                                std::array<std::int64_t, 3>{8192, 8192, 8192},
                                std::array<std::int64_t, 3>{16384, 11008, 4096},
                                std::array<std::int64_t, 3>{8192, 4096, 4096},
                                std::array<std::int64_t, 3>{1024, 7168, 2048},
                                std::array<std::int64_t, 3>{8192, 4096, 11008},
                                std::array<std::int64_t, 3>{8192, 7168, 8256},
                                std::array<std::int64_t, 3>{4096, 2112, 7168}}) {
    const int config = plan::choose_plan(m, n, k, 132, plan::PlanRequest{}).config;
    EXPECT_FALSE(ops::kGemmConfigs[config].pingpong) << m << " x " << n << " x " << k;
  }
  // The rule leaves every explicit choice alone.
  const auto pingpong = [](const plan::PlanRequest& req) {
    return ops::kGemmConfigs[plan::choose_plan(4096, 11008, 4096, 132, req).config].pingpong;
  };
  EXPECT_TRUE(pingpong(plan::PlanRequest{}));
  plan::PlanRequest req;
  req.cluster_m = 1;
  EXPECT_FALSE(pingpong(req));
  req = plan::PlanRequest{};
  req.cluster_m = 4;
  EXPECT_FALSE(pingpong(req));
  req = plan::PlanRequest{};
  req.stream_k = 2;
  EXPECT_FALSE(pingpong(req));
  req = plan::PlanRequest{};
  req.config = 0;
  EXPECT_EQ(plan::choose_plan(4096, 11008, 4096, 132, req).config, 0);
  req = plan::PlanRequest{};
  req.may_cluster = false;  // the ordinary path: the ping-pong configurations are TMA-only
  EXPECT_FALSE(pingpong(req));
  req = plan::PlanRequest{};
  req.stream_k = 1;  // data-parallel forced: the rule's choice is data-parallel anyway
  EXPECT_TRUE(pingpong(req));
  // A row-major B (MN-major): in the same run the rule's choices lost 2-17% on 10 shapes
  // (rr layout), so it does not apply.
  req = plan::PlanRequest{};
  req.k_major_b = false;
  EXPECT_FALSE(pingpong(req));
  EXPECT_FALSE(ops::kGemmConfigs[plan::choose_plan(8192, 7168, 2048, 132, req).config].pingpong);
}

TEST(GemmPlan, ClustersOfFourTakeWidthsThatSplitBFourWays) {
  // tuning.cluster_m = 4 (not a heuristic choice): the plan's configuration, split or not, is one
  // whose B tile splits into four shares (gemm_config_supports_cluster: since session 28 every
  // width, 144, 176 and 240 with overlapping shares), also where the plan picks 128 x 176 or
  // 128 x 240 (N = 2112, 11008).
  for (const bool k_major_b : {true, false})
    for (const auto& [m, n, k] : {std::array<std::int64_t, 3>{1024, 2112, 7168},
                                  std::array<std::int64_t, 3>{4096, 2112, 7168},
                                  std::array<std::int64_t, 3>{1024, 11008, 4096},
                                  std::array<std::int64_t, 3>{8192, 7168, 2048},
                                  std::array<std::int64_t, 3>{2048, 2048, 2048},
                                  std::array<std::int64_t, 3>{128, 4096, 4096}}) {
      plan::PlanRequest req;
      req.cluster_m = 4;
      req.k_major_b = k_major_b;
      for (const int stream_k : {0, 1, 2}) {
        req.stream_k = stream_k;
        const plan::GemmChoice c = plan::choose_plan(m, n, k, 132, req);
        EXPECT_EQ(c.cluster_m, 4) << m << " x " << n << " x " << k;
        EXPECT_TRUE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[c.config], 4))
            << m << " x " << n << " x " << k << ": config " << c.config;
        EXPECT_TRUE(k_major_b || !ops::gemm_config_needs_k_major_b(ops::kGemmConfigs[c.config]));
      }
    }
  EXPECT_TRUE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[0], 4));
  // Since session 28 the widths whose quarter is not a whole number of swizzle repeats load
  // overlapping shares (KMajorOverlappingSharesMatchOneBox).
  EXPECT_TRUE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[6], 4));  // 176
  EXPECT_TRUE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[5], 4));  // 240
  EXPECT_TRUE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[8], 4));  // 144
  EXPECT_TRUE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[9], 2));  // 136
  EXPECT_TRUE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[9], 4));
  EXPECT_TRUE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[3], 4));  // 3 atoms (MN-major)
  EXPECT_FALSE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[0], 3));
  EXPECT_FALSE(ops::gemm_config_supports_cluster(ops::kGemmConfigs[0], 8));
  // The deprecated form (B's major-ness, ignored since session 28) still answers the same.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  for (const auto& config : ops::kGemmConfigs)
    for (const int cluster_m : {1, 2, 3, 4, 8})
      for (const bool k_major_b : {true, false})
        EXPECT_EQ(ops::gemm_config_supports_cluster(config, cluster_m, k_major_b),
                  ops::gemm_config_supports_cluster(config, cluster_m));
#pragma GCC diagnostic pop
  // Both rules together: what the plan chooses from and the bench sweeps.
  EXPECT_TRUE(ops::gemm_config_allowed(ops::kGemmConfigs[0], 4, false));
  EXPECT_TRUE(ops::gemm_config_allowed(ops::kGemmConfigs[6], 4, true));    // 176: 4 x 48 rows
  EXPECT_FALSE(ops::gemm_config_allowed(ops::kGemmConfigs[6], 1, false));  // needs a K-major B
  EXPECT_TRUE(ops::gemm_config_allowed(ops::kGemmConfigs[6], 2, true));
}

TEST(GemmPlan, KHeavyWellFilledShapesNeverSplit) {
  // Finding 3 of the 2026-11-22 sweep: the heuristic of then split these (414 vs 776 TFLOP/s at
  // 2048 x 4096 x 11008): their last data-parallel wave is 97% full. (1024 x 11008 x 4096, also
  // in that finding, split from session 6 on, its 128 x 256 tiles filling 65% of the last wave;
  // since session 8 it runs 128 x 240 tiles data-parallel, 93% of 3 waves.)
  for (const auto& [m, n, k] : {std::array<std::int64_t, 3>{2048, 4096, 11008},
                                std::array<std::int64_t, 3>{4096, 4096, 11008}}) {
    const plan::GemmChoice c = plan::choose_plan(m, n, k, 132, plan::PlanRequest{});
    EXPECT_FALSE(c.split) << m << " x " << n << " x " << k;
    EXPECT_EQ(c.cluster_m, 2);
  }
}

TEST(GemmPlan, GatesKeepShortKDataParallel) {
  // K = 1024 (16 k-blocks): 1024^3 lost 22% split.
  EXPECT_FALSE(plan::choose_plan(128, 4096, 1024, 132, plan::PlanRequest{}).split);
  EXPECT_TRUE(plan::choose_plan(128, 4096, 2048, 132, plan::PlanRequest{}).split);
}

TEST(GemmPlan, ClusterChoice) {
  EXPECT_EQ(plan::choose_cluster_m(1, 100, 132), 1);
  EXPECT_EQ(plan::choose_cluster_m(2, 1, 132), 2);
  EXPECT_EQ(plan::choose_cluster_m(8, 9, 132), 2);
  // 3 rows x 44 columns: 132 tiles, one wave; paired, 2 x 44 = 88 clusters on 66: two waves.
  EXPECT_EQ(plan::choose_cluster_m(3, 44, 132), 1);
  // 3 rows x 10 columns: one wave either way.
  EXPECT_EQ(plan::choose_cluster_m(3, 10, 132), 2);
  EXPECT_EQ(plan::choose_stream_k_cluster_m(1), 1);
  EXPECT_EQ(plan::choose_stream_k_cluster_m(2), 2);
  EXPECT_EQ(plan::choose_stream_k_cluster_m(3), 1);
  EXPECT_EQ(plan::choose_stream_k_cluster_m(9), 2);
}

TEST(GemmPlan, TuningOverridesItsPart) {
  plan::PlanRequest off;
  off.stream_k = 1;
  plan::PlanRequest on;
  on.stream_k = 2;
  const std::int64_t kShapes[][3] = {{8192, 2112, 7168},
                                     {128, 4096, 4096},
                                     {1024, 4096, 4096},
                                     {512, 11008, 4096},
                                     {4096, 4096, 4096}};
  for (const auto& m : kShapes) {
    SCOPED_TRACE(testing::Message() << m[0] << " x " << m[1] << " x " << m[2]);
    // Off: the wave model's configuration, cluster 2 where there are rows to pair.
    const plan::GemmChoice dp = plan::choose_plan(m[0], m[1], m[2], 132, off);
    EXPECT_FALSE(dp.split);
    EXPECT_EQ(dp.config, plan::choose_config(m[0], m[1], 132));
    EXPECT_EQ(dp.cluster_m, m[0] > 128 ? 2 : 1);
    // On: 128 x 128 tiles unless the configuration is given; clusters as for stream-K.
    plan::GemmChoice c = plan::choose_plan(m[0], m[1], m[2], 132, on);
    EXPECT_TRUE(c.split);
    EXPECT_EQ(c.config, 1);
    EXPECT_EQ(c.cluster_m, m[0] > 128 ? 2 : 1);
    plan::PlanRequest fixed = on;
    fixed.config = 0;
    fixed.cluster_m = 1;
    c = plan::choose_plan(m[0], m[1], m[2], 132, fixed);
    EXPECT_TRUE(c.split);
    EXPECT_EQ(c.config, 0);
    EXPECT_EQ(c.cluster_m, 1);
    fixed.cluster_m = 2;
    EXPECT_EQ(plan::choose_plan(m[0], m[1], m[2], 132, fixed).cluster_m, 2);
    // The ordinary path: no multicast, clusters of 1.
    plan::PlanRequest ordinary;
    ordinary.may_cluster = false;
    EXPECT_EQ(plan::choose_plan(m[0], m[1], m[2], 132, ordinary).cluster_m, 1);
  }
}

TEST(GemmStreamK, WorkspaceLayout) {
  // Per CTA: 132 CTAs, whether 132 clusters of 1 or 66 of 2.
  EXPECT_EQ(sk::workspace_flag_bytes(132), 2304u);  // 2 x 8 B x 132 = 2112, padded to 256 B
  EXPECT_EQ(sk::workspace_bytes(132, 128, 256), 2304u + 132u * 128u * 256u * 4u);
  EXPECT_EQ(sk::workspace_flag_bytes(1), 256u);
}

TEST(GemmStreamK, FlagEpochsAreDistinct) {
  // splitmix64's first output for seed 0 (its reference implementation), then no repeat over a
  // run of consecutive launch numbers, wrapping around 2^64 included.
  EXPECT_EQ(sk::flag_epoch(0), 0xE220A8397B1DCDAFull);
  std::vector<std::uint64_t> seen;
  for (std::uint64_t n = 0; n < 100000; ++n)
    seen.push_back(sk::flag_epoch(n - 50000));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
}

// ---- argument checks ------------------------------------------------------------------------

void* at(std::uintptr_t a) {
  return reinterpret_cast<void*>(a);
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// A valid 128 x 256 x 64 bf16 problem at fake, far-apart addresses.
ops::GemmArgs valid_args() {
  ops::GemmArgs g;
  g.m = 128;
  g.n = 256;
  g.k = 64;
  g.a = at(0x1000000);
  g.lda = 64;
  g.b = at(0x2000000);
  g.ldb = 256;
  g.d = at(0x3000000);
  g.ldd = 256;
  return g;
}

TEST(GemmArgs, RejectsZeroExtent) {
  auto g = valid_args();
  g.k = 0;
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: k = 0 is not >= 1: every GEMM extent must be >= 1; skip the call for "
            "an empty product");
}

TEST(GemmArgs, RejectsFloat32Inputs) {
  auto g = valid_args();
  g.a_dtype = DataType::kFloat32;
  g.b_dtype = DataType::kFloat32;
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: a_dtype = float32 is not supported: A and B must be bfloat16 or "
            "float16 (wgmma's 16-bit inputs with fp32 accumulation); convert A first");
}

TEST(GemmArgs, RejectsMixedInputTypes) {
  auto g = valid_args();
  g.b_dtype = DataType::kFloat16;
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: b_dtype = float16 but a_dtype = bfloat16: A and B must have the same "
            "type; convert one of them");
}

TEST(GemmArgs, RejectsUnsupportedOutput) {
  auto g = valid_args();
  g.d_dtype = DataType::kUInt8;
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: d_dtype = uint8 is not supported: D must be bfloat16, float16 or "
            "float32");
}

TEST(GemmArgs, RejectsMisalignedPointer) {
  auto g = valid_args();
  g.b = at(0x2000008);
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: b = 0x2000008 is not 16-byte aligned (TMA's rule for the global "
            "address): use an aligned allocation or offset");
}

TEST(GemmArgs, RejectsLeadingDimensionNotMultipleOf16Bytes) {
  auto g = valid_args();
  g.k = 1001;
  g.lda = 1001;
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: lda = 1001 elements x 2 B = 2002 B is not a multiple of 16 B (TMA's "
            "rule for row strides): pad the leading dimension to a multiple of 8 elements, e.g. "
            "1008");
}

TEST(GemmArgs, RejectsTooSmallLeadingDimension) {
  auto g = valid_args();
  g.a_layout = ops::MatrixLayout::kColMajor;  // column-major A needs lda >= m = 128
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: lda = 64 is smaller than m = 128 (A is column-major m x k): lda must "
            "be >= 128");
}

TEST(GemmArgs, RejectsFloat32OutputPitch) {
  auto g = valid_args();
  g.n = 250;
  g.ldd = 250;
  g.d_dtype = DataType::kFloat32;
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: ldd = 250 elements x 4 B = 1000 B is not a multiple of 16 B (TMA's "
            "rule for row strides): pad the leading dimension to a multiple of 4 elements, e.g. "
            "252");
}

TEST(GemmArgs, RejectsOutputAliasingInput) {
  auto g = valid_args();
  g.d = at(0x1000000 + 64);  // inside A
  const std::string e = error_of([&] { ops::gemm(g); });
  EXPECT_NE(e.find("overlaps a ["), std::string::npos) << e;
  EXPECT_NE(e.find("D must not alias A"), std::string::npos) << e;
}

TEST(GemmArgs, RejectsMissingC) {
  auto g = valid_args();
  g.beta = 0.5f;
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: c is null but beta = 0.5: pass C (m x n, row-major) or set beta = 0");
}

TEST(GemmArgs, RejectsCOfAnotherType) {
  auto g = valid_args();
  g.beta = 1.0f;
  g.c = at(0x4000000);
  g.ldc = 256;
  g.c_dtype = DataType::kFloat32;
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: c_dtype = float32 but d_dtype = bfloat16 (beta = 1): C must have D's "
            "type; convert C or set beta = 0");
}

TEST(GemmArgs, RejectsPartialOverlapOfCAndD) {
  auto g = valid_args();
  g.beta = 1.0f;
  g.c = at(0x3000000 + 512);  // D shifted by a row: overlapping, not the same matrix
  g.ldc = 256;
  const std::string e = error_of([&] { ops::gemm(g); });
  EXPECT_NE(e.find("without being the same matrix"), std::string::npos) << e;
}

// ---- The GPC-aware worker order (gemm_order.hpp) ----

namespace gemm = ops::detail::gemm;

// An H100 SXM as l2_merge printed it (sessions 17-23): seven GPCs, and 16 SMs that no cluster of
// 16 reached (0, 1, 16, 17, 32, 33, 48, 49, 124-131), -1.
std::vector<int> h100_gpc_of_sm() {
  // GPC g (1 .. 7): SMs 2g + 16t and the next (t = 0 .. 3), 62 + 2g + 14t and the next
  // (t = 0 .. 3); GPCs 6 and 7 also 120-121 and 122-123 (18 SMs).
  std::vector<int> gpc(132, -1);
  for (int g = 1; g <= 7; ++g)
    for (int t = 0; t < 4; ++t) {
      for (const int s : {2 * g + 16 * t, 62 + 2 * g + 14 * t})
        gpc[s] = gpc[s + 1] = g;
    }
  gpc[120] = gpc[121] = 6;
  gpc[122] = gpc[123] = 7;
  return gpc;
}

// CTAs of clusters of 16 drawn from each GPC of `gpc` (none from its loose SMs, -1).
std::vector<int> clusters_of_16(const std::vector<int>& gpc, std::mt19937& rng, int per_gpc) {
  std::vector<int> out;
  for (int g = 0; g < 16; ++g) {
    std::vector<int> members;
    for (int s = 0; s < static_cast<int>(gpc.size()); ++s)
      if (gpc[s] == g) members.push_back(s);
    if (members.size() < 16) continue;
    for (int c = 0; c < per_gpc; ++c) {
      std::shuffle(members.begin(), members.end(), rng);
      out.insert(out.end(), members.begin(), members.begin() + 16);
    }
  }
  return out;
}

TEST(GemmOrder, SmGroupsFindTheGpcsOfClusters) {
  const std::vector<int> gpc = h100_gpc_of_sm();
  std::map<int, int> sizes;
  for (int g : gpc)
    ++sizes[g];
  // The layout above is the one l2_merge printed: 5 GPCs of 16, 2 of 18, 16 loose SMs.
  EXPECT_EQ(sizes[-1], 16);
  for (int g = 1; g <= 5; ++g)
    EXPECT_EQ(sizes[g], 16) << g;
  EXPECT_EQ(sizes[6], 18);
  EXPECT_EQ(sizes[7], 18);
  std::mt19937 rng(24);
  const std::vector<int> found = gemm::sm_groups(clusters_of_16(gpc, rng, 8), 16, 132);
  ASSERT_EQ(found.size(), 132u);
  // The same partition, renumbered in order of each group's lowest SM; loose SMs -1.
  std::map<int, int> relabel;
  for (int s = 0; s < 132; ++s) {
    if (gpc[s] < 0) {
      EXPECT_EQ(found[s], -1) << "SM " << s;
      continue;
    }
    const auto [at, fresh] = relabel.emplace(gpc[s], found[s]);
    EXPECT_EQ(at->second, found[s]) << "SM " << s;
    if (fresh) {
      EXPECT_EQ(found[s], static_cast<int>(relabel.size()) - 1) << "SM " << s;
    }
  }
  EXPECT_EQ(relabel.size(), 7u);
  // Groups of fewer than kMinGroupSms SMs are loose: two clusters of 2 joining SMs 0-2.
  const std::vector<int> small = gemm::sm_groups({0, 1, 1, 2}, 2, 8);
  EXPECT_EQ(small, std::vector<int>(8, -1));
  EXPECT_EQ(gemm::sm_groups({0, 1, 2, 3}, 4, 8), (std::vector<int>{0, 0, 0, 0, -1, -1, -1, -1}));
  // Bad input: an SM out of range, a partial cluster.
  EXPECT_TRUE(gemm::sm_groups({0, 8}, 2, 8).empty());
  EXPECT_TRUE(gemm::sm_groups({0, -1}, 2, 8).empty());
  EXPECT_TRUE(gemm::sm_groups({0, 1, 2}, 2, 8).empty());
}

TEST(GemmOrder, ClusterGroupsAcceptOnlyAOneWavePlacement) {
  const std::vector<int> group = {0, 0, 1, 1, -1, -1, 0, 0};
  EXPECT_EQ(gemm::cluster_groups({0, 1, 2, 3, 4, 5, 6, 7}, 2, group),
            (std::vector<int>{0, 1, -1, 0}));
  EXPECT_EQ(gemm::cluster_groups({6, 7, 0, 1}, 2, group), (std::vector<int>{0, 0}));
  EXPECT_EQ(gemm::cluster_groups({2, 3, 4}, 1, group), (std::vector<int>{1, 1, -1}));
  EXPECT_TRUE(gemm::cluster_groups({0, 1, 1, 0}, 2, group).empty());  // an SM twice
  EXPECT_TRUE(gemm::cluster_groups({1, 2}, 2, group).empty());        // a cluster in two GPCs
  EXPECT_TRUE(gemm::cluster_groups({0, 4}, 2, group).empty());        // one GPC, one loose
  EXPECT_TRUE(gemm::cluster_groups({0, 9}, 2, group).empty());        // an SM out of range
  EXPECT_TRUE(gemm::cluster_groups({0, 1, 2}, 2, group).empty());     // a partial cluster
  EXPECT_TRUE(gemm::cluster_groups({}, 2, group).empty());
}

// perm is a permutation of 0 .. size - 1.
void expect_bijection(const std::vector<int>& perm, const std::string& what) {
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    ASSERT_EQ(sorted[i], static_cast<int>(i)) << what;
}

TEST(GemmOrder, H100PlacementGivesEachGpcOneResidueClass) {
  // The H100's 66 clusters of 2 (one per TPC, sessions 17-23: both CTAs of a cluster on one TPC)
  // in a shuffled order, with a raster group of 8 rows: every GPC (the loose SMs as one more)
  // holds 8 or 9 clusters, and takes a class of its own.
  const std::vector<int> gpc = h100_gpc_of_sm();
  std::mt19937 rng(7);
  const std::vector<int> groups = gemm::sm_groups(clusters_of_16(gpc, rng, 8), 16, 132);
  std::vector<int> tpcs(66);
  std::iota(tpcs.begin(), tpcs.end(), 0);
  std::shuffle(tpcs.begin(), tpcs.end(), rng);
  std::vector<int> sm_of_cta;
  for (int t : tpcs) {
    sm_of_cta.push_back(2 * t);
    sm_of_cta.push_back(2 * t + 1);
  }
  const std::vector<int> cluster_group = gemm::cluster_groups(sm_of_cta, 2, groups);
  ASSERT_EQ(cluster_group.size(), 66u);
  const std::vector<int> perm = gemm::gpc_worker_order(cluster_group, 8);
  ASSERT_EQ(perm.size(), 66u);
  expect_bijection(perm, "H100");
  std::map<int, std::set<int>> residues;
  std::map<int, int> count;
  for (int c = 0; c < 66; ++c) {
    residues[cluster_group[c]].insert(perm[c] % 8);
    ++count[cluster_group[c]];
  }
  ASSERT_EQ(residues.size(), 8u);
  std::set<int> classes;
  for (const auto& [g, r] : residues) {
    EXPECT_EQ(r.size(), 1u) << "GPC " << g << " spans " << r.size() << " residue classes";
    classes.insert(*r.begin());
    // The two GPCs of 9 clusters hold the two classes of 9 workers (0 and 1 of 66 = 8 x 8 + 2).
    if (count[g] == 9) {
      EXPECT_LT(*r.begin(), 2) << "GPC " << g;
    }
  }
  EXPECT_EQ(classes.size(), 8u);
  // Workers are given in increasing order to the clusters of a group in increasing order.
  for (const auto& [g, r] : residues) {
    int last = -1;
    for (int c = 0; c < 66; ++c)
      if (cluster_group[c] == g) {
        EXPECT_GT(perm[c], last) << "GPC " << g;
        last = perm[c];
      }
  }
}

TEST(GemmOrder, WorkerOrderIsAlwaysABijection) {
  std::mt19937 rng(2411);
  for (int trial = 0; trial < 3000; ++trial) {
    const int workers = 1 + static_cast<int>(rng() % gemm::kWorkerMap);
    const int groups = 1 + static_cast<int>(rng() % 12);
    const int classes = static_cast<int>(rng() % 20);
    std::vector<int> cluster_group(static_cast<std::size_t>(workers));
    for (int& g : cluster_group)
      g = static_cast<int>(rng() % (groups + 1)) - 1;  // -1: loose
    const std::vector<int> perm = gemm::gpc_worker_order(cluster_group, classes);
    ASSERT_EQ(perm.size(), cluster_group.size());
    expect_bijection(perm, "trial " + std::to_string(trial) + ": " + std::to_string(workers) +
                               " workers, " + std::to_string(classes) + " classes");
    if (classes < 2 || workers < 2) {
      for (int c = 0; c < workers; ++c)
        EXPECT_EQ(perm[c], c);
      continue;
    }
    // A group strictly larger than every other one, and no larger than the smallest class, is
    // the first to choose: it lies in one class.
    std::map<int, int> count;
    for (int g : cluster_group)
      ++count[g];
    int largest = 0, size = 0, second = 0;
    for (const auto& [g, n] : count) {
      if (n > size) {
        second = size;
        largest = g, size = n;
      } else {
        second = std::max(second, n);
      }
    }
    const int used = std::min(classes, workers);
    if (size > second && size <= workers / used) {
      std::set<int> r;
      for (int c = 0; c < workers; ++c)
        if (cluster_group[c] == largest) r.insert(perm[c] % used);
      EXPECT_EQ(r.size(), 1u) << "trial " << trial;
    }
  }
  // The identity when there is nothing to gain.
  EXPECT_EQ(gemm::gpc_worker_order({3, 3, 1}, 1), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(gemm::gpc_worker_order({5}, 8), (std::vector<int>{0}));
  EXPECT_TRUE(gemm::gpc_worker_order({}, 8).empty());
  // Two GPCs of two clusters, classes of 2: each GPC gets one class.
  EXPECT_EQ(gemm::gpc_worker_order({0, 1, 0, 1}, 2), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(gemm::gpc_worker_order({0, 0, 1, 1}, 2), (std::vector<int>{0, 2, 1, 3}));
  // A GPC larger than its class: the extra cluster takes the worker nobody claimed.
  EXPECT_EQ(gemm::gpc_worker_order({0, 0, 0, 1}, 2), (std::vector<int>{0, 2, 3, 1}));
  std::array<std::uint8_t, gemm::kWorkerMap> id{};
  gemm::identity_order(id.data());
  for (int i = 0; i < gemm::kWorkerMap; ++i)
    EXPECT_EQ(id[i], i);
}

TEST(GemmArgs, RejectsBadTuning) {
  auto g = valid_args();
  ops::GemmTuning t;
  t.config = ops::kNumGemmConfigs;
  EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kTma, t); }),
            "tma::ops::gemm: tuning.config = 11 is outside -1..10 (kGemmConfigs): use -1 to let "
            "gemm() choose");
  // A row-box width (224: not a multiple of the 64-column atoms) with a row-major B.
  t.config = 4;
  g.b_layout = ops::MatrixLayout::kRowMajor;
  g.ldb = g.n;
  EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kTma, t); }),
            "tma::ops::gemm: tuning.config = 4 (128 x 224 tiles) needs B column-major (K-major "
            "tiles: block_n is not a multiple of the 64-column atoms a row-major B is loaded in); "
            "use another configuration or -1");
  g = valid_args();
  t = {};
  t.cluster_m = 2;
  EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kOrdinary, t); }),
            "tma::ops::gemm: tuning.cluster_m = 2 needs Path::kTma: the ordinary path has no "
            "multicast; use cluster_m = 0 or 1");
  t.cluster_m = 3;
  EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kTma, t); }),
            "tma::ops::gemm: tuning.cluster_m = 3 is not 0 (choose), 1, 2 or 4: the kernel "
            "multicasts B within clusters of 1, 2 or 4 CTAs along M");
  // (Clusters of 4 take every width since session 28: 176 / 240 / 144 with overlapping B shares,
  // ClustersOfFourTakeWidthsThatSplitBFourWays.)
  g = valid_args();
  // A wide ping-pong configuration (128 x 176, a row-box width: B column-major) on the ordinary
  // path: no kernel there.
  t = {};
  t.config = 7;
  g.b_layout = ops::MatrixLayout::kColMajor;
  ASSERT_TRUE(ops::gemm_config_tma_only(ops::kGemmConfigs[7]));
  EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kOrdinary, t); }),
            "tma::ops::gemm: tuning.config = 7 (128 x 176 ping-pong tiles) needs Path::kTma: the "
            "ordinary path has no kernel for it (its epilogue does not fit the registers left "
            "next to 176 accumulators); use another configuration or -1");
}

TEST(GemmArgs, RejectsSwappedOperandsOutsideTheirProducts) {
  for (int config = 0; config < ops::kNumGemmConfigs; ++config) {
    if (!ops::kGemmConfigs[config].swap_ab) continue;
    SCOPED_TRACE(config);
    const std::string head = "tma::ops::gemm: tuning.config = " + std::to_string(config) +
                             " (256 x 64 tiles with swapped operands) runs only with A row-major, "
                             "B column-major, D in the inputs' type, alpha = 1, beta = 0, "
                             "data-parallel tiles and Path::kTma; this call lacks ";
    const std::string tail = ": use another configuration or -1";
    ops::GemmTuning t;
    t.config = config;
    // valid_args: A and B row-major, bf16 -> bf16, alpha 1, beta 0.
    auto g = valid_args();
    EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kTma, t); }),
              head + "B column-major (B is row-major)" + tail);
    g.b_layout = ops::MatrixLayout::kColMajor;
    g.ldb = g.k;
    g.a_layout = ops::MatrixLayout::kColMajor;
    g.lda = g.m;
    EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kTma, t); }),
              head + "A row-major (A is column-major)" + tail);
    g = valid_args();
    g.b_layout = ops::MatrixLayout::kColMajor;
    g.ldb = g.k;
    g.d_dtype = DataType::kFloat32;
    g.c = at(0x4000000);
    g.c_dtype = DataType::kFloat32;
    g.ldc = g.n;
    g.alpha = 2.0f;
    g.beta = 0.5f;
    t.stream_k = 2;
    EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kOrdinary, t); }),
              head +
                  "D in the inputs' type, alpha = 1 (alpha = 2), beta = 0 (beta = 0.5), no split "
                  "(tuning.stream_k = 2), Path::kTma" +
                  tail);
  }
}

TEST(GemmArgs, RejectsBadStreamKTuning) {
  auto g = valid_args();
  ops::GemmTuning t;
  t.stream_k = 3;
  EXPECT_EQ(error_of([&] { ops::gemm_tuned(g, nullptr, ops::Path::kTma, t); }),
            "tma::ops::gemm: tuning.stream_k = 3 is not 0 (choose), 1 (off: data-parallel tiles) "
            "or 2 (on: split the last waves along K)");
}

TEST(GemmArgs, CandidatesCheckTheirArgumentsLikeGemm) {
  // gemm_candidates refuses a list of no plans, and bad arguments with gemm's own message, before
  // it looks at the device (these run without a GPU).
  auto g = valid_args();
  EXPECT_EQ(error_of([&] { (void)ops::gemm_candidates(g, ops::Path::kTma, 0); }),
            "tma::ops::gemm_candidates: max_count = 0 asks for no plan: pass 1 or more (tma-bench "
            "times 8)");
  g.k = 0;
  EXPECT_EQ(error_of([&] { (void)ops::gemm_candidates(g); }), error_of([&] { ops::gemm(g); }));
  EXPECT_NE(error_of([&] { ops::gemm(g); }), "no error");
}

TEST(GemmArgs, RejectsInconsistentWorkspace) {
  auto g = valid_args();
  g.workspace = at(0x5000000);
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: workspace = 0x5000000 with workspace_bytes = 0: pass both (a buffer "
            "of at least gemm_workspace_bytes() bytes) or neither (gemm allocates one "
            "stream-ordered when it splits)");
  g.workspace_bytes = 4096;
  g.workspace = at(0x5000004);
  EXPECT_EQ(error_of([&] { ops::gemm(g); }),
            "tma::ops::gemm: workspace = 0x5000004 is not 16-byte aligned (the partial tiles are "
            "stored as float4): use an aligned allocation or offset");
  g.workspace = at(0x3000000 - 1024);  // runs into D
  const std::string e = error_of([&] { ops::gemm_workspace_bytes(g); });
  EXPECT_NE(e.find("workspace [0x2fffc00, 0x3000c00) overlaps d [0x3000000"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace tma
