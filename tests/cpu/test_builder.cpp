// The row-major builder: the one conversion to innermost-first bytes, element types, and the
// mistakes it reports itself.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tma/host/builder.hpp"
#include "tma/host/device_support.hpp"
#include "tma/host/error.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/host/validate.hpp"

namespace tma {
namespace {

const void* addr(std::uintptr_t a) {
  return reinterpret_cast<const void*>(a);
}

static_assert(dtype_of<std::uint8_t> == DataType::kUInt8);
static_assert(dtype_of<std::int8_t> == DataType::kUInt8);  // TMA copies bytes
static_assert(dtype_of<char> == DataType::kUInt8);
static_assert(dtype_of<std::uint16_t> == DataType::kUInt16);
static_assert(dtype_of<std::int16_t> == DataType::kUInt16);
static_assert(dtype_of<std::uint32_t> == DataType::kUInt32);
static_assert(dtype_of<std::int32_t> == DataType::kInt32);
static_assert(dtype_of<std::uint64_t> == DataType::kUInt64);
static_assert(dtype_of<std::int64_t> == DataType::kInt64);
static_assert(dtype_of<long long> == DataType::kInt64);
static_assert(dtype_of<unsigned long long> == DataType::kUInt64);
static_assert(dtype_of<const float> == DataType::kFloat32);
static_assert(dtype_of<double> == DataType::kFloat64);
static_assert(dtype_of<bf16> == DataType::kBFloat16);
static_assert(dtype_of<f16> == DataType::kFloat16);
static_assert(dtype_of<tf32> == DataType::kTFloat32);
static_assert(!Element<bool>);
static_assert(!Element<long double>);
static_assert(!Element<void*>);

// The violations a builder call throws, or an empty list when it does not throw.
template <class F>
std::vector<Violation> thrown(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.driver_code(), 0);
    return e.violations();
  }
  return {};
}

TEST(Builder, Bf16MatrixRowMajorToInnerFirstBytes) {
  // torch.empty(4096, 4096, dtype=bfloat16), Triton block_shape [128, 64].
  const TensorMapSpec s = make_tiled_spec<bf16>(addr(0x10000), {4096, 4096}, {4096, 1}, {128, 64},
                                                {.swizzle = Swizzle::k128B});
  EXPECT_EQ(s.mode, Mode::kTiled);
  EXPECT_EQ(s.dtype, DataType::kBFloat16);
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.address, addr(0x10000));
  EXPECT_EQ(s.dims_inner_first, (std::array<std::uint64_t, 5>{4096, 4096, 0, 0, 0}));
  EXPECT_EQ(s.strides_bytes_inner_first, (std::array<std::uint64_t, 5>{2, 8192, 0, 0, 0}));
  EXPECT_EQ(s.box_inner_first, (std::array<std::uint32_t, 5>{64, 128, 0, 0, 0}));
  EXPECT_EQ(s.element_strides_inner_first, (std::array<std::uint32_t, 5>{1, 1, 1, 1, 1}));
  EXPECT_EQ(s.swizzle, Swizzle::k128B);
  EXPECT_TRUE(validate(s).empty());
  EXPECT_EQ(transaction_bytes(s), 128u * 64u * 2u);
}

