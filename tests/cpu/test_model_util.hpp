// Helpers shared by the reference model's CPU tests (tests/cpu/test_model_*.cpp): spec builders,
// seeded random buffers, and naive oracles written independently of the model's traversal code.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tma/host/spec.hpp"
#include "tma/model/swizzle.hpp"

namespace tma::model::testing {

// A tiled spec with dense rows (each stride the previous extent, rounded up to 16 B, plus
// `pad_bytes` of padding per row) and unit element strides.
inline TensorMapSpec tiled_spec(DataType t, std::vector<std::uint64_t> dims,
                                std::vector<std::uint32_t> box, Swizzle swz = Swizzle::kNone,
                                std::uint64_t pad_bytes = 0) {
  TensorMapSpec s;
  s.mode = Mode::kTiled;
  s.dtype = t;
  s.rank = static_cast<int>(dims.size());
  const auto es = static_cast<std::uint64_t>(element_bytes(t));
  std::uint64_t stride = (dims[0] * es + 15) / 16 * 16 + pad_bytes;  // stride of dimension 1
  for (std::size_t d = 0; d < dims.size(); ++d) {
    s.dims_inner_first[d] = dims[d];
    s.box_inner_first[d] = box[d];
    if (d == 0) {
      s.strides_bytes_inner_first[0] = es;
    } else {
      s.strides_bytes_inner_first[d] = stride;
      stride *= dims[d];
    }
  }
  s.swizzle = swz;
  return s;
}

// Elements per 16 bytes: a tiled box's coords[0] must be a multiple of it (MEASURED on an H200:
// other starts fault).
inline std::int32_t coord0_quantum(DataType t) {
  const int es = element_bytes(t);
  return es >= 16 ? 1 : 16 / es;
}

inline std::vector<std::byte> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v)
    b = static_cast<std::byte>(rng() & 0xFFu);
  return v;
}

inline std::vector<std::byte> filled(std::size_t n, unsigned char value) {
  return std::vector<std::byte>(n, static_cast<std::byte>(value));
}

template <class T>
void put(std::vector<std::byte>& buf, std::size_t offset, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    buf[offset + i] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xFF);
}

template <class T>
T get(std::span<const std::byte> buf, std::size_t offset) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<std::uint64_t>(std::to_integer<unsigned>(buf[offset + i])) << (8 * i);
  return static_cast<T>(v);
}

// One element a naive tiled traversal visits.
struct NaiveElement {
  std::size_t smem;  // swizzled byte offset in the smem image
  bool in_bounds;
  bool stored;         // a store writes it: in bounds, or past dims[0] inside the row's last 16 B
  std::size_t global;  // byte offset in the global buffer (valid when stored)
};

// Bytes between the starts of consecutive smem rows as measured on an H200: the row's bytes, padded
// to the swizzle span when a swizzle is on and the row is narrower (no interleave here).
inline std::size_t naive_row_pitch(const TensorMapSpec& s, std::size_t row_bytes) {
  std::size_t span = 0;
  if (s.swizzle == Swizzle::k32B) span = 32;
  if (s.swizzle == Swizzle::k64B) span = 64;
  if (s.swizzle == Swizzle::k128B) span = 128;
  return row_bytes < span ? span : row_bytes;
}

// Naive tiled traversal: five explicit nested loops, smem rows dimension 0 fastest at
// naive_row_pitch, dimension 0's stride ignored (no interleave). Independent of layout.hpp's
// odometer.
inline std::vector<NaiveElement> naive_box(const TensorMapSpec& s,
                                           std::span<const std::int32_t> c) {
  const std::size_t es = static_cast<std::size_t>(element_bytes(s.dtype));
  std::array<std::int64_t, 5> ext{1, 1, 1, 1, 1}, step{1, 1, 1, 1, 1}, co{0, 0, 0, 0, 0};
  std::array<std::int64_t, 5> dim{1, 1, 1, 1, 1};
  std::array<std::uint64_t, 5> str{0, 0, 0, 0, 0};
  for (int d = 0; d < s.rank; ++d) {
    step[d] = d == 0 ? 1 : s.element_strides_inner_first[d];
    ext[d] = (static_cast<std::int64_t>(s.box_inner_first[d]) + step[d] - 1) / step[d];
    co[d] = c[d];
    dim[d] = static_cast<std::int64_t>(s.dims_inner_first[d]);
    str[d] = d == 0 ? es : s.strides_bytes_inner_first[d];
  }
  const auto pitch =
      static_cast<std::int64_t>(naive_row_pitch(s, static_cast<std::size_t>(ext[0]) * es));
  // Stores write whole 16 B chunks of dimension 0: up to dims[0] * es rounded up to 16 bytes.
  const std::int64_t stored_bytes = (dim[0] * static_cast<std::int64_t>(es) + 15) / 16 * 16;
  std::vector<NaiveElement> out;
  for (std::int64_t k4 = 0; k4 < ext[4]; ++k4)
    for (std::int64_t k3 = 0; k3 < ext[3]; ++k3)
      for (std::int64_t k2 = 0; k2 < ext[2]; ++k2)
        for (std::int64_t k1 = 0; k1 < ext[1]; ++k1)
          for (std::int64_t k0 = 0; k0 < ext[0]; ++k0) {
            const std::array<std::int64_t, 5> k{k0, k1, k2, k3, k4};
            bool outer_in = true;
            std::uint64_t g = 0;
            for (int d = 1; d < 5; ++d) {
              const std::int64_t i = co[d] + k[d] * step[d];
              if (i < 0 || i >= dim[d])
                outer_in = false;
              else
                g += static_cast<std::uint64_t>(i) * str[d];
            }
            const std::int64_t i0 = co[0] + k0;
            const bool in = outer_in && i0 >= 0 && i0 < dim[0];
            const bool stored =
                outer_in && i0 >= 0 && i0 * static_cast<std::int64_t>(es) < stored_bytes;
            if (stored) g += static_cast<std::uint64_t>(i0) * str[0];
            const std::int64_t row = ((k4 * ext[3] + k3) * ext[2] + k2) * ext[1] + k1;
            const auto unswizzled =
                static_cast<std::uint32_t>(row * pitch + k0 * static_cast<std::int64_t>(es));
            out.push_back({swizzle_offset(s.swizzle, unswizzled), in, stored, stored ? g : 0});
          }
  return out;
}

// The smem image a load should produce, by the naive traversal; bytes outside the image keep
// `poison`. `fill` is the OOB element (little-endian bits).
inline std::vector<std::byte> naive_load(const TensorMapSpec& s, std::span<const std::byte> global,
                                         std::span<const std::int32_t> c, std::size_t smem_size,
                                         std::uint64_t fill, unsigned char poison = 0xCD) {
  const std::size_t es = static_cast<std::size_t>(element_bytes(s.dtype));
  std::vector<std::byte> smem = filled(smem_size, poison);
  for (const NaiveElement& e : naive_box(s, c))
    for (std::size_t b = 0; b < es; ++b)
      smem[e.smem + b] =
          e.in_bounds ? global[e.global + b] : static_cast<std::byte>((fill >> (8 * b)) & 0xFF);
  return smem;
}

}  // namespace tma::model::testing
