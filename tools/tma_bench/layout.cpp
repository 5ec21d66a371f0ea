// tma-bench: layouts of the benchmark cases (see layout.hpp).
#include "layout.hpp"

#include <cstdio>
#include <stdexcept>

namespace tma::bench {

std::string_view dtype_name(DataType t) {
  switch (t) {
    case DataType::kUInt8:
      return "u8";
    case DataType::kBFloat16:
      return "bf16";
    case DataType::kFloat16:
      return "fp16";
    case DataType::kFloat32:
      return "fp32";
    default:
      return to_string(t);
  }
}

std::optional<DataType> parse_dtype(std::string_view name) {
  for (int i = 0; i < kNumDataTypes; ++i) {
    const auto t = static_cast<DataType>(i);
    if (name == dtype_name(t) || name == to_string(t)) return t;
  }
  return std::nullopt;
}

std::size_t element_size(const TensorView& v) {
  return static_cast<std::size_t>(element_bytes(v.dtype));
}

std::int64_t footprint_elements(const TensorView& v) {
  if (v.rank <= 0) return 0;
  std::int64_t last = 0;
  for (int d = 0; d < v.rank; ++d) {
    if (v.shape[d] <= 0) return 0;
    last += (v.shape[d] - 1) * v.strides[d];
  }
  return last + 1;
}

std::size_t footprint_bytes(const TensorView& v) {
  return static_cast<std::size_t>(footprint_elements(v)) * element_size(v);
}

std::size_t logical_bytes(const TensorView& v) {
  return static_cast<std::size_t>(v.numel()) * element_size(v);
}

TensorView with_data(TensorView v, void* data) {
  v.data = data;
  return v;
}

TensorView make_layout(DataType t, const std::vector<std::int64_t>& shape,
                       const std::vector<std::int64_t>& strides) {
  if (shape.empty() || shape.size() > static_cast<std::size_t>(kMaxRank) ||
      strides.size() != shape.size()) {
    throw std::logic_error("make_layout: rank " + std::to_string(shape.size()) + " with " +
                           std::to_string(strides.size()) + " strides; need 1..5 of each");
  }
  TensorView v;
  v.dtype = t;
  v.rank = static_cast<int>(shape.size());
  for (int d = 0; d < v.rank; ++d) {
    v.shape[d] = shape[static_cast<std::size_t>(d)];
    v.strides[d] = strides[static_cast<std::size_t>(d)];
  }
  if (!is_nested(v)) {
    throw std::logic_error("make_layout: shape " + shape_string(v) + " strides " +
                           list_string(v.strides.data(), v.rank) +
                           " is not nested; every bench layout must be (layout.hpp)");
  }
  return v;
}

TensorView contiguous_layout(DataType t, const std::vector<std::int64_t>& shape) {
  return pitched_layout(t, shape, shape.back());
}

TensorView pitched_layout(DataType t, const std::vector<std::int64_t>& shape,
                          std::int64_t row_pitch) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  if (shape.size() >= 2) {
    strides[shape.size() - 2] = row_pitch;
    for (std::size_t d = shape.size() - 2; d-- > 0;)
      strides[d] = strides[d + 1] * shape[d + 1];
  }
  return make_layout(t, shape, strides);
}

std::int64_t row_pitch_for(DataType t, std::int64_t cols, std::int64_t extra_bytes) {
  const std::int64_t e = element_bytes(t);
  const std::int64_t bytes = (cols * e + extra_bytes + 15) / 16 * 16;
  return bytes / e;
}

bool is_nested(const TensorView& v) {
  if (v.rank < 1 || v.rank > kMaxRank || v.strides[v.rank - 1] != 1) return false;
  for (int d = 0; d < v.rank; ++d) {
    if (v.shape[d] < 1) return false;
  }
  for (int d = 0; d + 1 < v.rank; ++d) {
    if (v.strides[d] < v.shape[d + 1] * v.strides[d + 1]) return false;
  }
  return true;
}

IndexOf index_of(const TensorView& v, std::int64_t offset) {
  IndexOf r;
  r.inside = offset >= 0;
  std::int64_t rest = offset;
  for (int d = 0; d < v.rank; ++d) {
    const std::int64_t i = rest / v.strides[d];
    rest -= i * v.strides[d];
    r.index.push_back(i);
    if (i >= v.shape[d]) r.inside = false;
  }
  return r;
}

MergedPair merge_contiguous_dims(const TensorView& a, const TensorView& b) {
  MergedPair m{a, b};
  m.a.rank = 0;
  m.b.rank = 0;
  for (int d = 0; d < a.rank; ++d) {
    const int r = m.a.rank;
    if (r > 0 && m.a.strides[r - 1] == a.shape[d] * a.strides[d] &&
        m.b.strides[r - 1] == a.shape[d] * b.strides[d]) {
      m.a.shape[r - 1] *= a.shape[d];
      m.b.shape[r - 1] *= a.shape[d];
      m.a.strides[r - 1] = a.strides[d];
      m.b.strides[r - 1] = b.strides[d];
    } else {
      m.a.shape[r] = m.b.shape[r] = a.shape[d];
      m.a.strides[r] = a.strides[d];
      m.b.strides[r] = b.strides[d];
      m.a.rank = m.b.rank = r + 1;
    }
  }
  for (int d = m.a.rank; d < kMaxRank; ++d)
    m.a.shape[d] = m.b.shape[d] = m.a.strides[d] = m.b.strides[d] = 0;
  return m;
}

std::string shape_string(const TensorView& v) {
  std::string s;
  for (int d = 0; d < v.rank; ++d) {
    if (d > 0) s += 'x';
    s += std::to_string(v.shape[d]);
  }
  return s;
}

std::string list_string(const std::int64_t* values, int count) {
  std::string s = "[";
  for (int i = 0; i < count; ++i) {
    if (i > 0) s += ',';
    s += std::to_string(values[i]);
  }
  return s + "]";
}

std::string size_label(std::size_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kUnits[unit];
}

std::string size_human(std::size_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (unit < 4 && v >= 1024.0) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (v == static_cast<double>(static_cast<std::int64_t>(v))) {
    std::snprintf(buf, sizeof buf, "%lld %s", static_cast<long long>(v), kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  }
  return buf;
}

}  // namespace tma::bench
