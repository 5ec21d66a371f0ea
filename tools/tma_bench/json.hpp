// tma-bench: a small streaming JSON writer (the record has a fixed, flat shape; no library needed).
//
//   JsonWriter j;
//   j.begin_object();
//   j.key("name").value("copy");
//   j.key("shape").begin_array(/*compact=*/true).value(4096).value(4096).end_array();
//   j.end_object();
//   std::string text = j.str();
//
// Objects and arrays go one member per line, indented; compact arrays stay on one line. Strings
// are escaped; non-finite numbers become null. Misuse (a value where a key is due, unbalanced
// ends) throws std::logic_error: it is a bug in the tool, not in the user's input.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tma::bench {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array(bool compact = false);
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(double v);
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(int v) { return value(static_cast<std::int64_t>(v)); }
  JsonWriter& value(std::uint64_t v);
  JsonWriter& value(bool v);
  JsonWriter& null();
  // An optional number: the value, or null.
  JsonWriter& value(const std::optional<double>& v) { return v ? value(*v) : null(); }

  // The document; all objects and arrays must be closed.
  std::string str() const;

  // `s` as a quoted JSON string.
  static std::string quote(std::string_view s);

 private:
  struct Level {
    bool array = false;
    bool compact = false;
    bool empty = true;
  };
  void before_value();
  void raw(std::string_view text);
  void newline();

  std::string out_;
  std::vector<Level> stack_;
  bool key_pending_ = false;
};

}  // namespace tma::bench
