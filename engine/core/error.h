// SPDX-License-Identifier: Apache-2.0
// One exception type for everything the user can cause: its message is the one-line
// error the CLI prints (naming the file and what is wrong).
#pragma once
#include <stdexcept>
#include <string>

namespace ws {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// Wrong command-line usage: printed with a pointer to --help.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& msg) : Error(msg) {}
};

}  // namespace ws
