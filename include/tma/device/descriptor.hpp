// tmakit device/: creating and updating tensor maps inside a kernel (tensormap.replace), and the
// fences that make a changed descriptor safe to use.
//
// In the spirit of Triton's tl.make_tensor_descriptor(base, shape, strides, block_shape) and CuTe
// DSL's update_tma_descriptor + fence: the host encodes one template descriptor (tmakit's
// make_tensor_map) with the element type, swizzle, interleave and fill that the kernel is compiled
// for; the kernel stamps out per-tensor descriptors from it, changing address, rank, extents,
// strides and box.
//
//   __shared__ tma::DescriptorScratch scratch;          // 128-byte-aligned staging copy
//   if (warp == 0)                                      // the whole warp: .sync.aligned below
//     tma::make_descriptor(&out[i], &tmpl, fields, scratch);
//   ... later, in any CTA that copies with out[i] (after ordering with the writer, e.g. the next
//   kernel, or a flag with release/acquire):
//   tma::acquire_descriptor(&out[i]);                   // the thread that issues the copies
//   tma::load(smem, &out[i], bar, coords);
//
// Facts this file relies on (PTX ISA "tensormap.replace", "tensormap.cp_fenceproxy",
// "fence.proxy.tensormap"; CUDA Programming Guide, "Encoding a Tensor Map on Device"):
// - tensormap.replace is sm_90a-only (PTX ISA 8.3) and edits only tiled-mode maps; it is a weak
//   generic-proxy write of the 128-byte object, in global or shared::cta memory.
// - A descriptor read by the TMA unit is read through the tensormap proxy: edits made with
//   generic writes need fence.proxy.tensormap::generic release (writer) / acquire (reader) before a
//   copy uses it. tensormap.cp_fenceproxy copies a shared-memory descriptor to global memory and
//   does the release in one instruction; it is .sync.aligned, so all 32 lanes of a warp execute it
//   together with the same operands.
// - The acquiring thread and the thread that issues the copy must be in the same CTA; other CTAs
//   (even of the same cluster or grid) acquire for themselves. No new acquire is needed for later
//   copies while the descriptor stays unchanged.
// - Field encodings (PTX ISA table "tensormap-new-val-validity"): .rank takes rank - 1; box_dim,
//   global_dim and element_stride the values themselves; global_stride[i] is the byte stride of
//   dimension i + 1. The element-type codes differ from the driver's CUtensorMapDataType order
//   after float32 (ptx_elemtype() below); the swizzle, interleave and fill codes match it.
// - Toolkit quirk: CCCL 3.0 (CUDA 13.0) names the element-stride replacement both
//   tensormap_replace_element_size (older, misnamed) and tensormap_replace_element_stride; both
//   emit .element_stride. tmakit calls the latter.
// - CUDA 13's cuda.h declares CUtensorMap alignas(128) (64 before); device-side edits here require
//   128-byte-aligned descriptors in shared and global memory, as the CUDA guide's example does
//   (cudaMalloc gives 256).
// - What it becomes (ptxas 13.0, sm_90a SASS): tensormap.replace is no special instruction but
//   ordinary loads and stores with bit-field edits (the hardware fields store dims and box minus
//   one, strides divided by 16), and tensormap.cp_fenceproxy 32 lanes x 4-byte
//   ATOMG.EXCH.STRONG.GPU; the acquire fence is UTMACCTL.IV (descriptor-cache invalidate).
// - Checked on an H200 (examples/04_device_descriptor): descriptors made by make_descriptor are
//   byte-identical to the driver's encoding of the same tensor, and loads through them and through
//   an in-place update_descriptor are correct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda/ptx>

#include "tma/config.hpp"
#include "tma/device/debug.hpp"
#include "tma/device/descriptor_fields.hpp"
#include "tma/device/tensor_map_ref.hpp"
#include "tma/host/types.hpp"
#include "tma/ptx/common.hpp"

