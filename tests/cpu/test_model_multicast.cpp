// Multicast loads in the reference model: exactly the ranks in the mask receive load_box's image.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "test_model_util.hpp"
#include "tma/model/model.hpp"

namespace tma::model {
namespace {

using testing::filled;
using testing::random_bytes;
using testing::tiled_spec;

TEST(ModelMulticast, MaskedRanksGetTheBoxOthersKeepTheirBytes) {
  const TensorMapSpec s = tiled_spec(DataType::kBFloat16, {40, 30}, {16, 8}, Swizzle::k32B);
  const auto g = random_bytes(global_footprint_bytes(s), 21);
  const std::int32_t c[] = {32, -3};  // x = 32..47 (40.. past dims[0]), y = -3..4
  std::vector<std::byte> image = filled(smem_bytes(s), 0);
  load_box(s, g, c, image);
  for (int cluster = 1; cluster <= 16; ++cluster) {
    std::vector<std::vector<std::byte>> before;
    for (int r = 0; r < cluster; ++r)
      before.push_back(random_bytes(smem_bytes(s), 1000 + r));
    for (std::uint32_t mask : {0x1u, 0x5u, 0xBu, 0x8001u, 0xFFFFu, 0x2u}) {
      mask &= (1u << cluster) - 1u;
      if (mask == 0) continue;
      const auto after = multicast_load(s, g, c, static_cast<std::uint16_t>(mask), cluster, before);
      ASSERT_EQ(after.size(), static_cast<std::size_t>(cluster));
      for (int r = 0; r < cluster; ++r) {
        if ((mask >> r) & 1u) {
          std::vector<std::byte> want = before[r];
          load_box(s, g, c, want);
          EXPECT_EQ(after[r], want) << "cluster " << cluster << " mask " << mask << " rank " << r;
          EXPECT_EQ(after[r], image);  // the image covers the whole buffer here
        } else {
          EXPECT_EQ(after[r], before[r])
              << "cluster " << cluster << " mask " << mask << " rank " << r;
        }
      }
    }
  }
}

TEST(ModelMulticast, RejectsBadMasksAndSizes) {
  const TensorMapSpec s = tiled_spec(DataType::kUInt8, {64}, {32});
  const auto g = random_bytes(global_footprint_bytes(s), 2);
  const std::int32_t c[] = {0};
  auto buffers = [&](int n) {
    return std::vector<std::vector<std::byte>>(n, std::vector<std::byte>(smem_bytes(s)));
  };
  EXPECT_THROW(multicast_load(s, g, c, 0x1, 0, buffers(0)), std::invalid_argument);
  EXPECT_THROW(multicast_load(s, g, c, 0x1, 17, buffers(17)), std::invalid_argument);
  EXPECT_THROW(multicast_load(s, g, c, 0x10, 4, buffers(4)), std::invalid_argument);  // rank 4 of 4
  EXPECT_THROW(multicast_load(s, g, c, 0x0, 4, buffers(4)), std::invalid_argument);
  EXPECT_THROW(multicast_load(s, g, c, 0x3, 4, buffers(3)), std::invalid_argument);
  auto wrong = buffers(4);
  wrong[2].resize(16);  // an unmasked rank with the wrong size is still an error
  EXPECT_THROW(multicast_load(s, g, c, 0x3, 4, wrong), std::invalid_argument);
  try {
    multicast_load(s, g, c, 0x30, 4, buffers(4));
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cta_mask = 0x30"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(multicast_load(s, g, c, 0xFFFF, 16, buffers(16)));
}

}  // namespace
}  // namespace tma::model
