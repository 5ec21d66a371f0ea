// Interleaved tiled maps (INTERLEAVE_16B / 32B) in the reference model, pinned to what the H200 did
// (tests/gpu/probes.txt group D2, docs/hardware-findings.md finding 12):
//   * dimension 0 counts whole interleave chunks: chunk i0 is global bytes [i0 * C, + C) plus the
//     outer strides, whatever the element size; dims[0], box[0], element_strides[0] and
//     coords[0] count chunks;
//   * dimension rank - 2 is not traversed (one step, at its coordinate, bounds-checked);
//   * the image is the chunks in traversal order, dense (no padding to the swizzle span), swizzled;
//   * transaction_bytes() = the image's bytes;
//   * stores and reduces take the same walk and write every in-bounds chunk from its place in the
//     image (probes D2 line 83, D3 lines 111-113, and the 1,294 interleaved mismatch records of a
//     gpu_store --interleave 0.3 run, tests/gpu/replay/store_replay.cpp).
// Global buffers are "tagged": the 16-bit halfword at byte o holds o / 2, so every image chunk
// names the global bytes it came from, as gpu_probe's data=tagged dumps do. Store images are
// tagged the same way (0xC000 | o / 2), so every stored chunk names the image bytes it came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "test_model_util.hpp"
#include "tma/model/model.hpp"

