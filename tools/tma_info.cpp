// tma-info: what this machine's GPU offers for TMA, and a checker for tensor-map specs that runs
// without a GPU.
//
//   tma-info [--device N] [--json]      the GPU(s): TMA yes/no and why, SMs, shared memory,
//                                       clusters, clocks, driver and runtime versions
//   tma-info describe --dtype bf16 --dims 4096,4096 --box 128,64 --swizzle 128B
//                                       validate a spec and explain it (exit 1 when invalid)
//   tma-info --help
//
// Exit codes: 0 fine, 1 the spec breaks a rule, 2 the command line is wrong.
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tma/host/builder.hpp"
#include "tma/host/describe.hpp"
#include "tma/host/device_support.hpp"
#include "tma/host/error.hpp"
#include "tma/host/spec.hpp"
#include "tma/host/validate.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInvalidSpec = 1;
constexpr int kExitUsage = 2;

// An aligned stand-in for the tensor's address (4 GiB: aligned to every TMA requirement) when
// --address is not given; the validator never dereferences it.
constexpr std::uintptr_t kDummyAddress = std::uintptr_t{1} << 32;

constexpr const char* kUsage = R"(usage:
  tma-info [--device N] [--json]
      Show the GPU: TMA support (and why not), SMs, shared memory, clusters, clocks, driver and
      runtime versions. --json prints one JSON object for the device (default 0).
  tma-info describe --dtype T --dims D0,D1,... (--box B0,B1,... | im2col options) [options]
      Validate a tensor-map spec without a GPU: print every violation (exit 1) or VALID (exit 0),
      the box, the transaction bytes, the shared-memory alignment and the swizzle pattern.
  tma-info --help

describe options:
  --order row-major|inner-first  order of --dims/--strides/--box/--elem-strides/--lower/--upper.
                                 row-major (default): outermost first, like torch x.shape and
                                 x.stride(); strides in ELEMENTS. inner-first: the driver's order
                                 (dimension 0 = contiguous); strides in BYTES for dimensions
                                 1..rank-1 (rank-1 values, like cuTensorMapEncodeTiled).
  --dtype T        uint8 int8 uint16 int16 uint32 int32 uint64 int64 f16 bf16 f32 f64 f32_ftz
                   tf32 tf32_ftz 16u4_align8b 16u4_align16b 16u6_align16b (and long names)
  --dims LIST      tensor extents in elements
  --strides LIST   default: contiguous
  --box LIST       tiled mode: box extents in elements
  --elem-strides LIST   traversal steps (1..8), default 1
  --swizzle S      none 32B 64B 128B 128B_atom_32B 128B_atom_32B_flip_8B 128B_atom_64B
  --interleave I   none 16B 32B
  --l2 P           L2 promotion: none 64B 128B 256B
  --oob-fill F     zero nan
  --address A      tensor base address (hex 0x... or decimal); default an aligned dummy
  --cc MAJOR.MINOR target compute capability, default 9.0
  --mode tiled|im2col   default tiled. im2col takes a channels-last tensor (N,W,C / N,H,W,C /
                   N,D,H,W,C row-major) and:
  --lower LIST --upper LIST   pixel bounding-box corners, one per spatial dimension
  --channels N     channels per pixel (1..256)
  --pixels N       pixels per column (1..1024)

example:
  tma-info describe --dtype bf16 --dims 4096,4096 --box 128,64 --swizzle 128B
)";

// A command-line mistake: reported with the usage, exit 2.
struct UsageError {
  std::string message;
};

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

std::int64_t parse_int(std::string_view option, std::string_view text) {
  std::int64_t v = 0;
  int base = 10;
  std::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && digits.front() == '-') {
    negative = true;
    digits.remove_prefix(1);
  }
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    throw UsageError{std::string(option) + " expects an integer, got \"" + std::string(text) +
                     "\""};
  }
  return negative ? -v : v;
}