TEST(Builder, EmptyStridesMeanContiguous) {
  const TensorMapSpec a = make_tiled_spec<bf16>(addr(0x10000), {4096, 4096}, {}, {128, 64});
  const TensorMapSpec b = make_tiled_spec<bf16>(addr(0x10000), {4096, 4096}, {4096, 1}, {128, 64});
  EXPECT_EQ(a, b);
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (std::vector<std::int64_t>{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({7}), (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(contiguous_strides({}).empty());
}

TEST(Builder, PaddedRank3FloatTensor) {
  // x = torch.empty(8, 100, 80)[:, :, :64]: shape (8, 100, 64), strides (8000, 80, 1).
  const float* base = static_cast<const float*>(addr(0x20000));
  const TensorMapSpec s = make_tiled_spec(base, {8, 100, 64}, {8000, 80, 1}, {2, 16, 32},
                                          {.l2_promotion = L2Promotion::k128B,
                                           .oob_fill = OobFill::kNan,
                                           .element_strides = {1, 2, 1}});
  EXPECT_EQ(s.dtype, DataType::kFloat32);
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.dims_inner_first, (std::array<std::uint64_t, 5>{64, 100, 8, 0, 0}));
  EXPECT_EQ(s.strides_bytes_inner_first, (std::array<std::uint64_t, 5>{4, 320, 32000, 0, 0}));
  EXPECT_EQ(s.box_inner_first, (std::array<std::uint32_t, 5>{32, 16, 2, 0, 0}));
  EXPECT_EQ(s.element_strides_inner_first, (std::array<std::uint32_t, 5>{1, 2, 1, 1, 1}));
  EXPECT_EQ(s.l2_promotion, L2Promotion::k128B);
  EXPECT_EQ(s.oob_fill, OobFill::kNan);
  EXPECT_TRUE(validate(s).empty());
}

TEST(Builder, TypedPointersPickTheDataType) {
  const std::uintptr_t a = 0x10000;
  auto dtype = [](const TensorMapSpec& s) { return s.dtype; };
  EXPECT_EQ(dtype(make_tiled_spec(reinterpret_cast<const std::int8_t*>(a), {64}, {}, {16})),
            DataType::kUInt8);
  EXPECT_EQ(dtype(make_tiled_spec(reinterpret_cast<const std::int16_t*>(a), {64}, {}, {8})),
            DataType::kUInt16);
  EXPECT_EQ(dtype(make_tiled_spec(reinterpret_cast<const std::int32_t*>(a), {64}, {}, {4})),
            DataType::kInt32);
  EXPECT_EQ(dtype(make_tiled_spec(reinterpret_cast<const double*>(a), {64}, {}, {2})),
            DataType::kFloat64);
  EXPECT_EQ(dtype(make_tiled_spec<f16>(addr(a), {64}, {}, {8})), DataType::kFloat16);
  EXPECT_EQ(dtype(make_tiled_spec(DataType::kTFloat32Ftz, addr(a), {64}, {}, {4})),
            DataType::kTFloat32Ftz);
  const TensorMapSpec s =
      make_tiled_spec(reinterpret_cast<const std::uint64_t*>(a), {3, 10}, {16, 1}, {3, 2});
  EXPECT_EQ(s.strides_bytes_inner_first[0], 8u);
  EXPECT_EQ(s.strides_bytes_inner_first[1], 128u);
}

TEST(Builder, SizeOneInnermostDimensionMayHaveAnyStride) {
  // PyTorch gives size-1 dimensions arbitrary strides; they are never stepped through.
  const TensorMapSpec s = make_tiled_spec<bf16>(addr(0x10000), {64, 1}, {8, 64}, {16, 1});
  EXPECT_EQ(s.strides_bytes_inner_first[0], 2u);
  EXPECT_EQ(s.strides_bytes_inner_first[1], 16u);
}

TEST(Builder, RankMismatchNamesTheRowMajorArgument) {
  const std::vector<Violation> v = thrown([] {
    make_tiled_spec<bf16>(addr(0x10000), {4096, 4096}, {4096, 1, 1}, {128},
                          {.element_strides = {1, 1, 1, 1}});
  });
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].rule, Rule::kBuilderRankMismatch);
  EXPECT_EQ(v[0].field, "strides");
  EXPECT_EQ(v[0].message,
            "strides has 3 values but shape has 2: give one stride per dimension, outermost first");
  EXPECT_EQ(v[1].field, "box");
  EXPECT_EQ(v[1].message,
            "box has 1 value but shape has 2: give one box extent per dimension, outermost first");
  EXPECT_EQ(v[2].field, "options.element_strides");
  EXPECT_EQ(v[2].message,
            "options.element_strides has 4 values but shape has 2: give one element stride per "
            "dimension, outermost first");
}

