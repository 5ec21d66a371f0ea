// The range check of device-built descriptors' fields (tma/device/descriptor_fields.hpp), on the
// CPU: every field at the edges of its range, the first problem reported in member order, and
// agreement with the validator on the same tensor.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tma/device/descriptor_fields.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/validate.hpp"

namespace tma {
namespace {

const void* const kAddress = reinterpret_cast<const void*>(std::uintptr_t{1} << 20);

// A valid rank-3 descriptor: a 100 x 64 x 8 fp32 tensor, rows of 512 B, 64 x 32 x 1 boxes.
DescriptorFields<3> good() {
  return {kAddress, {100, 64, 8}, {4, 512, 512 * 64}, {64, 32, 1}, {1, 0, 2}};
}

std::string what(const DescriptorFieldsProblem& p) {
  return p.what == nullptr ? "none" : p.what;
}

TEST(DescriptorFields, AValidSetHasNoProblem) {
  EXPECT_FALSE(descriptor_fields_problem(good())) << what(descriptor_fields_problem(good()));
  DescriptorFields<3> edges = good();
  edges.dims_inner_first[0] = 0xFFFFFFFFu;  // the .b32 field's largest value
  edges.strides_bytes_inner_first[2] = (std::uint64_t{1} << 40) - 16;
  edges.box_inner_first[1] = 256;
  edges.element_strides_inner_first[2] = 8;
  edges.strides_bytes_inner_first[0] = 3;  // [0] is not a field: anything goes
  EXPECT_FALSE(descriptor_fields_problem(edges)) << what(descriptor_fields_problem(edges));
}

TEST(DescriptorFields, EachFieldOutOfRangeIsNamedWithItsValue) {
  struct Case {
    void (*mutate)(DescriptorFields<3>&);
    const char* what;
    int index;
    std::uint64_t value;
  };
  const Case cases[] = {
      {[](DescriptorFields<3>& f) { f.address = nullptr; }, "DescriptorFields::address", -1, 0},
      {[](DescriptorFields<3>& f) { f.address = static_cast<const char*>(kAddress) + 8; },
       "DescriptorFields::address", -1, (std::uint64_t{1} << 20) + 8},
      {[](DescriptorFields<3>& f) { f.dims_inner_first[2] = 0; },
       "DescriptorFields::dims_inner_first[2]", 2, 0},
      {[](DescriptorFields<3>& f) { f.strides_bytes_inner_first[1] = 520; },
       "DescriptorFields::strides_bytes_inner_first[1]", 1, 520},
      {[](DescriptorFields<3>& f) { f.strides_bytes_inner_first[2] = std::uint64_t{1} << 40; },
       "DescriptorFields::strides_bytes_inner_first[2]", 2, std::uint64_t{1} << 40},
      {[](DescriptorFields<3>& f) { f.box_inner_first[0] = 0; },
       "DescriptorFields::box_inner_first[0]", 0, 0},
      {[](DescriptorFields<3>& f) { f.box_inner_first[1] = 257; },
       "DescriptorFields::box_inner_first[1]", 1, 257},
      {[](DescriptorFields<3>& f) { f.element_strides_inner_first[2] = 9; },
       "DescriptorFields::element_strides_inner_first[2]", 2, 9},
  };
  for (const Case& c : cases) {
    DescriptorFields<3> f = good();
    c.mutate(f);
    const DescriptorFieldsProblem p = descriptor_fields_problem(f);
    ASSERT_TRUE(p) << c.what;
    EXPECT_EQ(what(p), c.what);
    EXPECT_EQ(p.index, c.index) << c.what;
    EXPECT_EQ(p.value, c.value) << c.what;
    ASSERT_NE(p.rule, nullptr) << c.what;
    EXPECT_NE(std::string(p.rule).find("must be"), std::string::npos) << p.rule;
  }
}

TEST(DescriptorFields, TheFirstProblemInMemberOrderIsReported) {
  DescriptorFields<3> f = good();
  f.element_strides_inner_first[0] = 9;
  f.box_inner_first[2] = 300;
  f.dims_inner_first[1] = 0;
  EXPECT_EQ(what(descriptor_fields_problem(f)), "DescriptorFields::dims_inner_first[1]");
  f.dims_inner_first[1] = 64;
  EXPECT_EQ(what(descriptor_fields_problem(f)), "DescriptorFields::box_inner_first[2]");
}

// The fields' ranges are the validator's for the same tensor: a spec built from fields that the
// check accepts passes validate() where only these fields vary (fp32, no swizzle, box inner bytes
// kept a multiple of 16), and a field the check rejects is a violation there too.
TEST(DescriptorFields, AgreeWithTheValidatorOnTheSameTensor) {
  const auto spec_of = [](const DescriptorFields<3>& f) {
    TensorMapSpec s;
    s.dtype = DataType::kFloat32;
    s.rank = 3;
    s.address = f.address;
    for (int d = 0; d < 3; ++d) {
      s.dims_inner_first[d] = f.dims_inner_first[d];
      s.strides_bytes_inner_first[d] = d == 0 ? 4 : f.strides_bytes_inner_first[d];
      s.box_inner_first[d] = f.box_inner_first[d];
      s.element_strides_inner_first[d] =
          f.element_strides_inner_first[d] == 0 ? 1 : f.element_strides_inner_first[d];
    }
    return s;
  };
  EXPECT_TRUE(validate(spec_of(good())).empty());
  using Mutation = void (*)(DescriptorFields<3>&);
  const Mutation broken[] = {
      [](DescriptorFields<3>& f) { f.strides_bytes_inner_first[1] = 520; },
      [](DescriptorFields<3>& f) { f.box_inner_first[1] = 257; },
      [](DescriptorFields<3>& f) { f.element_strides_inner_first[1] = 9; },
      [](DescriptorFields<3>& f) { f.dims_inner_first[0] = 0; },
  };
  for (const Mutation mutate : broken) {
    DescriptorFields<3> f = good();
    mutate(f);
    const DescriptorFieldsProblem p = descriptor_fields_problem(f);
    EXPECT_TRUE(p);
    EXPECT_FALSE(validate(spec_of(f)).empty()) << what(p);
  }
}

}  // namespace
}  // namespace tma