std::vector<std::int64_t> parse_list(std::string_view option, std::string_view text) {
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    out.push_back(parse_int(option, text.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

template <class E>
E parse_enum(std::string_view option, std::string_view text,
             const std::map<std::string, E>& names) {
  const auto it = names.find(lower(text));
  if (it != names.end()) return it->second;
  std::string choices;
  for (const auto& [name, value] : names)
    choices += (choices.empty() ? "" : ", ") + name;
  throw UsageError{std::string(option) + ": unknown value \"" + std::string(text) +
                   "\" (choose from " + choices + ")"};
}

tma::DataType parse_dtype(std::string_view text) {
  using tma::DataType;
  static const std::map<std::string, DataType> names = {
      {"uint8", DataType::kUInt8},
      {"u8", DataType::kUInt8},
      {"int8", DataType::kUInt8},  // TMA copies bytes: int8 travels as uint8
      {"uint16", DataType::kUInt16},
      {"u16", DataType::kUInt16},
      {"int16", DataType::kUInt16},
      {"uint32", DataType::kUInt32},
      {"u32", DataType::kUInt32},
      {"int32", DataType::kInt32},
      {"i32", DataType::kInt32},
      {"uint64", DataType::kUInt64},
      {"u64", DataType::kUInt64},
      {"int64", DataType::kInt64},
      {"i64", DataType::kInt64},
      {"f16", DataType::kFloat16},
      {"fp16", DataType::kFloat16},
      {"half", DataType::kFloat16},
      {"float16", DataType::kFloat16},
      {"bf16", DataType::kBFloat16},
      {"bfloat16", DataType::kBFloat16},
      {"f32", DataType::kFloat32},
      {"fp32", DataType::kFloat32},
      {"float", DataType::kFloat32},
      {"float32", DataType::kFloat32},
      {"f64", DataType::kFloat64},
      {"fp64", DataType::kFloat64},
      {"double", DataType::kFloat64},
      {"float64", DataType::kFloat64},
      {"f32_ftz", DataType::kFloat32Ftz},
      {"float32_ftz", DataType::kFloat32Ftz},
      {"tf32", DataType::kTFloat32},
      {"tfloat32", DataType::kTFloat32},
      {"tf32_ftz", DataType::kTFloat32Ftz},
      {"tfloat32_ftz", DataType::kTFloat32Ftz},
      {"16u4_align8b", DataType::k16U4Align8B},
      {"16u4_align16b", DataType::k16U4Align16B},
      {"16u6_align16b", DataType::k16U6Align16B},
  };
  return parse_enum("--dtype", text, names);
}

// Options of `describe`, as given.
struct DescribeArgs {
  std::map<std::string, std::string> values;  // option name -> value

  bool has(const std::string& o) const { return values.count(o) != 0; }
  const std::string& get(const std::string& o) const {
    const auto it = values.find(o);
    if (it == values.end()) throw UsageError{"describe needs " + o};
    return it->second;
  }
};

DescribeArgs parse_describe(const std::vector<std::string_view>& args) {
  static const std::vector<std::string> known = {
      "--order",   "--dtype",      "--dims",  "--strides",  "--box",     "--elem-strides",
      "--swizzle", "--interleave", "--l2",    "--oob-fill", "--address", "--cc",
      "--mode",    "--lower",      "--upper", "--channels", "--pixels"};
  DescribeArgs a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name(args[i]);
    std::string value;
    const std::size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      if (name.rfind("--", 0) == 0 && i + 1 < args.size())
        value = std::string(args[++i]);
      else if (name.rfind("--", 0) == 0)
        throw UsageError{name + " needs a value"};
    }
    bool ok = false;
    for (const std::string& k : known)
      ok = ok || k == name;
    if (!ok) throw UsageError{"describe: unknown option \"" + name + "\""};
    if (a.has(name)) throw UsageError{name + " given twice"};
    a.values[name] = value;
  }
  return a;
}

std::vector<std::uint32_t> to_u32(std::string_view option, const std::vector<std::int64_t>& v) {
  std::vector<std::uint32_t> r;
  for (std::int64_t x : v) {
    if (x < 0 || x > 0xffffffffLL) {
      throw UsageError{std::string(option) + ": " + std::to_string(x) +
                       " is not a 32-bit unsigned value"};
    }
    r.push_back(static_cast<std::uint32_t>(x));
  }
  return r;
}

std::vector<int> to_int(std::string_view option, const std::vector<std::int64_t>& v) {
  std::vector<int> r;
  for (std::int64_t x : v) {
    if (x < -2147483648LL || x > 2147483647LL) {
      throw UsageError{std::string(option) + ": " + std::to_string(x) + " is not a 32-bit int"};
    }
    r.push_back(static_cast<int>(x));
  }
  return r;
}

// Spec straight from the driver's order (--order inner-first).
tma::TensorMapSpec inner_first_spec(const DescribeArgs& a, tma::DataType dtype, tma::Mode mode,
                                    const tma::DescriptorOptions& o, const void* address) {
  tma::TensorMapSpec s;
  s.mode = mode;
  s.dtype = dtype;
  s.address = address;
  s.swizzle = o.swizzle;
  s.interleave = o.interleave;
  s.l2_promotion = o.l2_promotion;
  s.oob_fill = o.oob_fill;
  const std::vector<std::int64_t> dims = parse_list("--dims", a.get("--dims"));
  if (dims.size() > std::size_t(tma::kMaxRank)) {
    throw UsageError{"--dims: " + std::to_string(dims.size()) + " values; at most 5"};
  }
  s.rank = static_cast<int>(dims.size());
  auto fill = [&](const char* option, const std::vector<std::int64_t>& v, std::size_t offset,
                  auto& array) {
    if (v.size() + offset != dims.size()) {
      throw UsageError{std::string(option) + ": " + std::to_string(v.size()) + " values for " +
                       std::to_string(dims.size()) + " dimensions (expected " +
                       std::to_string(dims.size() - offset) + ")"};
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] < 0)
        throw UsageError{std::string(option) + ": negative value " + std::to_string(v[i])};
      array[i + offset] = static_cast<std::remove_reference_t<decltype(array[0])>>(v[i]);
    }
  };
  fill("--dims", dims, 0, s.dims_inner_first);
  if (a.has("--strides")) {
    fill("--strides", parse_list("--strides", a.get("--strides")), 1, s.strides_bytes_inner_first);
  } else if (dims.size() >= 1) {  // contiguous, in bytes
    std::uint64_t stride = tma::inner_bytes(dtype, s.dims_inner_first[0]);
    for (std::size_t i = 1; i < dims.size(); ++i) {
      s.strides_bytes_inner_first[i] = stride;
      stride *= s.dims_inner_first[i];
    }
  }
  if (!tma::is_packed(dtype))
    s.strides_bytes_inner_first[0] = std::uint64_t(tma::element_bytes(dtype));
  if (a.has("--elem-strides")) {
    const auto es = to_u32("--elem-strides", parse_list("--elem-strides", a.get("--elem-strides")));
    fill("--elem-strides", std::vector<std::int64_t>(es.begin(), es.end()), 0,
         s.element_strides_inner_first);
  }
  if (mode == tma::Mode::kTiled) {
    fill("--box", parse_list("--box", a.get("--box")), 0, s.box_inner_first);
    return s;
  }
  const std::size_t spatial = dims.size() >= 2 ? dims.size() - 2 : 0;
  for (const char* option : {"--lower", "--upper"}) {
    const std::vector<int> c = a.has(option) ? to_int(option, parse_list(option, a.get(option)))
                                             : std::vector<int>(spatial, 0);
    if (c.size() != spatial || spatial > 3) {
      throw UsageError{std::string(option) + ": " + std::to_string(c.size()) + " values for " +
                       std::to_string(spatial) + " spatial dimensions"};
    }
    auto& corner =
        std::string_view(option) == "--lower" ? s.pixel_box_lower_corner : s.pixel_box_upper_corner;
    for (std::size_t i = 0; i < spatial; ++i)
      corner[i] = c[i];
  }
  s.channels_per_pixel = to_u32("--channels", {parse_int("--channels", a.get("--channels"))})[0];
  s.pixels_per_column = to_u32("--pixels", {parse_int("--pixels", a.get("--pixels"))})[0];
  return s;
}

