// Compile-only check of tmakit's device API: every device function is instantiated (each rank,
// each reduce operation, each overload) and has its address taken, so a signature that stops
// compiling, or an overload set that becomes ambiguous, fails the build. The kernels are never
// launched; tools/check_sass.sh reads their SASS to confirm the TMA opcodes and the absence of
// local memory (the CTest test device_compile_check_sass).
#include <cstdint>
#include <cstdio>

#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"

namespace {

using tma::Barrier;
using tma::CacheHint;
using tma::TensorMap;
using ReduceOp = tma::model::ReduceOp;

// ---- compile-time parts: Box, PipelineState, masks, element-type codes ----
using Box64x128 = tma::Box<std::uint16_t, 64, 128>;
static_assert(Box64x128::kRank == 2 && Box64x128::kBytes == 64 * 128 * 2);
using Strided = tma::BoxStrided<float, tma::Extents<32, 8, 3>, tma::Extents<1, 2, 3>>;
static_assert(Strided::kExtentsInnerFirst[0] == 32 && Strided::kExtentsInnerFirst[1] == 4 &&
              Strided::kExtentsInnerFirst[2] == 1 && Strided::kBytes == 32 * 4 * 1 * 4);
static_assert(sizeof(tma::BoxStorage<Box64x128, 1024>) == Box64x128::kBytes &&
              alignof(tma::BoxStorage<Box64x128, 1024>) == 1024);

constexpr tma::TensorMapSpec kSpec64x128 = [] {
  tma::TensorMapSpec s;
  s.dtype = tma::DataType::kUInt16;
  s.rank = 2;
  s.dims_inner_first = {1000, 1000, 0, 0, 0};
  s.strides_bytes_inner_first = {2, 2048, 0, 0, 0};
  s.box_inner_first = {64, 128, 0, 0, 0};
  return s;
}();
static_assert(tma::box_matches<Box64x128>(kSpec64x128));
static_assert(!tma::box_matches<tma::Box<std::uint16_t, 64, 64>>(kSpec64x128));
static_assert(!tma::box_matches<tma::Box<float, 64, 128>>(kSpec64x128));

constexpr bool pipeline_state_wraps() {
  tma::PipelineState s = tma::Pipeline<3>::start();
  const std::uint32_t expect[7][2] = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {0, 0}};
  for (const auto& e : expect) {
    if (s.index != e[0] || s.phase != e[1]) return false;
    s.advance();
  }
  tma::PipelineState t = tma::PipelineState::start(3);
  t.advance(7);
  tma::PipelineState u = tma::PipelineState::start(3);
  for (int i = 0; i < 7; ++i)
    u.advance();
  return t == u;
}
static_assert(pipeline_state_wraps());

constexpr bool phase_flips() {
  tma::Phase p;
  p.flip();
  p.flip();
  p.flip();
  return p.parity == 1;
}
static_assert(phase_flips());

static_assert(tma::cta_mask_all(2) == 0x3 && tma::cta_mask_all(16) == 0xFFFF &&
              tma::cta_mask_range(2, 2) == 0xC);
static_assert(tma::ptx_elemtype(tma::DataType::kFloat32) == 7 &&
              tma::ptx_elemtype(tma::DataType::kFloat32Ftz) == 8 &&
              tma::ptx_elemtype(tma::DataType::kFloat64) == 9 &&
              tma::ptx_elemtype(tma::DataType::kBFloat16) == 10);

// ---- address of every overload ----
// Taking the address (with the exact type for overload sets) makes the compiler resolve and
// instantiate each function; the addresses are then dropped, so no out-of-line copy reaches the
// binary (an out-of-line copy would follow the device ABI and spill callee-saved registers, which
// the warnings-as-errors build rejects; the inlined uses below are what kernels get).
template <class Fn>
__device__ void keep(Fn* fn) {
  (void)fn;
}

template <class M>
__device__ void keep_member(M member) {
  (void)member;
}

