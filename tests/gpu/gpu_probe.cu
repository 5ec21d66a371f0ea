// gpu_probe: one TMA copy of one spec, on the hardware and in the reference model, for pinning down
// a rule: the random suites find that a class of specs misbehaves, a list of probes
// (tests/gpu/probes.txt, run by tests/gpu/run_probes.sh) says exactly which.
//
//   gpu_probe load|store dtype=bf16 dims=70,4 box=64,4 [strides=..] [es=1,1] [swizzle=128B]
//             [interleave=none] [fill=zero|nan] coords=0,0 [options]
//   gpu_probe im2col dtype=uint32 dims=C,W[,H[,D]],N lower=.. upper=.. cpp=4 ppc=11 [es=..]
//             [swizzle=..] [fill=..] coords=c,w[,h[,d]],n offsets=.. [options]
// dims, box, es, coords innermost first; strides in bytes for dims 1.. (default: dense rows padded
// to 16 B, 32 B with interleave 32B). im2col: lower / upper (the pixel bounding box corners) and
// offsets one value per spatial dimension, W first; cpp = channels per pixel, ppc = pixels per
// column; compared with model::load_im2col.
//
// Options:
//   data=random|tagged  What the copy's source holds (default random). tagged: every 16-bit
//       halfword holds a tag naming its own position, 0xC000 | ((offset / 2) mod 0x4000), where
//       offset is the halfword's byte offset from the source's origin: loads, the tensor base
//       (the global buffer is tagged from 4 KiB before the base to 4 KiB past the tensor, so reads
//       outside the tensor are named too); stores, the start of the shared-memory image (global
//       memory then starts as poison 0xA5). Any element of 2, 4 or 8 bytes names the source bytes
//       it came from (1-byte elements in pairs). The top bits 11 keep tags apart from the poison
//       0xA5A5, zero fill and OOB-NaN 0x7FF7. Offsets read back uniquely within -8 KiB .. 24 KiB.
//   dump  On a mismatch or timeout, print the hardware's and the model's images (tagged: as the
//       source offsets each 16-byte chunk holds, runs merged; else as hex, differing chunks
//       only), at most kDumpLines lines.
//   align=N  The tensor base is N bytes past a 1024-byte boundary (default 0).
//   tx=N     Bytes the load's mbarrier expects (default transaction_bytes(spec)).
//   novalidate  Skip tmakit's validator and encode with the raw driver call (encode_unchecked).
//   predict  No GPU: print the model's image as `dump` would (random data: every chunk in hex).
//
// Shared memory: the image sits between two poisoned guards (1 KiB before, up to 32 KiB after);
// a write outside the image is a mismatch. Prints one verdict line first: PASS, MISMATCH (bytes
// differing in the image, first offset, hardware vs model; bytes written outside it), TIMEOUT
// (the mbarrier never completed; what landed is still compared), FAULT (the CUDA error),
// INVALID (the validator's verdict), DRIVER-REJECT (novalidate: the CUresult), MODEL-ERROR (the
// model refuses the spec; the hardware image is still dumped) or ERROR (bad arguments); dump
// lines follow, indented. Exit 0 pass, 1 mismatch / timeout / model error, 2 fault / error /
// driver reject, 3 invalid, 77 no GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tma/device.cuh"
#include "tma/host/tensor_map.hpp"
#include "tma/host/validate.hpp"
#include "tma/model/im2col.hpp"
#include "tma/model/load.hpp"
#include "tma/model/store.hpp"