int run_describe(const std::vector<std::string_view>& args) {
  const DescribeArgs a = parse_describe(args);
  const tma::DataType dtype = parse_dtype(a.get("--dtype"));
  const tma::Mode mode =
      a.has("--mode")
          ? parse_enum<tma::Mode>("--mode", a.get("--mode"),
                                  {{"tiled", tma::Mode::kTiled}, {"im2col", tma::Mode::kIm2col}})
          : tma::Mode::kTiled;
  const bool row_major =
      !a.has("--order") ||
      parse_enum<bool>("--order", a.get("--order"), {{"row-major", true}, {"inner-first", false}});
  tma::DescriptorOptions o;
  if (a.has("--swizzle")) {
    using tma::Swizzle;
    o.swizzle = parse_enum<Swizzle>("--swizzle", a.get("--swizzle"),
                                    {{"none", Swizzle::kNone},
                                     {"32b", Swizzle::k32B},
                                     {"64b", Swizzle::k64B},
                                     {"128b", Swizzle::k128B},
                                     {"128b_atom_32b", Swizzle::k128BAtom32B},
                                     {"128b_atom_32b_flip_8b", Swizzle::k128BAtom32BFlip8B},
                                     {"128b_atom_64b", Swizzle::k128BAtom64B}});
  }
  if (a.has("--interleave")) {
    using tma::Interleave;
    o.interleave = parse_enum<Interleave>(
        "--interleave", a.get("--interleave"),
        {{"none", Interleave::kNone}, {"16b", Interleave::k16B}, {"32b", Interleave::k32B}});
  }
  if (a.has("--l2")) {
    using tma::L2Promotion;
    o.l2_promotion = parse_enum<L2Promotion>("--l2", a.get("--l2"),
                                             {{"none", L2Promotion::kNone},
                                              {"64b", L2Promotion::k64B},
                                              {"128b", L2Promotion::k128B},
                                              {"256b", L2Promotion::k256B}});
  }
  if (a.has("--oob-fill")) {
    o.oob_fill =
        parse_enum<tma::OobFill>("--oob-fill", a.get("--oob-fill"),
                                 {{"zero", tma::OobFill::kZero}, {"nan", tma::OobFill::kNan}});
  }
  const std::uintptr_t address =
      a.has("--address") ? static_cast<std::uintptr_t>(parse_int("--address", a.get("--address")))
                         : kDummyAddress;
  const void* base = reinterpret_cast<const void*>(address);
  tma::Limits limits = tma::Limits::hopper();
  if (a.has("--cc")) {
    const std::string& cc = a.get("--cc");
    const std::size_t dot = cc.find('.');
    limits.cc_major = static_cast<int>(parse_int("--cc", cc.substr(0, dot)));
    limits.cc_minor =
        dot == std::string::npos ? 0 : static_cast<int>(parse_int("--cc", cc.substr(dot + 1)));
  }
  if (mode == tma::Mode::kTiled && !a.has("--box")) throw UsageError{"describe needs --box"};
  if (mode == tma::Mode::kIm2col && (!a.has("--channels") || !a.has("--pixels"))) {
    throw UsageError{"describe --mode im2col needs --channels and --pixels"};
  }
  if (mode == tma::Mode::kTiled) {
    for (const char* o2 : {"--lower", "--upper", "--channels", "--pixels"}) {
      if (a.has(o2)) throw UsageError{std::string(o2) + " applies to --mode im2col only"};
    }
  } else if (a.has("--box")) {
    throw UsageError{"--box applies to tiled mode only (im2col uses --channels and --pixels)"};
  }

  tma::TensorMapSpec spec;
  if (!row_major) {
    spec = inner_first_spec(a, dtype, mode, o, base);
  } else {
    if (a.has("--elem-strides")) {
      o.element_strides =
          to_u32("--elem-strides", parse_list("--elem-strides", a.get("--elem-strides")));
    }
    const std::vector<std::int64_t> shape = parse_list("--dims", a.get("--dims"));
    const std::vector<std::int64_t> strides = a.has("--strides")
                                                  ? parse_list("--strides", a.get("--strides"))
                                                  : std::vector<std::int64_t>{};
    try {
      if (mode == tma::Mode::kTiled) {
        spec = tma::make_tiled_spec(dtype, base, shape, strides,
                                    parse_list("--box", a.get("--box")), o);
      } else {
        const std::size_t spatial = shape.size() >= 2 ? shape.size() - 2 : 0;
        const std::vector<int> lo = a.has("--lower")
                                        ? to_int("--lower", parse_list("--lower", a.get("--lower")))
                                        : std::vector<int>(spatial, 0);
        const std::vector<int> hi = a.has("--upper")
                                        ? to_int("--upper", parse_list("--upper", a.get("--upper")))
                                        : std::vector<int>(spatial, 0);
        spec = tma::make_im2col_spec(
            dtype, base, shape, strides, lo, hi,
            to_u32("--channels", {parse_int("--channels", a.get("--channels"))})[0],
            to_u32("--pixels", {parse_int("--pixels", a.get("--pixels"))})[0], o);
      }
    } catch (const tma::Error& e) {
      std::cout << "validation:  INVALID (the row-major description does not convert)\n";
      for (const tma::Violation& v : e.violations())
        std::cout << "  " << to_string(v) << '\n';
      return kExitInvalidSpec;
    }
  }
  std::cout << tma::describe(spec, limits);
  if (!a.has("--address")) {
    std::cout << "note:        address is a dummy (0x" << std::hex << kDummyAddress << std::dec
              << "); pass --address to check the real base's alignment\n";
  }
  return tma::validate(spec, limits).empty() ? kExitOk : kExitInvalidSpec;
}

