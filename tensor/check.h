// tensor/check.h - the one way seqgrad fails: check(...) throws a standard exception.
//
// Every message reads "op: problem; expected A, got B" (CONTRIBUTING.md, "Messages"). The message
// parts are only formatted when the check fails, so checks are cheap on the hot path; they are
// still *evaluated* (they are function arguments), so never pass one that can itself throw.
// Library code never calls exit() or abort(); the command-line tool turns these exceptions
// into one line on stderr.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace seqgrad {

// Joins any streamable values into one string: cat("expected ", 3, ", got ", 4).
template <class... Parts>
std::string cat(Parts&&... parts) {
  std::ostringstream os;
  (os << ... << std::forward<Parts>(parts));
  return os.str();
}

// Text from outside (a file's tensor name, a JSON key) for a message, cut short when longer than
// 80 bytes, at a character boundary, saying how long it was: a hostile file must not make a
// megabyte-long error line.  bounded(name) -> "decoder.out.weight" or "aaaa... (2097152 bytes)"
inline std::string bounded(const std::string& text) {
  constexpr size_t kMost = 80;
  if (text.size() <= kMost) return text;
  size_t cut = kMost - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return cat(text.substr(0, cut), "... (", text.size(), " bytes)");
}

// Shape mismatches, bad axes, bad arguments -> std::invalid_argument.
//   check(a.dim() == 2, "matmul: expected a 2-D tensor, got shape ", a.shape());
template <class... Parts>
void check(bool ok, Parts&&... parts) {
  if (!ok) throw std::invalid_argument(cat(std::forward<Parts>(parts)...));
}

// An index outside its range (a token id >= vocabulary size, an axis slice past the end)
// -> std::out_of_range.
template <class... Parts>
void check_index(bool ok, Parts&&... parts) {
  if (!ok) throw std::out_of_range(cat(std::forward<Parts>(parts)...));
}

// A state the caller cannot fix by changing arguments (a freed graph, a corrupt file)
// -> std::runtime_error.
template <class... Parts>
void check_state(bool ok, Parts&&... parts) {
  if (!ok) throw std::runtime_error(cat(std::forward<Parts>(parts)...));
}

}  // namespace seqgrad