namespace tma {

// A 128-byte-aligned shared-memory slot in which make_descriptor stages a descriptor.
struct alignas(128) DescriptorScratch {
  std::byte bytes[detail::kTensorMapBytes];
};

// DescriptorFields<R> (the fields make_descriptor / update_descriptor set) and
// descriptor_fields_problem (their range check): descriptor_fields.hpp.

// tensormap.replace .elemtype code of a DataType. The PTX codes run u8, u16, u32, s32, u64, s64,
// f16, f32, f32.ftz, f64, bf16, tf32, tf32.ftz, b4x16, b4x16_p64, b6x16_p32 (0..15), while
// CUtensorMapDataType (and DataType) put float64 and bfloat16 before float32_ftz.
TMA_HOST_DEVICE constexpr int ptx_elemtype(DataType t) {
  switch (t) {
    case DataType::kUInt8:
      return 0;
    case DataType::kUInt16:
      return 1;
    case DataType::kUInt32:
      return 2;
    case DataType::kInt32:
      return 3;
    case DataType::kUInt64:
      return 4;
    case DataType::kInt64:
      return 5;
    case DataType::kFloat16:
      return 6;
    case DataType::kFloat32:
      return 7;
    case DataType::kFloat32Ftz:
      return 8;
    case DataType::kFloat64:
      return 9;
    case DataType::kBFloat16:
      return 10;
    case DataType::kTFloat32:
      return 11;
    case DataType::kTFloat32Ftz:
      return 12;
    case DataType::k16U4Align8B:
      return 13;
    case DataType::k16U4Align16B:
      return 14;
    case DataType::k16U6Align16B:
      return 15;
  }
  return -1;
}

namespace detail {

// Calls f(cuda::ptx::space_shared) or f(cuda::ptx::space_global) for where `desc` lives (and
// launders `desc`, which f uses, through ptx::launder_generic). Debug builds trap for any other
// state space; release builds treat every non-shared address as global.
template <class F>
__device__ __forceinline__ void with_descriptor_space(void*& desc, F&& f) {
  desc = ptx::launder_generic(desc);  // see launder_generic: both branches below must compile
  if (in_shared(desc)) {
    check_shared(desc, 128, "tensor map being edited (shared memory)");
    f(cuda::ptx::space_shared);
    return;
  }
#if TMA_DEBUG_CHECKS
  if (!in_global(desc)) {
    device_fail("tensor map being edited", reinterpret_cast<unsigned long long>(desc),
                "must be in global or shared memory (tensormap.replace)");
  }
  check_aligned(desc, 128, "tensor map being edited (global memory)");
#endif
  f(cuda::ptx::space_global);
}

// Calls f(cuda::ptx::n32_t<I>{}) for the run-time value `v` in [0, kCount): tensormap.replace
// takes its ordinal and enum operands as immediates.
template <int kCount, int I = 0, class F>
__device__ __forceinline__ void with_immediate(int v, F&& f) {
  if constexpr (I < kCount) {
    if (v == I) {
      f(cuda::ptx::n32_t<I>{});
    } else {
      with_immediate<kCount, I + 1>(v, static_cast<F&&>(f));
    }
  }
}

}  // namespace detail

// Copies a 128-byte descriptor (16-byte accesses). `dst` in shared or global memory. One thread.
__device__ __forceinline__ void copy_descriptor(void* dst, const TensorMap* src) {
  const auto* s = reinterpret_cast<const uint4*>(src);
  auto* d = static_cast<uint4*>(dst);
#pragma unroll
  for (int i = 0; i < detail::kTensorMapBytes / 16; ++i)
    d[i] = s[i];
}

// Sets address, rank, extents, strides, box and element strides of the tiled descriptor at `desc`
// (shared or global memory, 128-byte aligned). The fields must be in range
// (descriptor_fields_problem): tensormap.replace stores whatever it is given (ordinary stores with
// bit-field edits, above), so a field out of range makes a descriptor the driver would refuse to
// encode. Debug builds (TMA_DEBUG_CHECKS) trap on the first field out of range, naming it.
//   tensormap.replace.tile.{global_address,rank,global_dim,global_stride,box_dim,element_stride}
//       .{shared::cta,global}.b1024.{b64,b32} [desc], {ord,} value;
//                                         PTX ISA 8.3, sm_90a (cuda::ptx). One thread.
template <int R>
__device__ __forceinline__ void replace_fields(void* desc, const DescriptorFields<R>& f) {
#if TMA_DEBUG_CHECKS
  if (const DescriptorFieldsProblem p = descriptor_fields_problem(f)) {
    detail::device_fail(p.what, p.value, p.rule);
  }
#endif
  detail::with_descriptor_space(desc, [&](auto space) {
    namespace p = cuda::ptx;
    p::tensormap_replace_global_address(space, desc, reinterpret_cast<std::uint64_t>(f.address));
    p::tensormap_replace_rank(space, desc, static_cast<std::uint32_t>(R - 1));
    [&]<int... kDim>(std::integer_sequence<int, kDim...>) {
      (p::tensormap_replace_global_dim(space, desc, p::n32_t<kDim>{}, f.dims_inner_first[kDim]),
       ...);
      (p::tensormap_replace_box_dim(space, desc, p::n32_t<kDim>{}, f.box_inner_first[kDim]), ...);
      (p::tensormap_replace_element_stride(
           space, desc, p::n32_t<kDim>{},
           f.element_strides_inner_first[kDim] == 0 ? 1u : f.element_strides_inner_first[kDim]),
       ...);
    }
    (std::make_integer_sequence<int, R>{});
    [&]<int... kDim>(std::integer_sequence<int, kDim...>) {
      // global_stride ordinal i is the stride of dimension i + 1.
      (p::tensormap_replace_global_stride(space, desc, p::n32_t<kDim>{},
                                          f.strides_bytes_inner_first[kDim + 1]),
       ...);
    }
    (std::make_integer_sequence<int, R - 1>{});
  });
}

// Largest .elemtype code ptxas accepts for sm_90a (tf32.ftz): it rejects 13..15, the packed
// sub-byte types, "expected to be in range [0..12]".
inline constexpr int kMaxSm90Elemtype = 12;

// Sets element type, interleave, swizzle and out-of-bounds fill of the descriptor at `desc`.
// Usually the template already has them (they shape the kernel's shared-memory layout); call this
// to stamp descriptors of another type from one template. Values Hopper lacks (packed sub-byte
// types, 128B_ATOM_* swizzles) leave the field unchanged, and trap in debug builds.
//   tensormap.replace.tile.{elemtype,interleave_layout,swizzle_mode,fill_mode}
//       .{shared::cta,global}.b1024.b32 [desc], value;   PTX ISA 8.3, sm_90a (cuda::ptx).
// One thread.
__device__ __forceinline__ void replace_format(void* desc, DataType dtype, Interleave interleave,
                                               Swizzle swizzle, OobFill fill) {
  const int type_code = ptx_elemtype(dtype);
  const int swizzle_code = static_cast<int>(swizzle);
#if TMA_DEBUG_CHECKS
  if (type_code < 0 || type_code > kMaxSm90Elemtype) {
    detail::device_fail("replace_format: dtype", static_cast<unsigned long long>(dtype),
                        "the packed 16U4 / 16U6 types need compute capability 10");
  }
  if (swizzle_code > static_cast<int>(Swizzle::k128B)) {
    detail::device_fail("replace_format: swizzle", static_cast<unsigned long long>(swizzle_code),
                        "128B_ATOM_* swizzles need compute capability 10 (swizzle_atomicity)");
  }
#endif
  detail::with_descriptor_space(desc, [&](auto space) {
    namespace p = cuda::ptx;
    detail::with_immediate<kMaxSm90Elemtype + 1>(
        type_code, [&](auto v) { p::tensormap_replace_elemtype(space, desc, v); });
    detail::with_immediate<3>(static_cast<int>(interleave), [&](auto v) {
      p::tensormap_replace_interleave_layout(space, desc, v);
    });
    detail::with_immediate<4>(swizzle_code,
                              [&](auto v) { p::tensormap_replace_swizzle_mode(space, desc, v); });
    detail::with_immediate<2>(static_cast<int>(fill),
                              [&](auto v) { p::tensormap_replace_fill_mode(space, desc, v); });
  });
}

// Publishes the descriptor staged in shared memory to global memory and releases it to the
// tensormap proxy at GPU scope.
//   tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned
//       [dst], [src], 128;                          PTX ISA 8.3, sm_90 (cuda::ptx).
// All 32 lanes of one warp, converged, with the same operands; `src` written by any lane before a
// __syncwarp().
__device__ __forceinline__ void publish_descriptor(TensorMap* dst, const DescriptorScratch& src) {
  detail::check_aligned(dst, 128, "publish_descriptor: global destination");
  cuda::ptx::tensormap_cp_fenceproxy(cuda::ptx::sem_release, cuda::ptx::scope_gpu, dst, &src,
                                     cuda::ptx::n32_t<detail::kTensorMapBytes>{});
}

// After tensormap.replace edits made in place in global memory: releases them to the tensormap
// proxy at GPU scope.   fence.proxy.tensormap::generic.release.gpu;   PTX ISA 8.3, sm_90
// (cuda::ptx). The thread that made the edits.
__device__ __forceinline__ void release_descriptor() {
  cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_release, cuda::ptx::scope_gpu);
}

