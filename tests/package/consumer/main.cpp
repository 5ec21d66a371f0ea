// Uses the host API the way a user would: describe a bf16 matrix and a box, validate it, and
// print the verdict. Runs without a GPU. Exits non-zero if the library misbehaves.
#include <cstdio>

#include "tma/tma.hpp"

int main() {
  tma::TensorMapSpec good;
  good.dtype = tma::DataType::kBFloat16;
  good.rank = 2;
  good.address = reinterpret_cast<const void*>(std::uintptr_t{1} << 20);
  good.dims_inner_first = {4096, 4096, 0, 0, 0};
  good.strides_bytes_inner_first = {2, 8192, 0, 0, 0};
  good.box_inner_first = {64, 128, 0, 0, 0};
  good.swizzle = tma::Swizzle::k128B;

  tma::TensorMapSpec bad = good;
  bad.box_inner_first[0] = 96;  // 192 B rows do not fit the 128 B swizzle span

  // The README's snippet: the row-major builder, as Triton's TensorDescriptor would say it.
  const void* ptr = good.address;
  const tma::TensorMapSpec built = tma::make_tiled_spec<tma::bf16>(
      ptr, {4096, 4096}, {4096, 1}, {128, 64}, {.swizzle = tma::Swizzle::k128B});
  if (built.dims_inner_first[0] != 4096 || built.box_inner_first[0] != 64 ||
      built.strides_bytes_inner_first[1] != 8192) {
    std::printf("builder converted the row-major form wrongly\n");
    return 1;
  }
  const auto ok = tma::validate(good);
  const auto broken = tma::validate(bad);
  std::printf("good spec: %zu violations, %llu transaction bytes\n", ok.size(),
              static_cast<unsigned long long>(tma::transaction_bytes(good)));
  for (const auto& v : broken)
    std::printf("bad spec: %s\n", v.message.c_str());
  return ok.empty() && !broken.empty() ? 0 : 1;
}