namespace tma::model {
namespace {

using testing::filled;
using testing::get;
using testing::put;

constexpr std::int64_t kZero = -1;    // the chunk is zero fill
constexpr std::int64_t kNan = -2;     // the chunk is the OOB-NaN fill (0x7FF7 halfwords)
constexpr std::int64_t kPoison = -3;  // the chunk was not written

// An interleaved tiled spec: dims / box / element strides innermost first (dimension 0 in chunks),
// strides in bytes for dimensions 1.. .
TensorMapSpec interleaved(DataType t, Interleave il, std::vector<std::uint64_t> dims,
                          std::vector<std::uint32_t> box, std::vector<std::uint64_t> strides,
                          Swizzle swz = Swizzle::kNone) {
  TensorMapSpec s;
  s.mode = Mode::kTiled;
  s.dtype = t;
  s.interleave = il;
  s.swizzle = swz;
  s.rank = static_cast<int>(dims.size());
  s.strides_bytes_inner_first[0] = static_cast<std::uint64_t>(element_bytes(t));
  for (std::size_t d = 0; d < dims.size(); ++d) {
    s.dims_inner_first[d] = dims[d];
    s.box_inner_first[d] = box[d];
    if (d > 0) s.strides_bytes_inner_first[d] = strides[d - 1];
  }
  return s;
}

// A global buffer of the spec's footprint whose halfword at byte o holds o / 2.
std::vector<std::byte> tagged_global(const TensorMapSpec& s) {
  std::vector<std::byte> g(global_footprint_bytes(s));
  for (std::size_t o = 0; o + 1 < g.size(); o += 2)
    put<std::uint16_t>(g, o, static_cast<std::uint16_t>(o / 2));
  return g;
}

// What the 16 bytes at `at` hold: the global offset their tags name (a contiguous run), or
// kZero / kNan / kPoison, or -100 for anything else.
std::int64_t chunk_source(const std::vector<std::byte>& smem, std::size_t at) {
  bool zero = true, nan = true, poison = true, run = true;
  const std::uint16_t first = get<std::uint16_t>(smem, at);
  for (std::size_t i = 0; i < 16; i += 2) {
    const std::uint16_t h = get<std::uint16_t>(smem, at + i);
    zero = zero && h == 0;
    nan = nan && h == 0x7FF7;
    poison = poison && h == 0xA5A5;
    run = run && h == first + i / 2;
  }
  if (zero) return kZero;
  if (nan) return kNan;
  if (poison) return kPoison;
  return run ? 2 * static_cast<std::int64_t>(first) : -100;
}

// `n` 16-byte image chunks from `smem_at`, holding global bytes from `g_at` in steps of `step`
// (or a fill: g_at = kZero / kNan / kPoison).
struct Run {
  std::size_t smem_at;
  std::int64_t g_at;
  int n;
  std::int64_t step = 16;
};

void expect_image(const std::vector<std::byte>& smem, const std::vector<Run>& runs) {
  std::size_t covered = 0;
  for (const Run& r : runs) {
    for (int i = 0; i < r.n; ++i) {
      const std::size_t at = r.smem_at + 16 * static_cast<std::size_t>(i);
      const std::int64_t want = r.g_at < 0 ? r.g_at : r.g_at + r.step * i;
      EXPECT_EQ(chunk_source(smem, at), want) << "image chunk at byte " << at;
    }
    covered += 16 * static_cast<std::size_t>(r.n);
  }
  EXPECT_EQ(covered, smem.size()) << "the runs should cover the whole image";
}

std::vector<std::byte> load(const TensorMapSpec& s, std::vector<std::int32_t> coords) {
  const auto g = tagged_global(s);
  std::vector<std::byte> smem = filled(smem_bytes(s), 0xA5);
  load_box(s, g, coords, smem);
  return smem;
}

TEST(ModelInterleave, Dim0CountsChunksAndDim1IsNotTraversedAtRank3) {
  // probes.txt line 37: bf16 dims {8,16,4} box {8,4,2}, rows 16 B apart, slices 256 B. The
  // hardware moved 8 chunks (dims[0] = 8 chunks of 16 B, not 8 elements) per slice: box[1] = 4
  // did nothing. 256 B in all, where 8 x 4 x 2 elements x 2 B would be 128.
  const TensorMapSpec s =
      interleaved(DataType::kBFloat16, Interleave::k16B, {8, 16, 4}, {8, 4, 2}, {16, 256});
  EXPECT_EQ(box_extent(s, 1), 4u);  // the documented count, which the driver checks
  EXPECT_EQ(traversed_extent(s, 0), 8u);
  EXPECT_EQ(traversed_extent(s, 1), 1u);
  EXPECT_EQ(traversed_extent(s, 2), 2u);
  EXPECT_EQ(transaction_bytes(s), 256u);
  EXPECT_EQ(smem_bytes(s), 256u);
  EXPECT_EQ(global_footprint_bytes(s), 8u * 16 + 15 * 16 + 3 * 256);
  expect_image(load(s, {0, 0, 0}), {{0, 0, 8}, {128, 256, 8}});
  // Line 38: coordinate 1 still moves the start (4 x 16 B); coordinate 2 selects slices 1, 2.
  expect_image(load(s, {0, 4, 1}), {{0, 320, 8}, {128, 576, 8}});
  // Line 64: chunks run on past the end of dimension 1 (only dims[0] bounds them).
  expect_image(load(s, {0, 14, 0}), {{0, 224, 8}, {128, 480, 8}});
  // Line 65: dimension 1's coordinate is bounds-checked: -2 is outside, everything is zero.
  expect_image(load(s, {0, -2, 0}), {{0, kZero, 16}});
  // Line 66: slice 3 is inside, slice 4 outside.
  expect_image(load(s, {0, 0, 3}), {{0, 768, 8}, {128, kZero, 8}});
  // Line 44: box {8,2,4}: 4 slices of 8 chunks, box[1] = 2 ignored as well.
  TensorMapSpec four = s;
  four.dims_inner_first[2] = 8;
  four.box_inner_first = {8, 2, 4, 0, 0};
  expect_image(load(four, {0, 0, 0}), {{0, 0, 8}, {128, 256, 8}, {256, 512, 8}, {384, 768, 8}});
}

TEST(ModelInterleave, ElementSizeDoesNotChangeTheChunks) {
  // Lines 39, 41, 42: the same byte geometry in float32, uint8 and float64: box[0] chunks per
  // slice (4, 16, 2), whatever the element size.
  const TensorMapSpec f32 =
      interleaved(DataType::kFloat32, Interleave::k16B, {4, 16, 4}, {4, 4, 2}, {16, 256});
  expect_image(load(f32, {0, 0, 0}), {{0, 0, 4}, {64, 256, 4}});
  const TensorMapSpec u8 =
      interleaved(DataType::kUInt8, Interleave::k16B, {16, 16, 4}, {16, 4, 2}, {16, 256});
  EXPECT_EQ(transaction_bytes(u8), 512u);
  expect_image(load(u8, {0, 0, 0}), {{0, 0, 32}});
  const TensorMapSpec f64 =
      interleaved(DataType::kFloat64, Interleave::k16B, {2, 16, 4}, {2, 4, 2}, {16, 256});
  EXPECT_EQ(transaction_bytes(f64), 64u);  // fewer than 2 x 4 x 2 x 8 B = 128: the H200 timed out
  expect_image(load(f64, {0, 0, 0}), {{0, 0, 2}, {32, 256, 2}});
}

TEST(ModelInterleave, Dim0BoundsStartsAndStridesCountChunks) {
  // Line 48: box[0] = 16 chunks over dims[0] = 8: chunks 8..15 are zero filled.
  const TensorMapSpec wide =
      interleaved(DataType::kBFloat16, Interleave::k16B, {8, 16, 4}, {16, 4, 2}, {16, 256});
  expect_image(load(wide, {0, 0, 0}), {{0, 0, 8}, {128, kZero, 8}, {256, 256, 8}, {384, kZero, 8}});
  // Lines 49, 62, 63: dims[0] = 16 chunks with rows 32 B apart: chunks follow 16 B apart, not the
  // row stride; coords[0] = 8 starts 128 B in; -8 is wholly outside.
  const TensorMapSpec s =
      interleaved(DataType::kBFloat16, Interleave::k16B, {16, 16, 4}, {8, 4, 2}, {32, 512});
  expect_image(load(s, {0, 0, 0}), {{0, 0, 8}, {128, 512, 8}});
  expect_image(load(s, {8, 0, 0}), {{0, 128, 8}, {128, 640, 8}});
  expect_image(load(s, {-8, 0, 0}), {{0, kZero, 16}});
  // HYPOTHESIS (probes D3c): a start that is not a 16 B multiple as elements is a chunk index
  // like any other (without interleave the hardware faults on it, and the model rejects it).
  expect_image(load(s, {1, 0, 0}), {{0, 16, 8}, {128, 528, 8}});
  // Line 57: element_strides[0] = 2 takes every other chunk, ceil(8 / 2) = 4 of them.
  TensorMapSpec strided =
      interleaved(DataType::kBFloat16, Interleave::k16B, {8, 16, 4}, {8, 4, 2}, {16, 256});
  strided.element_strides_inner_first[0] = 2;
  expect_image(load(strided, {0, 0, 0}), {{0, 0, 4, 32}, {64, 256, 4, 32}});
  // Line 58: element_strides[1] = 2 changes nothing (dimension 1 is not traversed).
  strided.element_strides_inner_first = {1, 2, 1, 1, 1};
  expect_image(load(strided, {0, 0, 0}), {{0, 0, 8}, {128, 256, 8}});
}

TEST(ModelInterleave, Rank4SkipsDimension2) {
  // Line 45: bf16 dims {8,8,4,3} box {8,2,3,2} strides {16,128,512}: 8 chunks x 2 steps of
  // dimension 1 (16 B) x 2 of dimension 3 (512 B); box[2] = 3 did nothing.
  const TensorMapSpec s = interleaved(DataType::kBFloat16, Interleave::k16B, {8, 8, 4, 3},
                                      {8, 2, 3, 2}, {16, 128, 512});
  EXPECT_EQ(traversed_extent(s, 1), 2u);
  EXPECT_EQ(traversed_extent(s, 2), 1u);
  EXPECT_EQ(transaction_bytes(s), 512u);
  expect_image(load(s, {0, 0, 0, 0}), {{0, 0, 8}, {128, 16, 8}, {256, 512, 8}, {384, 528, 8}});
  // Line 46: the same in float32 (4 chunks per step).
  const TensorMapSpec f =
      interleaved(DataType::kFloat32, Interleave::k16B, {4, 8, 4, 3}, {4, 2, 3, 2}, {16, 128, 512});
  expect_image(load(f, {0, 0, 0, 0}), {{0, 0, 4}, {64, 16, 4}, {128, 512, 4}, {192, 528, 4}});
}

TEST(ModelInterleave, ChunksAreDenseUnderEverySwizzle) {
  // Line 78: 16 B chunks under SWIZZLE_32B start 16 B apart (no padding to the 32 B span); the
  // second 128 B swaps the 16 B halves of every 32 B.
  const TensorMapSpec s32 = interleaved(DataType::kBFloat16, Interleave::k16B, {8, 16, 4},
                                        {8, 4, 2}, {16, 256}, Swizzle::k32B);
  EXPECT_EQ(smem_bytes(s32), 256u);
  expect_image(load(s32, {0, 0, 0}), {{0, 0, 8},
                                      {128, 272, 1},
                                      {144, 256, 1},
                                      {160, 304, 1},
                                      {176, 288, 1},
                                      {192, 336, 1},
                                      {208, 320, 1},
                                      {224, 368, 1},
                                      {240, 352, 1}});
  // Line 79: SWIZZLE_128B, box[1] = 8 ignored: 256 B, the second 128 B row XORs chunk index 1.
  TensorMapSpec s128 = s32;
  s128.swizzle = Swizzle::k128B;
  s128.box_inner_first[1] = 8;
  const auto img = load(s128, {0, 0, 0});
  ASSERT_EQ(img.size(), 256u);
  EXPECT_EQ(chunk_source(img, 128), 272);
  EXPECT_EQ(chunk_source(img, 144), 256);
  EXPECT_EQ(chunk_source(img, 240), 352);
  // Line 71: INTERLEAVE_32B + SWIZZLE_32B, dims[0] = 16 chunks of 32 B, box[0] = 8: 256 B per
  // slice.
  const TensorMapSpec il32 = interleaved(DataType::kBFloat16, Interleave::k32B, {16, 16, 4},
                                         {8, 4, 2}, {32, 512}, Swizzle::k32B);
  EXPECT_EQ(transaction_bytes(il32), 512u);
  const auto img32 = load(il32, {0, 0, 0});
  ASSERT_EQ(img32.size(), 512u);
  EXPECT_EQ(chunk_source(img32, 112), 112);
  EXPECT_EQ(chunk_source(img32, 128), 144);
  EXPECT_EQ(chunk_source(img32, 144), 128);
  EXPECT_EQ(chunk_source(img32, 256), 512);
  EXPECT_EQ(chunk_source(img32, 384), 656);
  EXPECT_EQ(chunk_source(img32, 400), 640);
}

TEST(ModelInterleave, OutOfBoundsChunksTakeTheFill) {
  // A float32 chunk outside the tensor is filled element by element (0x7FF77FF7: OOB-NaN).
  TensorMapSpec s =
      interleaved(DataType::kFloat32, Interleave::k16B, {4, 16, 4}, {8, 4, 2}, {16, 256});
  s.oob_fill = OobFill::kNan;
  const auto img = load(s, {0, 0, 3});
  expect_image(img, {{0, 768, 4}, {64, kNan, 12}});
  EXPECT_EQ(get<std::uint32_t>(img, 64), 0x7FF77FF7u);
}

// A store's source image tagged like gpu_probe's data=tagged: the halfword at byte o holds
// 0xC000 | o / 2.
std::vector<std::byte> tagged_image(const TensorMapSpec& s) {
  std::vector<std::byte> smem(smem_bytes(s));
  for (std::size_t o = 0; o + 1 < smem.size(); o += 2)
    put<std::uint16_t>(smem, o, static_cast<std::uint16_t>(0xC000 | (o / 2)));
  return smem;
}

// The global buffer (0xA5 poison first) after a store of the tagged image.
std::vector<std::byte> store_tagged(const TensorMapSpec& s, std::vector<std::int32_t> coords) {
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0xA5);
  store_box(s, tagged_image(s), coords, g);
  return g;
}

// Global bytes [g_at, + bytes) hold image bytes [s_at, + bytes).
struct Stored {
  std::size_t g_at, s_at, bytes;
};

// Every global halfword is either inside one of `runs` (with the tag of its image bytes) or
// poison.
void expect_stored(const std::vector<std::byte>& g, const std::vector<Stored>& runs) {
  std::vector<std::uint16_t> want(g.size() / 2, 0xA5A5);
  for (const Stored& r : runs) {
    ASSERT_LE(r.g_at + r.bytes, g.size());
    for (std::size_t b = 0; b < r.bytes; b += 2)
      want[(r.g_at + b) / 2] = static_cast<std::uint16_t>(0xC000 | ((r.s_at + b) / 2));
  }
  for (std::size_t h = 0; h < want.size(); ++h)
    EXPECT_EQ(get<std::uint16_t>(g, 2 * h), want[h]) << "global byte " << 2 * h;
}

TEST(ModelInterleave, StoreWritesEveryChunkALoadMoves) {
  // Line 83: bf16 dims {8,16,4} box {8,4,2}: both slices, as a load moves them (an earlier run of
  // the same probe seemed to leave slice 1 unwritten; the H200 wrote it in every run since).
  const TensorMapSpec s =
      interleaved(DataType::kBFloat16, Interleave::k16B, {8, 16, 4}, {8, 4, 2}, {16, 256});
  expect_stored(store_tagged(s, {0, 0, 0}), {{0, 0, 128}, {256, 128, 128}});
  // Line 111: 4 slices 2048 B apart, box[1] = 4 not traversed: 32 chunks.
  const TensorMapSpec four =
      interleaved(DataType::kBFloat16, Interleave::k16B, {8, 16, 8}, {8, 4, 4}, {128, 2048});
  expect_stored(store_tagged(four, {0, 0, 0}),
                {{0, 0, 128}, {2048, 128, 128}, {4096, 256, 128}, {6144, 384, 128}});
  // Line 112: rank 4 float32, 4 chunks x 2 rows (64 B apart) x 2 steps of dimension 3 (1024 B);
  // box[2] = 3 not traversed.
  const TensorMapSpec r4 = interleaved(DataType::kFloat32, Interleave::k16B, {4, 4, 4, 3},
                                       {4, 2, 3, 2}, {64, 256, 1024});
  expect_stored(store_tagged(r4, {0, 0, 0, 0}), {{0, 0, 128}, {1024, 128, 128}});
  // Line 113: box[0] = 8 chunks over dims[0] = 4: chunks 4..7 are skipped; slices 1 and 2 of the
  // row at coordinate 2 (2 x 64 B in).
  const TensorMapSpec wide =
      interleaved(DataType::kFloat32, Interleave::k16B, {4, 16, 4}, {8, 4, 2}, {64, 1024});
  expect_stored(store_tagged(wide, {0, 2, 1}), {{1152, 0, 64}, {2176, 128, 64}});
  // The untraversed dimension's coordinate is bounds-checked: past its end nothing is written.
  expect_stored(store_tagged(wide, {0, 16, 1}), {});
}

TEST(ModelInterleave, StoresOfTheRandomSuite) {
  // gpu_store --interleave 0.3 (run seed 62636112603889), full-image records. Case 4653: uint16,
  // element_strides[0] = 8 over box[0] = 8 (one chunk), rows 192 B and slices 384 B apart,
  // slices 4 and 5.
  TensorMapSpec u16 =
      interleaved(DataType::kUInt16, Interleave::k16B, {8, 2, 7}, {8, 2, 2}, {192, 384});
  u16.element_strides_inner_first[0] = 8;
  expect_stored(store_tagged(u16, {0, 0, 4}), {{1536, 0, 16}, {1920, 16, 16}});
  // Case 11820: uint64, INTERLEAVE_32B + SWIZZLE_32B, one 32 B chunk per slice, the slice stride
  // (64 B) below the row stride (128 B): slices 0 and 1 at 0 and 64.
  TensorMapSpec u64 = interleaved(DataType::kUInt64, Interleave::k32B, {2, 12, 2}, {2, 12, 2},
                                  {128, 64}, Swizzle::k32B);
  u64.element_strides_inner_first[0] = 8;
  expect_stored(store_tagged(u64, {0, 0, 0}), {{0, 0, 32}, {64, 32, 32}});
}

std::vector<std::byte> from_hex(const std::string& hex) {
  std::vector<std::byte> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

TEST(ModelInterleave, ReducesWalkLikeStores) {
  // gpu_store case 5245 (the same run): reduce-min on int64, dims {2,2,12}, element_strides[0] = 6
  // (one chunk per slice), slices 1..7 at 64 B apart, each reduced with the next 16 image bytes.
  // The hardware's bytes, chunk by chunk (before -> after); everything else was left alone.
  TensorMapSpec s =
      interleaved(DataType::kInt64, Interleave::k16B, {2, 2, 12}, {2, 2, 7}, {32, 64});
  s.element_strides_inner_first[0] = 6;
  const auto image = from_hex(
      "f35594f3baf90159e1d6b1581a1cc7ebef010d1634e678aa5fd139cf12a7d8b4be5abaac9bddce5499fcbde9581f"
      "054fc2203400c24b91c479d4f2d0568cefbfbe7028e70ee6c4e6b8e722f0c7464c7b2be5893fa17183669107bb3e"
      "5ba5f345f7e578a2d7182c6eeda16876d90604a4");
  ASSERT_EQ(image.size(), smem_bytes(s));
  const char* before[] = {"b101ca9061085c7d91758a5535d0d880", "ea8af9a950aa859a93df19ae773804a7",
                          "9f892d1efca4d1845bb57c32cfa42c8a", "1b5abf2bb25bb1f8eade2b12e1893c36",
                          "b1a1b520eac581d3027f0edf90ec41b8", "95504ebc54c6397d1a89ba33f6fdba2a",
                          "2a46346c22162ccf901ceb1a779b5142"};
  const char* after[] = {"f35594f3baf9015991758a5535d0d880", "ea8af9a950aa859a93df19ae773804a7",
                         "9f892d1efca4d1845bb57c32cfa42c8a", "c2203400c24b91c479d4f2d0568cefbf",
                         "b1a1b520eac581d3027f0edf90ec41b8", "2be5893fa17183661a89ba33f6fdba2a",
                         "2a46346c22162ccfeda16876d90604a4"};
  std::vector<std::byte> g = filled(global_footprint_bytes(s), 0xA5);
  for (std::size_t k = 0; k < 7; ++k) {
    const auto b = from_hex(before[k]);
    std::copy(b.begin(), b.end(), g.begin() + static_cast<std::ptrdiff_t>(64 * (k + 1)));
  }
  std::vector<std::byte> want = g;
  for (std::size_t k = 0; k < 7; ++k) {
    const auto a = from_hex(after[k]);
    std::copy(a.begin(), a.end(), want.begin() + static_cast<std::ptrdiff_t>(64 * (k + 1)));
  }
  const std::int32_t c[] = {0, 0, 1};
  reduce_box(s, ReduceOp::kMin, image, c, g);
  EXPECT_EQ(g, want);
}

TEST(ModelInterleave, TilesWithoutInterleaveStillCheckTheStart) {
  // The chunk rule is for interleaved maps only: a plain bf16 box starting 2 B into a chunk is
  // still refused (the H200 faults on it, probes group A).
  TensorMapSpec s = testing::tiled_spec(DataType::kBFloat16, {16, 4, 2}, {8, 4, 2});
  std::vector<std::byte> g(global_footprint_bytes(s));
  std::vector<std::byte> smem(smem_bytes(s));
  const std::int32_t c[] = {1, 0, 0};
  EXPECT_THROW(load_box(s, g, c, smem), std::invalid_argument);
}

// The rule written out independently of layout.hpp: chunk number `n` of the image (mixed radix,
// dimension 0 fastest) and where it comes from.
struct NaiveChunk {
  bool in_bounds;        // a load copies it, a store or reduce writes it
  std::uint64_t global;  // first byte, when in bounds
};

NaiveChunk naive_chunk(const TensorMapSpec& s, const std::vector<std::int32_t>& c,
                       std::uint64_t n) {
  const std::uint64_t chunk = static_cast<std::uint64_t>(interleave_bytes(s.interleave));
  NaiveChunk out{true, 0};
  for (int d = 0; d < s.rank; ++d) {
    const std::uint64_t step = s.element_strides_inner_first[d];
    const std::uint64_t count =
        d == s.rank - 2 ? 1 : (s.box_inner_first[d] + step - 1) / step;  // untraversed dim
    const std::uint64_t k = n % count;
    n /= count;
    const std::int64_t i = c[static_cast<std::size_t>(d)] + static_cast<std::int64_t>(k * step);
    if (i < 0 || static_cast<std::uint64_t>(i) >= s.dims_inner_first[d]) {
      out.in_bounds = false;
    } else {
      out.global +=
          static_cast<std::uint64_t>(i) * (d == 0 ? chunk : s.strides_bytes_inner_first[d]);
    }
  }
  return out;
}

TEST(ModelInterleave, RandomSpecsMatchTheNaiveChunkRule) {
  std::mt19937 rng(1212);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const DataType types[] = {DataType::kUInt8, DataType::kBFloat16, DataType::kFloat32,
                            DataType::kFloat64};
  for (int trial = 0; trial < 600; ++trial) {
    TensorMapSpec s;
    s.mode = Mode::kTiled;
    s.dtype = types[pick(0, 3)];
    s.rank = pick(3, 5);
    s.interleave = pick(0, 1) ? Interleave::k16B : Interleave::k32B;
    const Swizzle any[] = {Swizzle::kNone, Swizzle::k32B, Swizzle::k64B, Swizzle::k128B};
    s.swizzle = s.interleave == Interleave::k32B ? Swizzle::k32B : any[pick(0, 3)];
    s.oob_fill = is_floating_point(s.dtype) && pick(0, 1) ? OobFill::kNan : OobFill::kZero;
    const std::uint64_t chunk = static_cast<std::uint64_t>(interleave_bytes(s.interleave));
    std::uint64_t stride = 0;
    for (int d = 0; d < s.rank; ++d) {
      s.dims_inner_first[d] = static_cast<std::uint64_t>(pick(1, 6));
      s.box_inner_first[d] = static_cast<std::uint32_t>(pick(1, 5));
      s.element_strides_inner_first[d] = static_cast<std::uint32_t>(pick(1, 3));
      if (d == 0) {
        s.strides_bytes_inner_first[0] = static_cast<std::uint64_t>(element_bytes(s.dtype));
        stride = s.dims_inner_first[0] * chunk + chunk * static_cast<std::uint64_t>(pick(0, 1));
      } else {
        s.strides_bytes_inner_first[d] = stride;
        stride = stride * s.dims_inner_first[d] + chunk * static_cast<std::uint64_t>(pick(0, 1));
      }
    }
    std::vector<std::int32_t> c(static_cast<std::size_t>(s.rank));
    for (int d = 0; d < s.rank; ++d)
      c[static_cast<std::size_t>(d)] = pick(-3, static_cast<int>(s.dims_inner_first[d]) + 1);
    SCOPED_TRACE(to_string(s) + " trial " + std::to_string(trial));

    const auto g =
        testing::random_bytes(global_footprint_bytes(s), static_cast<std::uint32_t>(trial));
    std::vector<std::byte> smem = filled(smem_bytes(s), 0xCD);
    load_box(s, g, c, smem);
    const std::uint64_t chunks = transaction_bytes(s) / chunk;
    ASSERT_GE(smem_bytes(s), chunks * chunk);
    const std::size_t es = element_size(s);
    std::vector<std::byte> want_global = filled(g.size(), 0x5A);
    for (std::uint64_t n = 0; n < chunks; ++n) {
      const NaiveChunk nc = naive_chunk(s, c, n);
      for (std::uint64_t b = 0; b < chunk; ++b) {
        const auto at = swizzle_offset(s.swizzle, static_cast<std::uint32_t>(n * chunk + b));
        const std::byte fill = static_cast<std::byte>((oob_fill_bits(s) >> (8 * (b % es))) & 0xFF);
        ASSERT_EQ(smem[at], nc.in_bounds ? g[nc.global + b] : fill)
            << "chunk " << n << " byte " << b;
        if (nc.in_bounds) want_global[nc.global + b] = smem[at];
      }
    }
    // Everything outside the swizzled image keeps the poison.
    std::vector<bool> image(smem.size(), false);
    for (std::uint64_t b = 0; b < chunks * chunk; ++b)
      image[swizzle_offset(s.swizzle, static_cast<std::uint32_t>(b))] = true;
    for (std::size_t b = 0; b < smem.size(); ++b) {
      if (!image[b]) {
        ASSERT_EQ(smem[b], std::byte{0xCD}) << "byte " << b;
      }
    }
    // A store of the image writes every in-bounds chunk (none alias: strides cover the chunks).
    std::vector<std::byte> stored = filled(g.size(), 0x5A);
    store_box(s, smem, c, stored);
    ASSERT_EQ(stored, want_global);
  }
}

}  // namespace
}  // namespace tma::model