std::string kib(std::size_t bytes) {
  std::ostringstream o;
  if (bytes % 1024 == 0)
    o << bytes / 1024 << " KiB";
  else
    o << bytes << " B";
  return o.str();
}

void print_device(const tma::DeviceSupport& d) {
  std::cout << "device " << d.device << ":       " << d.name << " (compute capability "
            << d.cc_major << '.' << d.cc_minor << ")\n";
  std::cout << "TMA:            " << (d.tma ? "yes" : "no: " + d.reason) << '\n';
  std::cout << "SMs:            " << d.sm_count << '\n';
  std::cout << "shared memory:  " << kib(d.smem_per_block_optin) << " per block (opt-in), "
            << kib(d.smem_per_block) << " per block by default, " << kib(d.smem_per_sm)
            << " per SM\n";
  std::cout << "L2:             " << d.l2_bytes / (1024 * 1024) << " MiB; global memory "
            << d.global_memory_bytes / (1024 * 1024) << " MiB\n";
  std::cout << "clusters:       ";
  if (d.cluster_launch) {
    std::cout << "yes, up to " << d.max_cluster_size << " CTAs (" << d.max_cluster_size_nonportable
              << " non-portable)\n";
  } else {
    std::cout << "no\n";
  }
  std::cout << "clocks (peak):  SM " << d.sm_clock_khz / 1000 << " MHz, memory "
            << d.mem_clock_khz / 1000 << " MHz, " << d.mem_bus_width_bits << "-bit bus\n";
  std::cout << "CUDA:           driver " << tma::cuda_version_string(d.driver_version)
            << ", runtime " << tma::cuda_version_string(d.runtime_version) << '\n';
}

