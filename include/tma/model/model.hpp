// tmakit: the CPU reference model of TMA, all of it. Plain C++20 (no CUDA headers): the GPU tests
// compare the hardware against it byte for byte, and the CPU tests check its properties.
//
//   swizzle.hpp    the shared-memory swizzle (one function shared with device code)
//   layout.hpp     element addressing, shared-memory image layout, OOB fill, argument checks
//   float_bits.hpp exact fp16 / bf16 / fp32 <-> double conversions
//   reduce_op.hpp  ReduceOp, reduce_supported, element-wise reduction semantics
//   load.hpp       load_box                 (tiled load)
//   store.hpp      store_box, reduce_box    (tiled store, reduce-store; clipped)
//   multicast.hpp  multicast_load           (one box to several CTAs of a cluster)
//   im2col.hpp     load_im2col              (im2col load)
#pragma once

#include "tma/config.hpp"
#include "tma/model/float_bits.hpp"
#include "tma/model/im2col.hpp"
#include "tma/model/layout.hpp"
#include "tma/model/load.hpp"
#include "tma/model/multicast.hpp"
#include "tma/model/reduce_op.hpp"
#include "tma/model/store.hpp"
#include "tma/model/swizzle.hpp"