namespace {

using namespace tma;

enum class Verb : int { kLoad, kStore, kIm2col };

constexpr int kAlign = 1024;                    // image alignment: the largest swizzle repeat
constexpr std::size_t kGuardBefore = 1024;      // poisoned bytes before the image (1024-aligned)
constexpr std::size_t kGuardAfter = 32768;      // after it: room for loads that write too much
constexpr std::size_t kMaxRegion = 200 * 1024;  // below the 227 KiB a block may have
constexpr std::size_t kMargin = 4096;           // global bytes before the base, after the tensor
constexpr std::byte kPoison{0xA5};
constexpr std::uint16_t kPoisonHalf = 0xA5A5;
constexpr std::uint16_t kTagMark = 0xC000;
constexpr std::uint16_t kNanHalf = 0x7FF7;    // the OOB-NaN's 16-bit pattern (model::oob_nan_bits)
constexpr long long kWaitCycles = 400000000;  // ~0.2 s at 2 GHz, then TIMEOUT
constexpr long long kSettleCycles = 2000000;  // ~1 ms: see probe_kernel
constexpr int kDumpLines = 160;

// ---- device ----------------------------------------------------------------------------------

struct KernelArgs {
  Verb verb;
  int rank;
  std::int32_t coords[kMaxRank];
  std::uint16_t offsets[3];    // im2col: one per spatial dimension, W first
  std::uint32_t region_bytes;  // guard + image + guard, a multiple of 16
  std::uint32_t image_offset;  // kGuardBefore
  std::uint32_t expect_tx;     // loads: bytes the mbarrier expects
};

// Issues the copy (thread 0): tiled load / store (with its bulk-group wait) or im2col load.
template <int R>
__device__ void issue(const KernelArgs& a, std::byte* image, const TensorMap* map, Barrier& bar) {
  std::int32_t c[R];
  for (int i = 0; i < R; ++i)
    c[i] = a.coords[i];
  if (a.verb == Verb::kLoad) {
    load<R>(image, map, bar, c);
  } else if (a.verb == Verb::kStore) {
    store<R>(map, image, c);
    commit_group();
    wait_group<0>();
  } else if constexpr (R >= 3) {
    std::uint16_t o[R - 2];
    for (int i = 0; i < R - 2; ++i)
      o[i] = a.offsets[i];
    load_im2col<R>(image, map, bar, c, o);
  }
}

// One block: copies the host-prepared region (poisoned guards, poison or the store's source
// image) into shared memory, issues the copy, waits, and copies the whole region back.
__global__ void probe_kernel(const __grid_constant__ TensorMap map, const KernelArgs a,
                             std::byte* region_io, unsigned* status) {
  extern __shared__ std::byte raw[];
  __shared__ Barrier bar;
  std::byte* region = raw + (kAlign - ptx::smem_addr(raw) % kAlign) % kAlign;
  std::byte* image = region + a.image_offset;
  for (std::uint32_t i = threadIdx.x; i < a.region_bytes; i += blockDim.x)
    region[i] = region_io[i];
  fence_proxy_async_shared();  // the generic-proxy poison must land before the copy's bytes
  if (threadIdx.x == 0) {
    bar.init(1);
    fence_barrier_init();
  }
  __syncthreads();
  const bool is_load = a.verb != Verb::kStore;
  if (threadIdx.x == 0) {
    if (is_load) bar.arrive_expect_tx(a.expect_tx);
    switch (a.rank) {
      case 1:
        issue<1>(a, image, &map, bar);
        break;
      case 2:
        issue<2>(a, image, &map, bar);
        break;
      case 3:
        issue<3>(a, image, &map, bar);
        break;
      case 4:
        issue<4>(a, image, &map, bar);
        break;
      default:
        issue<5>(a, image, &map, bar);
        break;
    }
  }
  if (is_load) {
    const long long start = clock64();
    while (!bar.try_wait_parity(0)) {
      if (clock64() - start > kWaitCycles) {
        if (threadIdx.x == 0) atomicOr(status, 1u);
        break;  // copy back what landed: a short load shows which bytes it did write
      }
    }
    // A load that delivers more bytes than expect_tx completes the phase before its last bytes
    // land: give them time, so that the image shows everything the copy wrote.
    const long long settle = clock64();
    while (clock64() - settle < kSettleCycles) {
    }
  }
  __syncthreads();
  for (std::uint32_t i = threadIdx.x; i < a.region_bytes; i += blockDim.x)
    region_io[i] = region[i];
}

// ---- arguments -------------------------------------------------------------------------------

struct Probe {
  Verb verb = Verb::kLoad;
  TensorMapSpec spec;
  std::vector<std::int32_t> coords;
  std::vector<std::uint16_t> offsets;
  std::vector<long long> strides;  // dims 1.., as given
  bool tagged = false, dump = false, novalidate = false, predict = false;
  std::size_t align = 0;
  std::optional<std::uint32_t> tx;
};

std::vector<long long> list(const std::string& key, const std::string& s) {
  std::vector<long long> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    try {
      v.push_back(std::stoll(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty()) {
      throw std::invalid_argument(key + "=" + s + ": '" + item + "' is not an integer");
    }
  }
  return v;
}

DataType dtype_of(const std::string& s) {
  for (int t = 0; t < kNumDataTypes; ++t)
    if (to_string(static_cast<DataType>(t)) == s) return static_cast<DataType>(t);
  const std::pair<const char*, DataType> alias[] = {
      {"bf16", DataType::kBFloat16}, {"fp16", DataType::kFloat16}, {"fp32", DataType::kFloat32},
      {"fp64", DataType::kFloat64},  {"u8", DataType::kUInt8},     {"u16", DataType::kUInt16},
      {"u32", DataType::kUInt32},    {"u64", DataType::kUInt64},   {"i32", DataType::kInt32},
      {"i64", DataType::kInt64}};
  for (const auto& [name, t] : alias)
    if (s == name) return t;
  throw std::invalid_argument("dtype=" + s + " is not a tma::DataType name (e.g. bfloat16, bf16)");
}

Swizzle swizzle_of(const std::string& s) {
  for (int v = 0; v <= 6; ++v)
    if (to_string(static_cast<Swizzle>(v)) == s) return static_cast<Swizzle>(v);
  throw std::invalid_argument("swizzle=" + s + " is not one of none, 32B, 64B, 128B");
}

Interleave interleave_of(const std::string& s) {
  for (int v = 0; v <= 2; ++v)
    if (to_string(static_cast<Interleave>(v)) == s) return static_cast<Interleave>(v);
  throw std::invalid_argument("interleave=" + s + " is not one of none, 16B, 32B");
}

template <class T, std::size_t N>
void put(std::array<T, N>& dst, const std::string& key, const std::vector<long long>& v) {
  if (v.size() > N)
    throw std::invalid_argument(key + " has more than " + std::to_string(N) + " values");
  for (std::size_t j = 0; j < v.size(); ++j)
    dst[j] = static_cast<T>(v[j]);
}

// Reads argv into a Probe and fills the defaults (strides). Throws std::invalid_argument.
Probe parse(int argc, char** argv) {
  Probe p;
  const std::string verb = argv[1];
  if (verb == "load") {
    p.verb = Verb::kLoad;
  } else if (verb == "store") {
    p.verb = Verb::kStore;
  } else if (verb == "im2col") {
    p.verb = Verb::kIm2col;
  } else {
    throw std::invalid_argument("the first argument is '" + verb + "': use load, store or im2col");
  }
  TensorMapSpec& s = p.spec;
  s.mode = p.verb == Verb::kIm2col ? Mode::kIm2col : Mode::kTiled;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string k = a.substr(0, eq), v = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (k == "dtype") {
      s.dtype = dtype_of(v);
    } else if (k == "dims") {
      const auto d = list(k, v);
      put(s.dims_inner_first, k, d);
      s.rank = static_cast<int>(d.size());
    } else if (k == "box") {
      put(s.box_inner_first, k, list(k, v));
    } else if (k == "es") {
      put(s.element_strides_inner_first, k, list(k, v));
    } else if (k == "strides") {
      p.strides = list(k, v);
    } else if (k == "swizzle") {
      s.swizzle = swizzle_of(v);
    } else if (k == "interleave") {
      s.interleave = interleave_of(v);
    } else if (k == "fill") {
      if (v != "nan" && v != "zero") throw std::invalid_argument("fill=" + v + ": use zero or nan");
      s.oob_fill = v == "nan" ? OobFill::kNan : OobFill::kZero;
    } else if (k == "coords") {
      for (long long c : list(k, v))
        p.coords.push_back(static_cast<std::int32_t>(c));
    } else if (k == "lower") {
      put(s.pixel_box_lower_corner, k, list(k, v));
    } else if (k == "upper") {
      put(s.pixel_box_upper_corner, k, list(k, v));
    } else if (k == "cpp") {
      s.channels_per_pixel = static_cast<std::uint32_t>(list(k, v).at(0));
    } else if (k == "ppc") {
      s.pixels_per_column = static_cast<std::uint32_t>(list(k, v).at(0));
    } else if (k == "offsets") {
      for (long long o : list(k, v))
        p.offsets.push_back(static_cast<std::uint16_t>(o));
    } else if (k == "data") {
      if (v != "tagged" && v != "random")
        throw std::invalid_argument("data=" + v + ": use random or tagged");
      p.tagged = v == "tagged";
    } else if (k == "align") {
      p.align = static_cast<std::size_t>(list(k, v).at(0));
      if (p.align % 16 != 0 || p.align >= kMargin) {
        throw std::invalid_argument("align=" + v + ": use a multiple of 16 below " +
                                    std::to_string(kMargin));
      }
    } else if (k == "tx") {
      p.tx = static_cast<std::uint32_t>(list(k, v).at(0));
    } else if (k == "dump" && eq == std::string::npos) {
      p.dump = true;
    } else if (k == "novalidate" && eq == std::string::npos) {
      p.novalidate = true;
    } else if (k == "predict" && eq == std::string::npos) {
      p.predict = true;
    } else {
      throw std::invalid_argument("unknown argument '" + a + "' (see the usage in gpu_probe.cu)");
    }
  }
  if (s.rank < 1 || s.rank > kMaxRank) throw std::invalid_argument("dims= needs 1..5 values");
  if (p.coords.size() != static_cast<std::size_t>(s.rank)) {
    throw std::invalid_argument("coords= has " + std::to_string(p.coords.size()) +
                                " values for rank " + std::to_string(s.rank) +
                                ": give one per dimension");
  }
  if (p.verb == Verb::kIm2col &&
      (s.rank < 3 || p.offsets.size() != static_cast<std::size_t>(s.rank - 2))) {
    throw std::invalid_argument(
        "im2col needs rank 3..5 and offsets= with rank - 2 values (W first)");
  }
  // Default strides: dense rows padded to the alignment the driver requires.
  const std::uint64_t pad = s.interleave == Interleave::k32B ? 32 : 16;
  std::uint64_t stride = (s.dims_inner_first[0] * element_bytes(s.dtype) + pad - 1) / pad * pad;
  for (int d = 1; d < s.rank; ++d) {
    const std::size_t j = static_cast<std::size_t>(d - 1);
    s.strides_bytes_inner_first[d] =
        j < p.strides.size() ? static_cast<std::uint64_t>(p.strides[j]) : stride;
    stride = s.strides_bytes_inner_first[d] * s.dims_inner_first[d];
  }
  return p;
}

// The probe on one line, as every verdict repeats it.
std::string describe(const Probe& p, const char* verb) {
  std::ostringstream o;
  o << verb << ' ' << to_string(p.spec) << " coords=";
  for (auto c : p.coords)
    o << c << ',';
  if (p.verb == Verb::kIm2col) {
    o << " offsets=";
    for (auto v : p.offsets)
      o << v << ',';
  }
  if (p.tagged) o << " data=tagged";
  if (p.align != 0) o << " align=" << p.align;
  if (p.tx) o << " tx=" << *p.tx;
  return o.str();
}

// ---- tags and dumps --------------------------------------------------------------------------

std::uint16_t half_at(std::span<const std::byte> b, std::size_t i) {
  return static_cast<std::uint16_t>(std::to_integer<unsigned>(b[i]) |
                                    (std::to_integer<unsigned>(b[i + 1]) << 8));
}

// Tags buf: the halfword at index i holds the tag of offset i - origin (origin even).
void fill_tagged(std::span<std::byte> buf, long long origin) {
  for (std::size_t i = 0; i + 1 < buf.size(); i += 2) {
    const long long offset = static_cast<long long>(i) - origin;
    const auto t = static_cast<std::uint16_t>(kTagMark | ((offset / 2) & 0x3FFF));
    buf[i] = static_cast<std::byte>(t & 0xFF);
    buf[i + 1] = static_cast<std::byte>(t >> 8);
  }
}

bool is_tag(std::uint16_t v) {
  return (v & kTagMark) == kTagMark;
}

// The source offset a tag names, read in -8 KiB .. 24 KiB.
long long tag_offset(std::uint16_t v) {
  const long long o = 2LL * (v & 0x3FFF);
  return o >= 24576 ? o - 32768 : o;
}

// What one 16-byte chunk of an image holds.
struct ChunkView {
  enum Kind { kRun, kPoison, kZero, kNan, kOther } kind = kOther;
  long long first = 0;  // kRun: source offset of the chunk's first byte
  std::string text;     // kOther
};

ChunkView view_chunk(std::span<const std::byte> b, std::size_t at, bool tagged, char src) {
  ChunkView v;
  bool poison = true, zero = true, nan = true, run = tagged;
  for (std::size_t i = 0; i < 16; ++i) {
    poison = poison && b[at + i] == kPoison;
    zero = zero && b[at + i] == std::byte{0};
    nan = nan && (i % 2 == 0 ? half_at(b, at + i) == kNanHalf : true);
  }
  v.kind = poison ? ChunkView::kPoison : zero ? ChunkView::kZero : nan ? ChunkView::kNan : v.kind;
  if (v.kind != ChunkView::kOther) return v;
  std::ostringstream o;
  if (tagged) {
    const long long first = tag_offset(half_at(b, at));
    for (std::size_t i = 0; i < 16; i += 2) {
      const std::uint16_t h = half_at(b, at + i);
      run = run && is_tag(h) && tag_offset(h) == first + static_cast<long long>(i);
      o << (i ? " " : "");
      if (is_tag(h)) {
        o << src << (tag_offset(h) < 0 ? "" : "+") << tag_offset(h);
      } else if (h == kPoisonHalf) {
        o << "..";
      } else if (h == 0) {
        o << "0";
      } else if (h == kNanHalf) {
        o << "nan";
      } else {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "x%04x", h);
        o << hex;
      }
    }
    if (run) {
      v.kind = ChunkView::kRun;
      v.first = first;
      return v;
    }
  } else {
    for (std::size_t i = 0; i < 16; ++i) {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%02x", std::to_integer<unsigned>(b[at + i]));
      o << (i && i % 4 == 0 ? " " : "") << hex;
    }
  }
  v.text = o.str();
  return v;
}