// Before the first copy with a descriptor in global memory that was created or changed since this
// kernel (or this CTA) last acquired it.
//   fence.proxy.tensormap::generic.acquire.gpu [desc], 128;   PTX ISA 8.3, sm_90 (cuda::ptx).
// The thread that will issue the copies (or any thread of its CTA, then a barrier).
__device__ __forceinline__ void acquire_descriptor(const TensorMap* desc) {
  detail::check_aligned(desc, 128, "acquire_descriptor: descriptor");
  cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_acquire, cuda::ptx::scope_gpu, desc,
                                           cuda::ptx::n32_t<detail::kTensorMapBytes>{});
}

// Makes the descriptor `out` (global memory, 128-byte aligned) from the template `tmpl` with the
// fields `f`, staged in `scratch`: lane 0 copies the template and edits the copy
// (replace_fields), __syncwarp, then the warp publishes it (publish_descriptor). Readers call
// acquire_descriptor(out) before their first copy with it.
// All 32 lanes of one warp, converged, with the same arguments.
template <int R>
__device__ __forceinline__ void make_descriptor(TensorMap* out, const TensorMap* tmpl,
                                                const DescriptorFields<R>& f,
                                                DescriptorScratch& scratch) {
  if (cuda::ptx::get_sreg_laneid() == 0) {
    copy_descriptor(&scratch, tmpl);
    replace_fields(&scratch, f);
  }
  __syncwarp();
  publish_descriptor(out, scratch);
}

// Edits the descriptor `desc` in global memory in place and releases the edits (replace_fields +
// release_descriptor). Nothing may be copying with `desc` meanwhile; readers acquire it after
// ordering with this thread (a later kernel, or a flag written after this call). One thread.
template <int R>
__device__ __forceinline__ void update_descriptor(TensorMap* desc, const DescriptorFields<R>& f) {
  replace_fields(desc, f);
  release_descriptor();
}

}  // namespace tma