int run_info(const std::vector<std::string_view>& args) {
  bool json = false;
  std::optional<int> device;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      json = true;
    } else if (args[i] == "--device" && i + 1 < args.size()) {
      device = static_cast<int>(parse_int("--device", args[++i]));
    } else {
      throw UsageError{"unknown argument \"" + std::string(args[i]) + "\""};
    }
  }
  const tma::DeviceSupport first = tma::device_support(device.value_or(0));
  if (json) {
    std::cout << tma::to_json(first) << '\n';
    return kExitOk;
  }
  if (first.device_count == 0) {
    std::cout << "No usable GPU: " << first.reason << ".\n"
              << "CUDA: driver " << tma::cuda_version_string(first.driver_version) << ", runtime "
              << tma::cuda_version_string(first.runtime_version) << '\n'
              << "Tensor-map specs can still be checked without a GPU, e.g.\n"
              << "  tma-info describe --dtype bf16 --dims 4096,4096 --box 128,64 --swizzle 128B\n";
    return kExitOk;
  }
  if (device) {
    if (first.name.empty()) {
      std::cout << first.reason << '\n';
      return kExitUsage;
    }
    print_device(first);
    return kExitOk;
  }
  for (int i = 0; i < first.device_count; ++i) {
    if (i) std::cout << '\n';
    print_device(i == 0 ? first : tma::device_support(i));
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
      std::cout << kUsage;
      return kExitOk;
    }
    if (!args.empty() && args[0] == "describe") {
      return run_describe(std::vector<std::string_view>(args.begin() + 1, args.end()));
    }
    return run_info(args);
  } catch (const UsageError& e) {
    std::cerr << "tma-info: " << e.message << "\n\n" << kUsage;
    return kExitUsage;
  }
}