// Consecutive chunks of one column that read alike: tag runs whose sources advance by a constant
// step (16: one contiguous source range), or all poison / zero / OOB-NaN.
struct Span {
  ChunkView first;
  long long step = 0, last = 0;
  int count = 1;

  bool extend(const ChunkView& v) {
    if (v.kind != first.kind || v.kind == ChunkView::kOther) return false;
    if (v.kind == ChunkView::kRun) {
      const long long d = v.first - last;
      if (d <= 0 || (count > 1 && d != step)) return false;
      step = d;
      last = v.first;
    }
    ++count;
    return true;
  }

  std::string show(char src) const {
    switch (first.kind) {
      case ChunkView::kRun: {
        std::string r = std::string(1, src) + "[" + std::to_string(first.first) + ",";
        if (count == 1 || step == 16) return r + std::to_string(last + 16) + ")";
        return r + std::to_string(first.first + 16) + ") x" + std::to_string(count) + " step " +
               std::to_string(step);
      }
      case ChunkView::kPoison:
        return "poison";
      case ChunkView::kZero:
        return "zero";
      case ChunkView::kNan:
        return "OOB-NaN";
      default:
        return first.text;
    }
  }
};

struct Column {
  const char* name;
  std::span<const std::byte> bytes;
};

// Prints bytes [begin, end) of every column (same sizes), one line per stretch of 16-byte chunks
// that read alike (Span) in every column, offsets relative to `origin`. '*' marks lines where the
// first two columns differ. Stretches that are poison in every column are skipped outside
// [keep_begin, keep_end); hex dumps show differing chunks only. At most kDumpLines lines.
void dump(const char* title, const std::vector<Column>& cols, std::size_t begin, std::size_t end,
          std::size_t origin, std::size_t keep_begin, std::size_t keep_end, bool tagged, char src) {
  std::printf("    %s; %s\n", title,
              tagged ? "tags read as source bytes: g = global from the tensor base, s = the "
                       "store's smem image"
                     : "hex, differing 16-byte chunks only");
  const auto part = [&](std::size_t x) { return x < keep_begin ? 0 : x < keep_end ? 1 : 2; };
  const auto differ = [&](std::size_t x) {
    return cols.size() > 1 &&
           std::memcmp(cols[0].bytes.data() + x, cols[1].bytes.data() + x, 16) != 0;
  };
  int lines = 0;
  for (std::size_t at = begin, next = begin; at < end; at = next) {
    std::vector<Span> spans;
    bool all_poison = true;
    for (const auto& c : cols) {
      Span sp;
      sp.first = view_chunk(c.bytes, at, tagged, src);
      sp.last = sp.first.first;
      all_poison = all_poison && sp.first.kind == ChunkView::kPoison;
      spans.push_back(sp);
    }
    const bool diff = differ(at);
    for (next = at + 16; next < end && part(next) == part(at) && differ(next) == diff; next += 16) {
      std::vector<Span> grown = spans;
      bool ok = true;
      for (std::size_t i = 0; i < cols.size() && ok; ++i)
        ok = grown[i].extend(view_chunk(cols[i].bytes, next, tagged, src));
      if (!ok) break;
      spans = grown;
    }
    // Hex dumps of two columns show differing chunks only; a single column (predict) shows all.
    if ((all_poison && part(at) != 1) || (!tagged && !diff && cols.size() > 1)) continue;
    if (++lines > kDumpLines) {
      std::printf("    ... (dump cut at %d lines)\n", kDumpLines);
      return;
    }
    const auto rel = [&](std::size_t x) {
      return static_cast<long long>(x) - static_cast<long long>(origin);
    };
    std::printf("    %c [%6lld,%6lld)", diff ? '*' : ' ', rel(at), rel(next));
    for (std::size_t i = 0; i < cols.size(); ++i)
      std::printf("  %s: %s", cols[i].name, spans[i].show(src).c_str());
    std::printf("\n");
  }
}

