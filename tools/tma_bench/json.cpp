// tma-bench: the JSON writer (see json.hpp).
#include "json.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tma::bench {

std::string JsonWriter::quote(std::string_view s) {
  std::string q = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        q += "\\\"";
        break;
      case '\\':
        q += "\\\\";
        break;
      case '\n':
        q += "\\n";
        break;
      case '\t':
        q += "\\t";
        break;
      case '\r':
        q += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          q += buf;
        } else {
          q += c;
        }
    }
  }
  return q + "\"";
}

void JsonWriter::newline() {
  out_ += '\n';
  out_.append(2 * stack_.size(), ' ');
}

void JsonWriter::before_value() {
  if (stack_.empty()) {
    if (!out_.empty()) throw std::logic_error("JsonWriter: a second top-level value");
    return;
  }
  Level& top = stack_.back();
  if (!top.array) {
    if (!key_pending_) throw std::logic_error("JsonWriter: a value inside an object needs a key");
    key_pending_ = false;
    return;
  }
  if (!top.empty) out_ += top.compact ? ", " : ",";
  if (!top.compact) newline();
  top.empty = false;
}

void JsonWriter::raw(std::string_view text) {
  before_value();
  out_ += text;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (stack_.empty() || stack_.back().array || key_pending_) {
    throw std::logic_error("JsonWriter: key '" + std::string(k) + "' outside an object");
  }
  Level& top = stack_.back();
  if (!top.empty) out_ += ',';
  newline();
  top.empty = false;
  out_ += quote(k);
  out_ += ": ";
  key_pending_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  raw("{");
  stack_.push_back({false, false, true});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (stack_.empty() || stack_.back().array || key_pending_) {
    throw std::logic_error("JsonWriter: end_object without an open object");
  }
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::begin_array(bool compact) {
  raw("[");
  stack_.push_back({true, compact, true});
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  if (stack_.empty() || !stack_.back().array) {
    throw std::logic_error("JsonWriter: end_array without an open array");
  }
  const Level top = stack_.back();
  stack_.pop_back();
  if (!top.empty && !top.compact) newline();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  raw(quote(s));
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  if (!std::isfinite(v)) return null();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  raw(buf);
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t v) {
  raw(std::to_string(v));
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t v) {
  raw(std::to_string(v));
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  raw(v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  raw("null");
  return *this;
}

std::string JsonWriter::str() const {
  if (!stack_.empty()) throw std::logic_error("JsonWriter: unclosed object or array");
  return out_ + "\n";
}

}  // namespace tma::bench