template <int R>
__device__ void take_rank_addresses() {
  using Coords = const std::int32_t(&)[R];
  keep(static_cast<void (*)(void*, const TensorMap*, Barrier&, Coords, CacheHint)>(&tma::load<R>));
  keep(static_cast<void (*)(void*, const TensorMap*, Barrier&, Coords, std::uint16_t)>(
      &tma::load_multicast<R>));
  keep(static_cast<void (*)(void*, const TensorMap*, Barrier&, Coords, std::uint16_t, CacheHint)>(
      &tma::load_multicast<R>));
  keep(static_cast<void (*)(const TensorMap*, const void*, Coords, CacheHint)>(&tma::store<R>));
  keep(&tma::reduce<ReduceOp::kAdd, R>);
  keep(&tma::reduce<ReduceOp::kMin, R>);
  keep(&tma::reduce<ReduceOp::kMax, R>);
  keep(&tma::reduce<ReduceOp::kInc, R>);
  keep(&tma::reduce<ReduceOp::kDec, R>);
  keep(&tma::reduce<ReduceOp::kAnd, R>);
  keep(&tma::reduce<ReduceOp::kOr, R>);
  keep(&tma::reduce<ReduceOp::kXor, R>);
  keep(static_cast<void (*)(const TensorMap*, Coords)>(&tma::prefetch_tile<R>));
  keep(static_cast<void (*)(const TensorMap*, Coords, CacheHint)>(&tma::prefetch_tile<R>));
  keep(&tma::replace_fields<R>);
  keep(&tma::make_descriptor<R>);
  keep(&tma::update_descriptor<R>);
  if constexpr (R >= 3) {
    using Offsets = const std::uint16_t(&)[R - 2];
    keep(static_cast<void (*)(void*, const TensorMap*, Barrier&, Coords, Offsets)>(
        &tma::load_im2col<R>));
    keep(static_cast<void (*)(void*, const TensorMap*, Barrier&, Coords, Offsets, CacheHint)>(
        &tma::load_im2col<R>));
    keep(&tma::load_im2col_multicast<R>);
    keep(&tma::prefetch_im2col<R>);
  }
}

__global__ void take_addresses() {
  take_rank_addresses<1>();
  take_rank_addresses<2>();
  take_rank_addresses<3>();
  take_rank_addresses<4>();
  take_rank_addresses<5>();
  keep(&tma::prefetch_descriptor);
  keep(&tma::bulk_load);
  keep(&tma::bulk_load_multicast);
  keep(&tma::bulk_store);
  keep(&tma::bulk_prefetch);
  keep(&tma::commit_group);
  keep(&tma::wait_group<0>);
  keep(&tma::wait_group<1>);
  keep(&tma::wait_group_read<0>);
  keep(&tma::wait_group_read<1>);
  keep(&tma::fence_proxy_async_shared);
  keep(&tma::fence_proxy_async_global);
  keep(&tma::fence_proxy_async);
  keep(&tma::fence_barrier_init);
  keep(&tma::make_cache_policy);
  keep(&tma::cluster_cta_rank);
  keep(&tma::cluster_size);
  keep(&tma::cluster_arrive);
  keep(&tma::cluster_arrive_relaxed);
  keep(&tma::cluster_wait);
  keep(&tma::cluster_sync);
  keep(&tma::peer_shared<int>);
  keep(&tma::copy_descriptor);
  keep(&tma::replace_format);
  keep(&tma::publish_descriptor);
  keep(&tma::release_descriptor);
  keep(&tma::acquire_descriptor);
  // Members: addresses of member functions (their first 8 bytes suffice to keep them).
  keep_member(&Barrier::init);
  keep_member(static_cast<void (Barrier::*)()>(&Barrier::arrive));
  keep_member(static_cast<void (Barrier::*)(std::uint32_t)>(&Barrier::arrive));
  keep_member(static_cast<void (Barrier::*)(std::uint32_t)>(&Barrier::arrive_expect_tx));
  keep_member(&Barrier::arrive_expect_tx<Box64x128>);
  keep_member(&Barrier::arrive_expect_tx<Box64x128, 2>);
  keep_member(&Barrier::expect_tx);
  keep_member(&Barrier::try_wait_parity);
  keep_member(&Barrier::try_wait_parity_cluster);
  keep_member(&Barrier::wait);
  keep_member(&Barrier::wait_cluster);
  keep_member(&Barrier::wait_next);
  keep_member(&Barrier::arrive_remote);
  keep_member(&Barrier::arrive_remote_after_reads);
  using Pipe = tma::Pipeline<3>;
  keep_member(&Pipe::init);
  keep_member(&Pipe::producer_acquire);
  keep_member(&Pipe::producer_try_acquire);
  keep_member(&Pipe::producer_drain);
  keep_member(&Pipe::full);
  keep_member(
      static_cast<void (Pipe::*)(tma::PipelineState, std::uint32_t)>(&Pipe::producer_commit));
  keep_member(&Pipe::producer_commit<Box64x128>);
  keep_member(&Pipe::producer_commit<Box64x128, 2>);
  keep_member(&Pipe::consumer_wait);
  keep_member(&Pipe::consumer_try_wait);
  keep_member(static_cast<void (Pipe::*)(tma::PipelineState)>(&Pipe::consumer_release));
  keep_member(
      static_cast<void (Pipe::*)(tma::PipelineState, std::uint16_t)>(&Pipe::consumer_release));
  keep_member(&Pipe::consumer_release_to);
}