// ---- the probe -------------------------------------------------------------------------------

struct Count {
  std::size_t n = 0, first = 0;
};

Count count_diff(std::span<const std::byte> a, std::span<const std::byte> b, std::size_t begin,
                 std::size_t end) {
  Count c;
  for (std::size_t i = begin; i < end && i < a.size(); ++i) {
    if (a[i] != b[i] && c.n++ == 0) c.first = i;
  }
  return c;
}

std::string hex8(std::span<const std::byte> b, std::size_t at) {
  std::string o;
  for (std::size_t i = at; i < at + 8 && i < b.size(); ++i) {
    char h[4];
    std::snprintf(h, sizeof(h), " %02x", std::to_integer<unsigned>(b[i]));
    o += h;
  }
  return o;
}

int run(const Probe& p, const char* verb) {
  TensorMapSpec s = p.spec;
  const bool is_store = p.verb == Verb::kStore;
  const std::size_t footprint = model::global_footprint_bytes(s);
  const std::size_t base_off = kMargin + p.align;
  const std::size_t global_bytes = base_off + footprint + kMargin;
  // Tags read back uniquely from -8 KiB to 24 KiB around their origin (tag_offset).
  const bool aliased = p.tagged && (is_store ? model::smem_bytes(s) : footprint + kMargin) > 24576;

  // Device buffers first: the spec needs the real address for validation and encoding.
  std::byte* d_alloc = nullptr;
  std::byte* d_global = nullptr;
  if (!p.predict) {
    if (cudaError_t e = cudaMalloc(&d_alloc, global_bytes + kAlign); e != cudaSuccess) {
      std::printf("FAULT %s: cudaMalloc: %s\n", verb, cudaGetErrorName(e));
      return 2;
    }
    const auto a = reinterpret_cast<std::uintptr_t>(d_alloc);
    d_global = d_alloc + ((kAlign - a % kAlign) % kAlign);
    s.address = d_global + base_off;
  } else {
    s.address = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(0x10000 + p.align));
  }
  Probe shown = p;
  shown.spec = s;
  const std::string line = describe(shown, verb);
  if (!p.novalidate) {
    const auto violations = validate(s);
    if (!violations.empty()) {
      std::printf("INVALID %s: %s\n", line.c_str(), to_string(violations[0]).c_str());
      return 3;
    }
  }

  // Host images: the global buffer and the shared-memory region (guard | image | guard).
  const std::size_t image_bytes = model::smem_bytes(s);
  const std::size_t image_slot = (image_bytes + 15) / 16 * 16;
  const std::size_t region_bytes =
      kGuardBefore + image_slot +
      std::min(kGuardAfter, kMaxRegion - std::min(kMaxRegion, kGuardBefore + image_slot));
  if (kGuardBefore + image_slot > kMaxRegion) {
    std::printf("ERROR %s: the image needs %zu bytes of shared memory, more than the probe's %zu\n",
                line.c_str(), image_bytes, kMaxRegion);
    return 2;
  }
  std::mt19937_64 rng(12345);
  std::vector<std::byte> global(global_bytes), region(region_bytes, kPoison);
  const std::span<std::byte> image_span(region.data() + kGuardBefore, image_bytes);
  if (is_store) {
    if (p.tagged) {
      std::fill(global.begin(), global.end(), kPoison);
      fill_tagged(std::span<std::byte>(region.data() + kGuardBefore, image_slot), 0);
    } else {
      for (auto& b : global)
        b = static_cast<std::byte>(rng());
      for (auto& b : image_span)
        b = static_cast<std::byte>(rng());
    }
  } else if (p.tagged) {
    fill_tagged(global, static_cast<long long>(base_off));
  } else {
    for (auto& b : global)
      b = static_cast<std::byte>(rng());
  }

  // The model: the expected region (loads) or global buffer (stores).
  std::vector<std::byte> want_region = region, want_global = global;
  std::string model_error;
  const std::span<const std::byte> tensor(global.data() + base_off, footprint + kMargin);
  try {
    const std::span<std::byte> want_image(want_region.data() + kGuardBefore, image_bytes);
    if (p.verb == Verb::kLoad) {
      model::load_box(s, tensor, p.coords, want_image);
    } else if (p.verb == Verb::kIm2col) {
      model::load_im2col(s, tensor, p.coords, p.offsets, want_image);
    } else {
      model::store_box(s, std::span<const std::byte>(image_span), p.coords,
                       std::span<std::byte>(want_global.data() + base_off, footprint + kMargin));
    }
  } catch (const std::exception& e) {
    model_error = e.what();
  }
  const std::size_t image_end = kGuardBefore + image_bytes;

  if (p.predict) {
    std::printf("PREDICT %s%s%s\n", line.c_str(),
                model_error.empty() ? "" : ": model error: ", model_error.c_str());
    if (aliased)
      std::printf("    note: the tensor spans %zu bytes; tags repeat every 32 KiB\n", footprint);
    if (is_store) {
      dump("global memory after the store, offsets from the tensor base", {{"model", want_global}},
           0, global_bytes, base_off, base_off, base_off + footprint, p.tagged, 's');
      return 0;
    }
    const std::vector<Column> cols{{"model", want_region}};
    dump("shared-memory region, offsets from the image start", cols, 0, region_bytes, kGuardBefore,
         kGuardBefore, image_end, p.tagged, 'g');
    return 0;
  }

  // The hardware.
  TensorMap map{};
  if (p.novalidate) {
    if (const int r = encode_unchecked(s, &map); r != 0) {
      std::printf("DRIVER-REJECT %s: CUresult %d\n", line.c_str(), r);
      return 2;
    }
  } else {
    map = make_tensor_map(s);
  }
  std::byte* d_region = nullptr;
  unsigned* d_status = nullptr;
  cudaMalloc(&d_region, region_bytes);
  cudaMalloc(&d_status, sizeof(unsigned));
  cudaMemset(d_status, 0, sizeof(unsigned));
  cudaMemcpy(d_global, global.data(), global_bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(d_region, region.data(), region_bytes, cudaMemcpyHostToDevice);
  KernelArgs a{};
  a.verb = p.verb;
  a.rank = s.rank;
  for (int i = 0; i < s.rank; ++i)
    a.coords[i] = p.coords[static_cast<std::size_t>(i)];
  for (std::size_t i = 0; i < p.offsets.size() && i < 3; ++i)
    a.offsets[i] = p.offsets[i];
  a.region_bytes = static_cast<std::uint32_t>(region_bytes);
  a.image_offset = static_cast<std::uint32_t>(kGuardBefore);
  a.expect_tx = p.tx ? *p.tx : static_cast<std::uint32_t>(transaction_bytes(s));
  const int smem = static_cast<int>(region_bytes) + kAlign;
  cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  probe_kernel<<<1, 256, smem>>>(map, a, d_region, d_status);
  if (cudaError_t err = cudaDeviceSynchronize(); err != cudaSuccess) {
    std::printf("FAULT %s: %s\n", line.c_str(), cudaGetErrorName(err));
    return 2;
  }
  unsigned status = 0;
  cudaMemcpy(&status, d_status, sizeof(unsigned), cudaMemcpyDeviceToHost);
  std::vector<std::byte> got_region(region_bytes), got_global(global_bytes);
  cudaMemcpy(got_region.data(), d_region, region_bytes, cudaMemcpyDeviceToHost);
  cudaMemcpy(got_global.data(), d_global, global_bytes, cudaMemcpyDeviceToHost);

  // The verdict: stores compare the whole global buffer, loads the whole region.
  std::ostringstream why;
  bool same = false;
  if (is_store) {
    const Count c = count_diff(got_global, want_global, 0, global_bytes);
    same = c.n == 0;
    if (!same) {
      why << c.n << " of " << global_bytes << " global bytes differ, first at base"
          << (c.first >= base_off ? "+" : "-")
          << (c.first >= base_off ? c.first - base_off : base_off - c.first) << " (hw"
          << hex8(got_global, c.first) << " / model" << hex8(want_global, c.first) << ")";
    }
  } else {
    const Count in = count_diff(got_region, want_region, kGuardBefore, image_end);
    const Count before = count_diff(got_region, want_region, 0, kGuardBefore);
    const Count after = count_diff(got_region, want_region, image_end, region_bytes);
    same = in.n + before.n + after.n == 0;
    if (in.n != 0) {
      why << in.n << " of " << image_bytes << " image bytes differ, first at "
          << in.first - kGuardBefore << " (hw" << hex8(got_region, in.first) << " / model"
          << hex8(want_region, in.first) << ")";
    }
    if (before.n + after.n != 0) {
      const long long first = before.n != 0 ? static_cast<long long>(before.first) -
                                                  static_cast<long long>(kGuardBefore)
                                            : static_cast<long long>(after.first - kGuardBefore);
      why << (in.n != 0 ? "; " : "") << before.n + after.n
          << " bytes written outside the image, first at image" << (first < 0 ? "" : "+") << first;
    }
  }
  const char* verdict = !model_error.empty() ? "MODEL-ERROR"
                        : status != 0        ? "TIMEOUT"
                        : same               ? "PASS"
                                             : "MISMATCH";
  if (!model_error.empty()) {
    std::printf("%s %s: %s\n", verdict, line.c_str(), model_error.c_str());
  } else if (same && status == 0) {
    std::printf("PASS %s\n", line.c_str());
  } else {
    std::printf("%s %s: %s\n", verdict, line.c_str(),
                same ? "the image matches" : why.str().c_str());
  }
  if (p.dump && (!same || status != 0 || !model_error.empty())) {
    if (aliased)
      std::printf("    note: the tensor spans %zu bytes; tags repeat every 32 KiB\n", footprint);
    if (is_store) {
      dump("global memory, offsets from the tensor base",
           {{"hw", got_global}, {"model", want_global}}, 0, global_bytes, base_off, base_off,
           base_off + footprint, p.tagged, 's');
    } else {
      const std::vector<Column> cols{{"hw", got_region}, {"model", want_region}};
      dump("shared-memory region, offsets from the image start", cols, 0, region_bytes,
           kGuardBefore, kGuardBefore, image_end, p.tagged, 'g');
    }
  }
  cudaFree(d_alloc);
  cudaFree(d_region);
  cudaFree(d_status);
  if (!model_error.empty()) return 1;
  return same && status == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_probe load|store|im2col key=value ... (see gpu_probe.cu)\n");
    return 2;
  }
  Probe p;
  try {
    p = parse(argc, argv);
  } catch (const std::exception& e) {
    std::printf("ERROR %s\n", e.what());
    return 2;
  }
  if (!p.predict) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
      std::printf("SKIP: no CUDA device\n");
      return 77;
    }
  }
  try {
    return run(p, argv[1]);
  } catch (const std::exception& e) {
    std::printf("ERROR %s: %s\n", argv[1], e.what());
    return 2;
  }
}