TEST(Builder, InnermostStrideMustBeOne) {
  // A transposed view: x.t() of a 4096 x 1024 matrix has strides (1, 1024).
  const std::vector<Violation> v = thrown([] {
    make_tiled_spec<bf16>(addr(0x10000), {1024, 4096}, {1, 1024}, {64, 64});
  });
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(rule_code(v[0].rule), "TMA034");
  EXPECT_EQ(v[0].field, "strides");
  EXPECT_EQ(v[0].index, 1);
  EXPECT_EQ(v[0].message,
            "strides[1] = 1024 elements is not 1: TMA needs the innermost (last) dimension "
            "contiguous: transpose so the contiguous dimension comes last, or copy the tensor "
            "contiguous (x.contiguous())");
}

TEST(Builder, NegativeValuesAreReported) {
  const std::vector<Violation> v = thrown([] {
    make_tiled_spec<float>(addr(0x10000), {-1, 64}, {64, 1}, {8, -4});
  });
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(rule_code(v[0].rule), "TMA035");
  EXPECT_EQ(v[0].message,
            "shape[0] = -1 is negative: give each extent as a number of elements >= 1");
  EXPECT_EQ(v[1].field, "box");
  EXPECT_EQ(v[1].index, 1);
  EXPECT_EQ(v[1].message,
            "box[1] = -4 is negative: give each box extent as a number of elements in 1..256");
}

TEST(Builder, ByteOverflowIsReported) {
  const std::vector<Violation> v = thrown([] {
    make_tiled_spec<double>(addr(0x10000), {2, 4}, {std::int64_t{1} << 62, 1}, {2, 4});
  });
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(rule_code(v[0].rule), "TMA036");
  EXPECT_EQ(v[0].message,
            "strides[0] = 4611686018427387904 elements x 8 B does not fit in 64 bits: strides "
            "must be below 2^40 B");
}

TEST(Builder, RankOutsideOneToFive) {
  const std::vector<Violation> v = thrown([] {
    make_tiled_spec<float>(addr(0x10000), {1, 1, 1, 1, 1, 4}, {}, {1, 1, 1, 1, 1, 4});
  });
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, Rule::kRankRange);
  EXPECT_EQ(v[0].field, "shape");
  EXPECT_EQ(v[0].message,
            "shape has 6 dimensions: a tiled tensor map has 1..5: merge adjacent dimensions whose "
            "strides nest so that at most 5 remain");
  EXPECT_EQ(thrown([] { make_tiled_spec<float>(addr(0x10000), {}, {}, {}); }).size(), 1u);
}

TEST(Builder, ErrorWhatListsEveryViolation) {
  try {
    make_tiled_spec<bf16>(addr(0x10000), {64, 64}, {1, 64}, {8});
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "invalid row-major tensor description (2 violations)\n"
              "TMA033 builder-rank-mismatch: box has 1 value but shape has 2: give one box extent "
              "per dimension, outermost first\n"
              "TMA034 builder-innermost-stride-1: strides[1] = 64 elements is not 1: TMA needs "
              "the innermost (last) dimension contiguous: transpose so the contiguous dimension "
              "comes last, or copy the tensor contiguous (x.contiguous())");
  }
}

TEST(Builder, ValidationStillAppliesAfterConversion) {
  // fp16 with K % 8 != 0: the builder converts, the validator explains.
  const TensorMapSpec s = make_tiled_spec<f16>(addr(0x10000), {4096, 1004}, {}, {64, 64});
  const std::vector<Violation> v = validate(s);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].message,
            "strides_bytes_inner_first[1] = 2008 B is not a multiple of 16 B: pad it to 2016 B "
            "(allocate with a padded leading dimension)");
}

