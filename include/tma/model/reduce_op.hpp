// tmakit: the element-wise operations of cp.reduce.async.bulk.tensor, on bit patterns.
//
// PTX ISA, "Data Movement and Conversion Instructions: cp.reduce.async.bulk.tensor": each element
// of the destination tensor in global memory is replaced by redOp(destination, source), the source
// being the box image in shared memory; the element type comes from the tensor map. Integer
// semantics follow the PTX `atom`/`red` definitions (same section family, "atom"):
//   add wraps; inc(r, s) = (r >= s) ? 0 : r + 1; dec(r, s) = (r == 0 || r > s) ? s : r - 1;
//   and / or / xor act on the element's bits.
// Floating-point add "rounds to the nearest even". The model decodes both operands to double
// (exact), adds in double and rounds once to the element format. That equals one correctly rounded
// addition in the element format: double has 53 >= 2p + 2 significand bits for fp16 (p = 11),
// bf16 (p = 8) and fp32 (p = 24), so rounding first to double then to the format is innocuous
// (Figueroa, "When is double rounding innocuous?", 1995); and a sum small enough to be subnormal
// in the format is a multiple of the format's subnormal quantum below 2^(emin), hence exact in
// double.
//
// What the PTX ISA does not pin down is isolated in the small functions marked HYPOTHESIS below;
// the GPU tests (hardware vs model, byte for byte) decide them. Change them there and only there.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tma/config.hpp"
#include "tma/host/types.hpp"
#include "tma/model/float_bits.hpp"

namespace tma::model {

// The reduction of cp.reduce.async.bulk.tensor (its .redOp qualifier).
enum class ReduceOp : std::uint8_t { kAdd, kMin, kMax, kInc, kDec, kAnd, kOr, kXor };
inline constexpr int kNumReduceOps = 8;

constexpr std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::kAdd:
      return "add";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kInc:
      return "inc";
    case ReduceOp::kDec:
      return "dec";
    case ReduceOp::kAnd:
      return "and";
    case ReduceOp::kOr:
      return "or";
    case ReduceOp::kXor:
      return "xor";
  }
  return "invalid";
}

// Whether cp.reduce.async.bulk.tensor accepts `op` on tensor maps of type `t`. Source: PTX ISA,
// cp.reduce.async.bulk.tensor, table "valid combinations of .redOp and element type":
//   .add           .u32 .s32 .u64 .f32 .f16 .bf16      (no .f64: only the non-tensor form has it)
//   .min .max      .u32 .s32 .u64 .s64 .f16 .bf16
//   .inc .dec      .u32
//   .and .or .xor  .b32 .b64
// Mapping to tensor-map types (HYPOTHESIS, check on hardware): .b32/.b64 are the 32/64-bit integer
// types (UINT32, INT32, UINT64, INT64), not the float types; .f32 is FLOAT32 only (FLOAT32_FTZ and
// the TFLOAT32 types are not listed, so the model rejects them).
constexpr bool reduce_supported(ReduceOp op, DataType t) {
  using D = DataType;
  switch (op) {
    case ReduceOp::kAdd:
      return t == D::kUInt32 || t == D::kInt32 || t == D::kUInt64 || t == D::kFloat32 ||
             t == D::kFloat16 || t == D::kBFloat16;
    case ReduceOp::kMin:
    case ReduceOp::kMax:
      return t == D::kUInt32 || t == D::kInt32 || t == D::kUInt64 || t == D::kInt64 ||
             t == D::kFloat16 || t == D::kBFloat16;
    case ReduceOp::kInc:
    case ReduceOp::kDec:
      return t == D::kUInt32;
    case ReduceOp::kAnd:
    case ReduceOp::kOr:
    case ReduceOp::kXor:
      // MEASURED (H200): .and on an INT64 map faults with cudaErrorIllegalInstruction; the signed
      // types are left out of the bitwise ops until the hardware shows they work.
      return t == D::kUInt32 || t == D::kUInt64;
  }
  return false;
}

// The binary format of a floating-point reduce type (fp16, bf16, fp32).
constexpr FloatFormat reduce_float_format(DataType t) {
  return t == DataType::kFloat16 ? kFormatF16 : t == DataType::kBFloat16 ? kFormatBF16 : kFormatF32;
}

// HYPOTHESIS (check on hardware): whether float add flushes subnormal inputs and results to
// sign-preserving zero. The PTX ISA says for atom.add.f32 on global memory and for
// cp.reduce.async.bulk.add.f32 (the non-tensor form, PTX 8.x text): "The current implementation ...
// flushes subnormal inputs and results to sign-preserving zero", while the .f16/.bf16 forms are
// .noftz (subnormals kept). The tensor form reduces in the same L2 atomic units, so the model
// flushes for fp32 and keeps subnormals for fp16/bf16. The result is flushed after rounding.
// MEASURED (H200, tests/gpu/gpu_store.cu, reduce-add/float32 on random bits): the tensor form does
// NOT flush: hardware results matched only with subnormal inputs added exactly. Kept as a switch.
constexpr bool reduce_add_flushes_subnormals(DataType) {
  return false;
}

