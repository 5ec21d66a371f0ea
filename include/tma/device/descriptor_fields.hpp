// tmakit device/: the fields a kernel sets when it creates or updates a tiled tensor map
// (descriptor.hpp: make_descriptor, update_descriptor), and the check of their ranges. Plain C++
// (host and device): host code can check the fields it will hand to a kernel, and the CPU tests
// check the checker.
//
// The ranges are those of the PTX ISA table "tensormap-new-val-validity" and of
// cuTensorMapEncodeTiled for the same fields (validate.hpp's rules TMA009-TMA011, TMA013, TMA014,
// TMA016, TMA018). What depends on the template's element type, swizzle or interleave (the box's
// inner bytes a multiple of 16, the swizzle span, a 32-byte address with interleave 32B) is not
// checked here: the fields do not carry them.
#pragma once

#include <cstdint>

#include "tma/config.hpp"

namespace tma {

// The fields of a tiled descriptor that make_descriptor / update_descriptor set, innermost first
// (the order of TensorMapSpec). Aggregate-initialize it; element strides left 0 are taken as 1.
template <int R>
struct DescriptorFields {
  static_assert(R >= 1 && R <= 5, "a tiled tensor map has rank 1..5");
  const void* address;                           // 16-byte aligned (32 with interleave 32B)
  std::uint32_t dims_inner_first[R];             // 1 .. 2^32 - 1 (.global_dim is a .b32 field)
  std::uint64_t strides_bytes_inner_first[R];    // [0] ignored; [1..] multiples of 16, < 2^40
  std::uint32_t box_inner_first[R];              // 1 .. 256
  std::uint32_t element_strides_inner_first[R];  // 1 .. 8; 0 means 1
};

// The first field of a DescriptorFields that is out of range (descriptor_fields_problem).
// Converts to true when there is one. `what` names the member and index, `rule` says what the
// value must be; both are string literals (usable in device code).
struct DescriptorFieldsProblem {
  const char* what = nullptr;  // e.g. "DescriptorFields::box_inner_first[1]"; null when none
  int index = -1;              // the array index; -1 for the address or when none
  std::uint64_t value = 0;
  const char* rule = nullptr;
  TMA_HOST_DEVICE constexpr explicit operator bool() const { return what != nullptr; }
};

namespace detail {

// "DescriptorFields::<member>[i]" as a literal, for member 0..3 (dims, strides, box, element
// strides) and i in 0..4. A switch, not a table: a table indexed at run time would be copied to
// the device stack.
TMA_HOST_DEVICE constexpr const char* fields_member(int member, int i) {
#define TMA_FIELDS_MEMBER_(name)              \
  switch (i) {                                \
    case 0:                                   \
      return "DescriptorFields::" name "[0]"; \
    case 1:                                   \
      return "DescriptorFields::" name "[1]"; \
    case 2:                                   \
      return "DescriptorFields::" name "[2]"; \
    case 3:                                   \
      return "DescriptorFields::" name "[3]"; \
    default:                                  \
      return "DescriptorFields::" name "[4]"; \
  }
  switch (member) {
    case 0:
      TMA_FIELDS_MEMBER_("dims_inner_first")
    case 1:
      TMA_FIELDS_MEMBER_("strides_bytes_inner_first")
    case 2:
      TMA_FIELDS_MEMBER_("box_inner_first")
    default:
      TMA_FIELDS_MEMBER_("element_strides_inner_first")
  }
#undef TMA_FIELDS_MEMBER_
}

}  // namespace detail

// The first out-of-range field of `f`, in member order (address, dims, strides, box, element
// strides), each array from index 0; an empty problem (false) when every field is in range.
// replace_fields (descriptor.hpp) traps on one in debug builds (TMA_DEBUG_CHECKS), naming it.
template <int R>
TMA_HOST_DEVICE inline DescriptorFieldsProblem descriptor_fields_problem(
    const DescriptorFields<R>& f) {
  const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(f.address));
  if (address == 0 || address % 16 != 0) {
    return {"DescriptorFields::address", -1, address,
            "must be a non-null global address, 16-byte aligned (32 with interleave 32B)"};
  }
  for (int i = 0; i < R; ++i) {
    if (f.dims_inner_first[i] == 0) {
      return {detail::fields_member(0, i), i, 0, "must be 1 .. 2^32 - 1 (an empty dimension)"};
    }
  }
  for (int i = 1; i < R; ++i) {  // [0] is not a field: dimension 0 is contiguous
    const std::uint64_t s = f.strides_bytes_inner_first[i];
    if (s % 16 != 0 || s >= (std::uint64_t{1} << 40)) {
      return {detail::fields_member(1, i), i, s, "must be a multiple of 16 bytes below 2^40"};
    }
  }
  for (int i = 0; i < R; ++i) {
    if (f.box_inner_first[i] == 0 || f.box_inner_first[i] > 256) {
      return {detail::fields_member(2, i), i, f.box_inner_first[i], "must be 1 .. 256"};
    }
  }
  for (int i = 0; i < R; ++i) {
    if (f.element_strides_inner_first[i] > 8) {
      return {detail::fields_member(3, i), i, f.element_strides_inner_first[i],
              "must be 1 .. 8 (0 is taken as 1)"};
    }
  }
  return {};
}

}  // namespace tma
