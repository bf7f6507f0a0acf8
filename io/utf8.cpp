// io/utf8.cpp - checking UTF-8 byte by byte; see utf8.h.
#include "io/utf8.h"

#include <cstdint>

namespace seqgrad::io {

// A code point takes 1 to 4 bytes:
//   U+0000..U+007F      0xxxxxxx
//   U+0080..U+07FF      110xxxxx 10xxxxxx
//   U+0800..U+FFFF      1110xxxx 10xxxxxx 10xxxxxx         (minus the surrogates D800..DFFF)
//   U+10000..U+10FFFF   11110xxx 10xxxxxx 10xxxxxx 10xxxxxx
// Each code point must use the shortest form ("overlong" encodings are invalid).

// The length of the well-formed sequence at text[i], or 0 if it is not one.
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  // From the lead byte: the sequence length n, the code point's first bits, and the smallest
  // code point that needs n bytes.
  size_t n;
  uint32_t cp, min;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2;
    cp = b0 & 0x1F;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3;
    cp = b0 & 0x0F;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4;
    cp = b0 & 0x07;
    min = 0x10000;
  } else {
    return 0;  // a continuation byte, or 0xF8..0xFF
  }
  if (text.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool is_valid_utf8(std::string_view text, size_t* bad_byte) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      if (bad_byte) *bad_byte = i;
      return false;
    }
    i += n;
  }
  return true;
}

bool strip_byte_order_mark(std::string& text) {
  if (text.compare(0, 3, "\xEF\xBB\xBF") != 0) return false;
  text.erase(0, 3);
  return true;
}

}  // namespace seqgrad::io