// HYPOTHESIS (check on hardware): the NaN a float reduction writes when its result is NaN
// (NaN input to add, Inf + -Inf, or min/max of two NaNs): the canonical NaN of PTX arithmetic,
// all-ones fraction with sign 0 (fp32 0x7FFFFFFF, fp16 0x7FFF, bf16 0x7FFF).
constexpr std::uint64_t reduce_nan_bits(DataType t) {
  const FloatFormat f = reduce_float_format(t);
  return (exp_all_ones(f) << f.mant_bits) | mant_mask(f);
}

// HYPOTHESIS (check on hardware): min/max of floats, IEEE 754-2008 minNum/maxNum style as the
// PTX `min`/`max` instructions document it: one NaN operand -> the other operand; two NaNs ->
// reduce_nan_bits; -0 orders below +0. The chosen operand's bits are returned unchanged
// (subnormals kept, no flush).
inline std::uint64_t float_min_max(bool is_max, DataType t, std::uint64_t a, std::uint64_t b) {
  const FloatFormat f = reduce_float_format(t);
  const bool a_nan = is_nan_bits(f, a);
  const bool b_nan = is_nan_bits(f, b);
  if (a_nan && b_nan) return reduce_nan_bits(t);
  if (a_nan) return b;
  if (b_nan) return a;
  const double x = decode(f, a);
  const double y = decode(f, b);
  bool a_less = x < y;
  bool b_less = y < x;
  if (x == y) {  // only +-0 differ among equal values: -0 < +0
    a_less = sign_bit(f, a) && !sign_bit(f, b);
    b_less = sign_bit(f, b) && !sign_bit(f, a);
  }
  if (is_max) return a_less ? b : a;
  return b_less ? b : a;
}

// fp add of two element bit patterns, as the hardware's reduction does it (see the hypotheses).
inline std::uint64_t float_add(DataType t, std::uint64_t a, std::uint64_t b) {
  const FloatFormat f = reduce_float_format(t);
  const bool ftz = reduce_add_flushes_subnormals(t);
  if (is_nan_bits(f, a) || is_nan_bits(f, b)) return reduce_nan_bits(t);
  if (ftz && is_subnormal_bits(f, a)) a &= sign_mask(f);
  if (ftz && is_subnormal_bits(f, b)) b &= sign_mask(f);
  const double sum = decode(f, a) + decode(f, b);
  if (sum != sum) return reduce_nan_bits(t);  // Inf + -Inf
  std::uint64_t r = encode_rne(f, sum);
  if (ftz && is_subnormal_bits(f, r)) r &= sign_mask(f);
  return r;
}

// Throws std::invalid_argument (message prefixed by `who`) unless reduce_supported(op, t).
inline void require_reduce_supported(ReduceOp op, DataType t, std::string_view who) {
  if (reduce_supported(op, t)) return;
  throw std::invalid_argument(
      std::string(who) + ": reduce " + std::string(to_string(op)) + " on element type " +
      std::string(to_string(t)) +
      " is not supported by cp.reduce.async.bulk.tensor (PTX ISA table: add u32/s32/u64/f32/"
      "f16/bf16; min/max u32/s32/u64/s64/f16/bf16; inc/dec u32; and/or/xor u32/u64, the table's "
      "signed types left out: .and on s64 faults on an H200): use a listed type or another op");
}

// Bits of the element after redOp(old, src): `old` is the global element, `src` the shared-memory
// one, both the element's little-endian bits zero-extended to 64. Throws std::invalid_argument for
// a combination reduce_supported() rejects.
inline std::uint64_t reduce_element(ReduceOp op, DataType t, std::uint64_t old, std::uint64_t src) {
  require_reduce_supported(op, t, "reduce_element");
  if (is_floating_point(t)) {
    if (op == ReduceOp::kAdd) return float_add(t, old, src);
    return float_min_max(op == ReduceOp::kMax, t, old, src);
  }
  const int bits = element_bits(t);
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  old &= mask;
  src &= mask;
  const bool is_signed = t == DataType::kInt32 || t == DataType::kInt64;
  // Two's complement order: flipping the sign bit maps signed order onto unsigned order.
  const std::uint64_t bias = is_signed ? (std::uint64_t{1} << (bits - 1)) : 0;
  const bool old_less = (old ^ bias) < (src ^ bias);
  switch (op) {
    case ReduceOp::kAdd:
      return (old + src) & mask;
    case ReduceOp::kMin:
      return old_less ? old : src;
    case ReduceOp::kMax:
      return old_less ? src : old;
    case ReduceOp::kInc:
      return old >= src ? 0 : (old + 1) & mask;
    case ReduceOp::kDec:
      return (old == 0 || old > src) ? src : old - 1;
    case ReduceOp::kAnd:
      return old & src;
    case ReduceOp::kOr:
      return old | src;
    case ReduceOp::kXor:
      return old ^ src;
  }
  return old;
}

}  // namespace tma::model
