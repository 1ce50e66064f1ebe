// SPDX-License-Identifier: Apache-2.0
// A small "{}" formatter for log lines and messages, so files that log need neither fmt nor
// spdlog: PyTorch's wheels ship an fmt of their own that Debian's spdlog cannot build against,
// and those headers are heavy. Supports "{}", "{:.Nf}", "{:.Ng}", "{:.Ne}" and "{{" / "}}".
#pragma once
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>

namespace ws {

// One argument, already reduced to what the formatter prints.
struct FormatArg {
  enum class Kind { kSigned, kUnsigned, kFloat, kText } kind = Kind::kText;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  std::string text;
};

template <class T>
FormatArg to_format_arg(const T& v) {
  FormatArg a;
  if constexpr (std::is_same_v<T, bool>) {
    a.text = v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, char>) {
    a.text = std::string(1, v);
  } else if constexpr (std::is_floating_point_v<T>) {
    a.kind = FormatArg::Kind::kFloat;
    a.f = static_cast<double>(v);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    a.kind = FormatArg::Kind::kSigned;
    a.i = static_cast<int64_t>(v);
  } else if constexpr (std::is_integral_v<T>) {
    a.kind = FormatArg::Kind::kUnsigned;
    a.u = static_cast<uint64_t>(v);
  } else if constexpr (std::is_enum_v<T>) {
    a.kind = FormatArg::Kind::kSigned;
    a.i = static_cast<int64_t>(v);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    a.text = std::string(std::string_view(v));
  } else {
    std::ostringstream s;  // anything with operator<< (paths, devices)
    s << v;
    a.text = s.str();
  }
  return a;
}

// `pattern` with each "{...}" replaced by the next argument; a field with no argument left is
// kept as written.
std::string format_args(std::string_view pattern, const FormatArg* args, size_t count);

template <class... A>
std::string format(std::string_view pattern, const A&... args) {
  if constexpr (sizeof...(A) == 0) {
    return format_args(pattern, nullptr, 0);
  } else {
    const FormatArg list[] = {to_format_arg(args)...};
    return format_args(pattern, list, sizeof...(A));
  }
}

}  // namespace ws