// ---- every operation issued once, so the SASS holds each TMA opcode ----
struct Args {
  std::int32_t c[5];
  std::uint16_t off[3];
  std::uint16_t mask;
  std::uint32_t bytes;
  CacheHint hint;
  const void* gsrc;
  void* gdst;
  TensorMap* desc_out;
  const void* new_address;
};

template <int R>
__device__ void issue_rank(const TensorMap* map, void* smem, Barrier& bar, const Args& a) {
  std::int32_t c[R];
#pragma unroll
  for (int i = 0; i < R; ++i)
    c[i] = a.c[i];
  tma::load(smem, map, bar, c);
  tma::load(smem, map, bar, c, a.hint);
  tma::load_multicast(smem, map, bar, c, a.mask);
  tma::load_multicast(smem, map, bar, c, a.mask, a.hint);
  tma::store(map, smem, c);
  tma::store(map, smem, c, a.hint);
  tma::reduce<ReduceOp::kAdd>(map, smem, c);
  tma::reduce<ReduceOp::kMin>(map, smem, c);
  tma::reduce<ReduceOp::kMax>(map, smem, c);
  tma::reduce<ReduceOp::kInc>(map, smem, c);
  tma::reduce<ReduceOp::kDec>(map, smem, c);
  tma::reduce<ReduceOp::kAnd>(map, smem, c);
  tma::reduce<ReduceOp::kOr>(map, smem, c);
  tma::reduce<ReduceOp::kXor>(map, smem, c);
  tma::prefetch_tile(map, c);
  tma::prefetch_tile(map, c, a.hint);
  if constexpr (R >= 3) {
    std::uint16_t off[R - 2];
#pragma unroll
    for (int i = 0; i < R - 2; ++i)
      off[i] = a.off[i];
    tma::load_im2col(smem, map, bar, c, off);
    tma::load_im2col(smem, map, bar, c, off, a.hint);
    tma::load_im2col_multicast(smem, map, bar, c, off, a.mask);
    tma::prefetch_im2col(map, c, off);
  }
}

