// tma::ops rejects bad arguments with a tma::Error that names the argument, the value and the
// fix, before touching the GPU (these tests run on machines without one).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tma/host/error.hpp"
#include "tma/ops/copy.hpp"

namespace tma::ops {
namespace {

// Fake device addresses: the checks only look at their values.
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

TEST(OpsArgs, CopyRejectsMismatchedDtype) {
  auto src = contiguous(at(0x10000), DataType::kBFloat16, {64, 64});
  auto dst = contiguous(at(0x90000), DataType::kFloat32, {64, 64});
  EXPECT_EQ(error_of([&] { copy(dst, src); }),
            "tma::ops::copy: dst.dtype = float32 but src.dtype = bfloat16: copy does not "
            "convert; use the same element type");
}

TEST(OpsArgs, CopyRejectsShapeMismatch) {
  auto src = contiguous(at(0x10000), DataType::kBFloat16, {64, 64});
  auto dst = contiguous(at(0x90000), DataType::kBFloat16, {64, 32});
  EXPECT_EQ(error_of([&] { copy(dst, src); }),
            "tma::ops::copy: dst.shape [64,32] differs from src.shape [64,64] at index 1: use "
            "views of the same shape");
}

TEST(OpsArgs, CopyRejectsMisalignedBase) {
  auto src = contiguous(at(0x10008), DataType::kFloat32, {64, 64});
  auto dst = contiguous(at(0x90000), DataType::kFloat32, {64, 64});
  const std::string e = error_of([&] { copy(dst, src); });
  EXPECT_NE(e.find("src.data = 0x10008 is not 16-byte aligned"), std::string::npos) << e;
}

TEST(OpsArgs, CopyRejectsStrideNotMultipleOf16Bytes) {
  auto src = contiguous(at(0x10000), DataType::kBFloat16, {64, 1001});
  auto dst = contiguous(at(0x90000), DataType::kBFloat16, {64, 1001});
  EXPECT_EQ(error_of([&] { copy(dst, src); }),
            "tma::ops::copy: src.strides[0] = 1001 elements x 2 B = 2002 B is not a multiple of "
            "16 B (TMA's rule for outer strides): pad the rows to a multiple of 8 elements");
}

TEST(OpsArgs, CopyRejectsNonContiguousInnermost) {
  auto src = contiguous(at(0x10000), DataType::kFloat32, {64, 64});
  src.strides = {1, 64, 0, 0, 0};  // a transposed view
  auto dst = contiguous(at(0x90000), DataType::kFloat32, {64, 64});
  const std::string e = error_of([&] { copy(dst, src); });
  EXPECT_NE(e.find("src.strides[1] = 64"), std::string::npos) << e;
  EXPECT_NE(e.find("innermost dimension must be contiguous"), std::string::npos) << e;
}

TEST(OpsArgs, CopyRejectsOverlap) {
  auto src = contiguous(at(0x10000), DataType::kUInt8, {4096});
  auto dst = contiguous(at(0x10800), DataType::kUInt8, {4096});
  const std::string e = error_of([&] { copy(dst, src); });
  EXPECT_NE(e.find("overlaps src"), std::string::npos) << e;
}

TEST(OpsArgs, CopyRejectsBadRankAndExtent) {
  auto src = contiguous(at(0x10000), DataType::kUInt8, {4, 4});
  auto dst = src;
  dst.data = at(0x90000);
  src.rank = 6;
  EXPECT_EQ(error_of([&] { copy(dst, src); }),
            "tma::ops::copy: src.rank = 6 is outside 1..5: reshape to at most 5 dimensions");
  src.rank = 2;
  src.shape[0] = 0;
  EXPECT_EQ(error_of([&] { copy(dst, src); }),
            "tma::ops::copy: src.shape[0] = 0 (shape [0,4]): every extent must be >= 1; skip the "
            "call for empty tensors");
}

TEST(OpsArgs, TransposeRejectsWrongShape) {
  auto src = contiguous(at(0x10000), DataType::kBFloat16, {128, 64});
  auto dst = contiguous(at(0x90000), DataType::kBFloat16, {128, 64});
  EXPECT_EQ(error_of([&] { transpose(dst, src); }),
            "tma::ops::transpose: dst.shape [128,64] is not the transpose of src.shape [128,64]: "
            "dst must be [cols, rows]");
}

TEST(OpsArgs, TransposeRejectsUnsupportedType) {
  auto src = contiguous(at(0x10000), DataType::kUInt8, {128, 64});
  auto dst = contiguous(at(0x90000), DataType::kUInt8, {64, 128});
  EXPECT_EQ(error_of([&] { transpose(dst, src); }),
            "tma::ops::transpose: dtype uint8 (1 B) is not supported: transpose takes bf16, fp16 "
            "or fp32 (2- or 4-byte elements); use tma::ops::copy for other layouts");
}

TEST(OpsArgs, TransposeRejectsBatchMismatch) {
  auto src = contiguous(at(0x10000), DataType::kFloat32, {3, 128, 64});
  auto dst = contiguous(at(0x900000), DataType::kFloat32, {4, 64, 128});
  const std::string e = error_of([&] { transpose(dst, src); });
  EXPECT_NE(e.find("dst must be [batch, cols, rows]"), std::string::npos) << e;
}

}  // namespace
}  // namespace tma::ops