TEST(Builder, Im2colChannelsLast) {
  // NHWC batch of 2 images of 16 x 16 pixels and 64 channels; 3x3 filter, padding 1.
  const TensorMapSpec s =
      make_im2col_spec(DataType::kBFloat16, addr(0x10000), {2, 16, 16, 64}, {}, {-1, -2}, {-1, -3},
                       64, 128, {.swizzle = Swizzle::k128B});
  EXPECT_EQ(s.mode, Mode::kIm2col);
  EXPECT_EQ(s.rank, 4);
  EXPECT_EQ(s.dims_inner_first, (std::array<std::uint64_t, 5>{64, 16, 16, 2, 0}));
  EXPECT_EQ(s.strides_bytes_inner_first, (std::array<std::uint64_t, 5>{2, 128, 2048, 32768, 0}));
  EXPECT_EQ(s.pixel_box_lower_corner, (std::array<int, 3>{-2, -1, 0}));  // W, H
  EXPECT_EQ(s.pixel_box_upper_corner, (std::array<int, 3>{-3, -1, 0}));
  EXPECT_EQ(s.channels_per_pixel, 64u);
  EXPECT_EQ(s.pixels_per_column, 128u);
  EXPECT_TRUE(validate(s).empty());
  const std::vector<Violation> v = thrown([] {
    make_im2col_spec(DataType::kBFloat16, addr(0x10000), {2, 16, 16, 64}, {}, {-1}, {-1, -1}, 64,
                     128);
  });
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].field, "lower_corner");
  EXPECT_EQ(v[0].message,
            "lower_corner has 1 value but shape has 2 spatial dimensions: give one offset per "
            "spatial dimension, outermost first (D,H,W)");
  EXPECT_EQ(thrown([] {
              make_im2col_spec(DataType::kBFloat16, addr(0x10000), {16, 64}, {}, {}, {}, 64, 1);
            })[0]
                .rule,
            Rule::kRankRange);
}

static_assert(sizeof(TensorMap) == 128 && alignof(TensorMap) == 64);

TEST(TensorMap, ValidatesBeforeCallingTheDriver) {
  const TensorMapSpec s = make_tiled_spec<bf16>(addr(0x10008), {64, 64}, {}, {64, 64});
  try {
    make_tensor_map(s);
    FAIL() << "a misaligned address was encoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.driver_code(), 0);
    ASSERT_EQ(e.violations().size(), 1u);
    EXPECT_EQ(e.violations()[0].rule, Rule::kAddressAligned);
  }
}

// Peak DRAM bandwidth from DeviceSupport's clock and bus width: the values tma-bench recorded on
// the two GPUs measured (bench/results: H100 SXM 3,352.32 GB/s, H200 4,814.304 GB/s); 0 unknown.
TEST(DeviceSupport, PeakMemoryBandwidth) {
  EXPECT_DOUBLE_EQ(peak_memory_gbps(2619000, 5120), 3352.32);
  EXPECT_DOUBLE_EQ(peak_memory_gbps(3201000, 6016), 4814.304);
  EXPECT_EQ(peak_memory_gbps(0, 5120), 0.0);
  EXPECT_EQ(peak_memory_gbps(2619000, 0), 0.0);
  static_assert(peak_memory_gbps(1000000, 8) == 2.0);  // 1 GHz, 1 byte, two transfers a clock
}

// With a Hopper GPU the spec encodes; without a driver the error says so (CI has neither GPU
// nor driver). Runs on both.
TEST(TensorMap, EncodesOrSaysWhyNot) {
  const TensorMapSpec tiled = make_tiled_spec<bf16>(addr(0x10000), {4096, 4096}, {}, {128, 64},
                                                    {.swizzle = Swizzle::k128B});
  const TensorMapSpec im2col = make_im2col_spec(DataType::kBFloat16, addr(0x10000), {2, 16, 16, 64},
                                                {}, {-1, -1}, {-1, -1}, 64, 128);
  const DeviceSupport d = device_support();
  if (d.tma) {
    for (const TensorMapSpec& s : {tiled, im2col}) {
      const TensorMap m = make_tensor_map(s);
      bool nonzero = false;
      for (std::byte b : m.bytes)
        nonzero = nonzero || b != std::byte{0};
      EXPECT_TRUE(nonzero) << to_string(s);
      TensorMap raw{};
      EXPECT_EQ(encode_unchecked(s, &raw), 0);
    }
  } else if (d.device_count == 0) {
    try {
      make_tensor_map(tiled);
      FAIL() << "encoded without a GPU";
    } catch (const Error& e) {
      EXPECT_TRUE(e.violations().empty());
      EXPECT_EQ(e.driver_code(), 0);
      EXPECT_EQ(std::string(e.what()).rfind("cannot encode a tensor map: ", 0), 0u) << e.what();
    }
    EXPECT_NE(encode_unchecked(tiled, nullptr), 0);
  }
}

}  // namespace
}  // namespace tma