__global__ void issue_everything(const __grid_constant__ TensorMap map, Args a) {
  __shared__ tma::BoxStorage<Box64x128, 1024> tile;
  __shared__ Barrier bar;
  __shared__ tma::Pipeline<3> pipe;
  __shared__ tma::DescriptorScratch scratch;
  if (threadIdx.x == 0) {
    bar.init(1);
    pipe.init(1, 2);
    tma::fence_barrier_init();
  }
  tma::cluster_sync();
  if (threadIdx.x == 0) {
    tma::prefetch_descriptor(&map);
    bar.arrive_expect_tx<Box64x128>();
    bar.expect_tx(a.bytes);
    issue_rank<1>(&map, &tile, bar, a);
    issue_rank<2>(&map, &tile, bar, a);
    issue_rank<3>(&map, &tile, bar, a);
    issue_rank<4>(&map, &tile, bar, a);
    issue_rank<5>(&map, &tile, bar, a);
    tma::bulk_load(&tile, a.gsrc, a.bytes, bar);
    tma::bulk_load_multicast(&tile, a.gsrc, a.bytes, bar, a.mask);
    tma::bulk_store(a.gdst, &tile, a.bytes);
    tma::bulk_prefetch(a.gsrc, a.bytes);
    tma::commit_group();
    tma::wait_group_read<1>();
    tma::wait_group<0>();
  }
  tma::Phase phase;
  bar.wait_next(phase);
  bar.wait(phase.parity);
  bar.wait_cluster(phase.parity);
  if (bar.try_wait_parity(0) && bar.try_wait_parity_cluster(1)) bar.arrive();
  bar.arrive(2);
  bar.arrive_expect_tx(a.bytes);
  bar.arrive_remote(a.mask & 1u);
  bar.arrive_remote_after_reads(a.mask & 1u);
  tma::PipelineState s = pipe.start();
  pipe.producer_acquire(s);
  if (pipe.producer_try_acquire(s)) pipe.producer_commit(s, a.bytes);
  pipe.producer_commit<Box64x128>(s);
  tma::load(&tile, &map, pipe.full(s), {a.c[0], a.c[1]});
  pipe.consumer_wait(s);
  if (pipe.consumer_try_wait(s)) pipe.consumer_release(s);
  pipe.consumer_release(s, a.mask);
  pipe.consumer_release_to(s, 1u);
  s.advance();
  pipe.producer_drain(s);
  tma::fence_proxy_async_shared();
  tma::fence_proxy_async_global();
  tma::fence_proxy_async();
  int* peer = tma::peer_shared(reinterpret_cast<int*>(&tile), tma::cluster_size() - 1);
  peer[threadIdx.x] = static_cast<int>(tma::cluster_cta_rank());
  if (threadIdx.x < 32) {
    tma::make_descriptor(a.desc_out, &map,
                         tma::DescriptorFields<2>{a.new_address, {64, 64}, {2, 128}, {64, 8}},
                         scratch);
  }
  if (threadIdx.x == 0) {
    tma::replace_format(a.desc_out, tma::DataType::kBFloat16, tma::Interleave::kNone,
                        tma::Swizzle::k128B, tma::OobFill::kZero);
    tma::update_descriptor(
        a.desc_out,
        tma::DescriptorFields<3>{a.new_address, {8, 8, 8}, {4, 32, 256}, {8, 8, 8}, {1, 2, 1}});
    tma::acquire_descriptor(a.desc_out);
    tma::load(&tile, a.desc_out, bar, {a.c[0], a.c[1], a.c[2]});
    tma::copy_descriptor(&scratch, &map);
    tma::release_descriptor();
    *static_cast<std::uint64_t*>(a.gdst) = tma::make_cache_policy(a.hint);
  }
  tma::cluster_arrive();
  tma::cluster_wait();
  tma::cluster_arrive_relaxed();
  tma::cluster_wait();
}

}  // namespace

int main() {
  // Never launched: this program exists for the compiler and for tools/check_sass.sh. Referencing
  // the kernels keeps them in the binary.
  std::printf("tmakit device compile check: %p %p\n", reinterpret_cast<void*>(&take_addresses),
              reinterpret_cast<void*>(&issue_everything));
  return 0;
}
