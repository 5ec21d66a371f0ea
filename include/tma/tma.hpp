// tmakit: everything on the host side in one include: the spec, validation, the row-major builder,
// encoding (make_tensor_map), device queries and the CPU reference model of TMA.
//
// host/tensor_map.hpp and host/device_support.hpp include the CUDA runtime headers; the rest is
// plain C++. Device code includes tma/device.cuh instead.
#pragma once

#include "tma/config.hpp"
#include "tma/host/builder.hpp"
#include "tma/host/describe.hpp"
#include "tma/host/device_support.hpp"
#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/tensor_map.hpp"
#include "tma/host/types.hpp"
#include "tma/host/validate.hpp"
#include "tma/model/im2col.hpp"
#include "tma/model/load.hpp"
#include "tma/model/multicast.hpp"
#include "tma/model/reduce_op.hpp"
#include "tma/model/store.hpp"
#include "tma/model/swizzle.hpp"
