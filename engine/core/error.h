// SPDX-License-Identifier: Apache-2.0
// One exception type for everything the user can cause: its message is the one-line
// error the CLI prints (naming the file and what is wrong).
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// Several usage problems found in one pass (every option with a bad value): what() is the first,
// lines() all of them, each printed as an error line of its own.
class UsageErrors : public UsageError {
 public:
  explicit UsageErrors(std::vector<std::string> lines) : UsageError(lines.at(0)), lines_(std::move(lines)) {}
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;
};

}  // namespace ws
