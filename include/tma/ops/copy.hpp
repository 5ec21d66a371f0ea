// tmakit ops: copy and transpose of strided tensors, through TMA (persistent, multi-stage
// TMA-load -> TMA-store pipelines) or through ordinary 16-byte loads and stores, the baseline that
// measures what TMA gains.
//
// Host entry points: they validate every argument (types, shapes, alignment, strides, overlap of
// input and output) and throw tma::Error naming the argument, the value and the fix before anything
// is launched. Launches go to `stream`; the functions do not synchronize.
// Link tmakit::ops (src/ops/).
#pragma once

#include <cuda_runtime_api.h>

#include "tma/config.hpp"
#include "tma/ops/tensor_view.hpp"

namespace tma::ops {

// Which data path moves the bytes.
enum class Path { kTma, kOrdinary };

// dst = src, element for element. Same dtype and shape (rank 1..5); any strides whose innermost is
// 1 (TMA's innermost dimension is contiguous), the other strides multiples of 16 bytes, bases
// 16-byte aligned; dst must not overlap src. Any element type of 1, 2, 4 or 8 bytes.
void copy(const TensorView& dst, const TensorView& src, cudaStream_t stream = nullptr,
          Path path = Path::kTma);

// dst[b][j][i] = src[b][i][j]: src is [rows, cols] or [batch, rows, cols], dst the transposed
// [cols, rows] / [batch, cols, rows]. Any element type of 2 or 4 bytes (bf16, fp16, fp32, ...: the
// elements are moved, not converted; tested on bf16, fp16 and fp32). Innermost strides 1, other
// strides multiples of 16 bytes, bases 16-byte aligned, no overlap.
void transpose(const TensorView& dst, const TensorView& src, cudaStream_t stream = nullptr,
               Path path = Path::kTma);

}  // namespace tma::ops
