// io/utf8.h - is this text well-formed UTF-8? Every file seqgrad reads text from (corpora, the
// JSON of checkpoint headers) and every text it writes is checked with these two functions, so
// that a broken byte is reported where it enters, naming the file and the line, not later.
// What this is not: a decoder to code points (data/tokenizer.h splits text into characters).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace seqgrad::io {

// The length (1 to 4) of the well-formed UTF-8 sequence at text[i], or 0 if it is not one.
size_t utf8_sequence_length(std::string_view text, size_t i);

// Is `text` well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF)?
// On failure, *bad_byte (if given) receives the offset of the first byte that is wrong.
bool is_valid_utf8(std::string_view text, size_t* bad_byte = nullptr);

// Removes a UTF-8 byte-order mark (EF BB BF, U+FEFF) from the start of `text`, if there is one,
// and says whether it did. Some editors write one at the start of a text file; it is not part
// of the first word. Readers call this on the first line of what they read.
bool strip_byte_order_mark(std::string& text);

}  // namespace seqgrad::io
