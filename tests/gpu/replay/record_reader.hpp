// tests/gpu/replay: a minimal reader for the flat JSON lines the GPU test programs write
// (gpu_common.hpp's records: one object per line, scalar, string and integer-array values, hex
// images), shared by the replays. Not a JSON parser: it finds `"key":` and reads the value after
// it, which is all these records need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tma::testing::replay {

// The raw text of `key`'s value: a string without its quotes, an array without its brackets,
// else the scalar up to the next comma or brace; nullopt when the key is absent.
inline std::optional<std::string> json_raw(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const std::size_t at = line.find(k);
  if (at == std::string::npos) return std::nullopt;
  std::size_t p = at + k.size();
  if (line[p] == '"') {
    const std::size_t end = line.find('"', p + 1);
    return line.substr(p + 1, end - p - 1);
  }
  if (line[p] == '[') {
    const std::size_t end = line.find(']', p);
    return line.substr(p + 1, end - p - 1);
  }
  std::size_t end = p;
  while (end < line.size() && line[end] != ',' && line[end] != '}')
    ++end;
  return line.substr(p, end - p);
}

// `key`'s value; throws std::runtime_error naming the key when the record lacks it.
inline std::string json_str(const std::string& line, const std::string& key) {
  auto v = json_raw(line, key);
  if (!v) throw std::runtime_error("record has no \"" + key + "\"");
  return *v;
}

inline std::uint64_t json_u64(const std::string& line, const std::string& key) {
  return std::stoull(json_str(line, key));
}

// An integer array (or a single integer) as numbers.
inline std::vector<std::int64_t> json_ints(const std::string& line, const std::string& key) {
  std::vector<std::int64_t> out;
  std::stringstream s(json_str(line, key));
  std::string item;
  while (std::getline(s, item, ','))
    if (!item.empty()) out.push_back(std::stoll(item));
  return out;
}

// "a5ff..." -> its bytes.
inline std::vector<std::byte> from_hex(const std::string& hex) {
  std::vector<std::byte> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

}  // namespace tma::testing::replay
