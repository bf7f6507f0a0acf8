// viz/svg.cpp - SVG canvas, UTF-8-safe escaping, colours, nice ticks and the atomic file writer.
#include "viz/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "io/atomic_file.h"
#include "tensor/check.h"

namespace seqgrad::viz {
namespace {

// ================================================================================================
// UTF-8 decoding

constexpr uint32_t kReplacement = 0xFFFD;

// Decodes the code point starting at s[i] and returns how many bytes it took. A byte that
// does not start a valid, shortest-form sequence decodes as U+FFFD and takes 1 byte.
size_t decode_utf8(const std::string& s, size_t i, uint32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  *cp = kReplacement;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n = 0;
  uint32_t v = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, v = c & 0x0F;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, v = c & 0x07;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 1;
  }
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = byte(i + k);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 1;
    v = (v << 6) | (b & 0x3F);
  }
  *cp = v;
  return n;
}

// XML 1.0 allows tab, newline, carriage return and everything from U+0020 except U+FFFE/FFFF.
bool xml_allowed(uint32_t cp) {
  if (cp < 0x20) return cp == '\t' || cp == '\n' || cp == '\r';
  return cp != 0xFFFE && cp != 0xFFFF;
}

// Characters drawn a full em wide: CJK ideographs, kana, hangul, full-width forms.
bool is_wide(uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
         (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
         (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || cp >= 0x20000;
}

// Replaces broken UTF-8 and characters XML forbids with U+FFFD; with `markup`, also turns
// & < > " ' into entities (comments need the first, text and attribute values both).
std::string escape(const std::string& text, bool markup) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp;
    const size_t n = decode_utf8(text, i, &cp);
    if (markup && cp == '&') out += "&amp;";
    else if (markup && cp == '<') out += "&lt;";
    else if (markup && cp == '>') out += "&gt;";
    else if (markup && cp == '"') out += "&quot;";
    else if (markup && cp == '\'') out += "&apos;";
    else if (cp == kReplacement || !xml_allowed(cp)) out += "\xEF\xBF\xBD";  // U+FFFD
    else out.append(text, i, n);
    i += n;
  }
  return out;
}

// ================================================================================================
// Numbers in the document

// A coordinate with at most two decimals and no trailing zeros: 12.5, 3, -0.25.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

bool all_finite(std::initializer_list<double> values) {
  for (double v : values)
    if (!std::isfinite(v)) return false;
  return true;
}

// name="escaped value"
std::string attr(const std::string& name, const std::string& value) {
  return " " + name + "=\"" + escape_xml(value) + "\"";
}

}  // namespace

// ================================================================================================
// Text

std::string escape_xml(const std::string& text) { return escape(text, /*markup=*/true); }

double text_width(const std::string& text, double font_size) {
  double ems = 0;
  for (size_t i = 0; i < text.size();) {
    uint32_t cp;
    i += decode_utf8(text, i, &cp);
    ems += is_wide(cp) ? 1.0 : 0.6;
  }
  return ems * font_size;
}

std::vector<std::string> wrap_text(const std::string& text, double font_size, double max_width) {
  std::vector<std::string> lines;
  std::string line, word;
  auto flush_word = [&]() {
    if (word.empty()) return;
    const std::string longer = line.empty() ? word : line + " " + word;
    if (line.empty() || text_width(longer, font_size) <= max_width) {
      line = longer;
    } else {
      lines.push_back(line);
      line = word;
    }
    word.clear();
  };
  for (char ch : text) {
    if (ch == ' ') flush_word();
    else word += ch;
  }
  flush_word();
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// ================================================================================================
// Colours

std::string Color::hex() const {
  char buf[8];
  const auto clamp = [](int v) { return std::min(255, std::max(0, v)); };
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", clamp(r), clamp(g), clamp(b));
  return buf;
}

Color palette(int64_t i) {
  static const Color colors[10] = {
      {37, 99, 235},   // blue
      {220, 38, 38},   // red
      {22, 163, 74},   // green
      {234, 140, 0},   // orange
      {126, 34, 206},  // purple
      {8, 145, 178},   // teal
      {219, 39, 119},  // pink
      {120, 85, 40},   // brown
      {101, 163, 13},  // olive
      {71, 85, 105},   // slate
  };
  if (i < 0) return {150, 150, 150};
  return colors[i % 10];
}

Color mix(Color a, Color b, double t) {
  t = std::min(1.0, std::max(0.0, t));
  const auto lerp = [t](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * t)); };
  return {lerp(a.r, b.r), lerp(a.g, b.g), lerp(a.b, b.b)};
}

Color lighten(Color c, double amount) { return mix(c, {255, 255, 255}, amount); }

Color sequential(double t) {
  if (std::isnan(t)) return {190, 190, 190};
  // white -> light blue -> dark blue, in two straight pieces for more contrast at the top end
  const Color white{255, 255, 255}, mid{107, 174, 214}, dark{8, 48, 107};
  t = std::min(1.0, std::max(0.0, t));
  return t < 0.5 ? mix(white, mid, 2 * t) : mix(mid, dark, 2 * t - 1);
}

// ================================================================================================
// Axis ticks

double nice_step(double range, int target) {
  check(std::isfinite(range) && range > 0, "nice_step: expected a finite range > 0, got ", range);
  check(target >= 1, "nice_step: expected target >= 1, got ", target);
  const double raw = range / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;  // in [1, 10)
  // The nearest of 1, 2, 5, 10 on a log scale (the cut points are their geometric means).
  const double nice = f < std::sqrt(2.0) ? 1 : f < std::sqrt(10.0) ? 2 : f < std::sqrt(50.0) ? 5 : 10;
  return nice * mag;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  check(std::isfinite(lo) && std::isfinite(hi), "nice_ticks: expected a finite range, got [", lo, ", ",
        hi, "]");
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo <= 1e-12 * std::max(1.0, std::abs(lo))) {  // one value: widen around it
    const double d = lo == 0 ? 1 : 0.1 * std::abs(lo);
    lo -= d, hi += d;
  }
  const double step = nice_step(hi - lo, target);
  // step = m * 10^e with m in {1, 2, 5, 10}; ticks k*m*10^e computed with an exact integer
  // k*m so that 0.6 is 6/10 (== 0.6), not 3*0.2 (== 0.6000000000000001).
  const int e = static_cast<int>(std::floor(std::log10(step) + 1e-9));
  const double m = std::round(step / std::pow(10.0, e));
  const auto tick = [&](int64_t k) {
    const double km = static_cast<double>(k) * m;
    return e >= 0 ? km * std::pow(10.0, e) : km / std::pow(10.0, -e);
  };
  const auto first = static_cast<int64_t>(std::floor(lo / step + 1e-9));
  const auto last = static_cast<int64_t>(std::ceil(hi / step - 1e-9));
  std::vector<double> ticks;
  for (int64_t k = first; k <= last; ++k) ticks.push_back(tick(k) + 0.0);  // + 0.0: no -0
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  check(std::isfinite(lo) && std::isfinite(hi) && lo > 0 && hi >= lo,
        "log_ticks: expected 0 < lo <= hi, got [", lo, ", ", hi, "]");
  int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (b == a) ++b;
  const int stride = (b - a + 7) / 8;  // at most 9 labels
  a = static_cast<int>(std::floor(static_cast<double>(a) / stride)) * stride;
  std::vector<double> ticks;
  for (int k = a;; k += stride) {
    ticks.push_back(k >= 0 ? std::pow(10.0, k) : 1 / std::pow(10.0, -k));
    if (k >= b) break;
  }
  return ticks;
}

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string s = buf;
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);  // a rounded -0
  return s;
}

std::string format_tick(double value, double step) {
  char buf[32];
  if (std::abs(value) < 1e-9 * std::abs(step)) value = 0;  // rounding noise around zero, and -0
  // Exponent form when the step is very large or small - decided by the step, not the value,
  // so all labels on one axis take the same form.
  const double a = std::abs(step);
  if (a >= 1e6 || (a > 0 && a < 1e-4)) {
    std::snprintf(buf, sizeof buf, "%g", value);
    return buf;
  }
  const int decimals = step >= 1 || step <= 0 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

double Scale::operator()(double v) const {
  const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                       : (v - lo) / (hi - lo);
  return p0 + t * (p1 - p0);
}

// ================================================================================================
// SvgCanvas

SvgCanvas::SvgCanvas(double width, double height) : width_(width), height_(height) {
  check(std::isfinite(width) && std::isfinite(height) && width > 0 && height > 0,
        "SvgCanvas: expected a positive size, got ", width, " x ", height);
}

void SvgCanvas::rect(double x, double y, double w, double h, const std::string& fill,
                     const std::string& stroke, double stroke_width) {
  if (!all_finite({x, y, w, h})) return comment("rect skipped: non-finite coordinate");
  body_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.0, w)) +
           "\" height=\"" + num(std::max(0.0, h)) + "\"" + attr("fill", fill);
  if (stroke != "none") body_ += attr("stroke", stroke) + " stroke-width=\"" + num(stroke_width) + "\"";
  body_ += "/>\n";
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, const std::string& stroke, double width,
                     const std::string& dash) {
  if (!all_finite({x1, y1, x2, y2})) return comment("line skipped: non-finite coordinate");
  body_ += "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) +
           "\"" + attr("stroke", stroke) + " stroke-width=\"" + num(width) + "\"";
  if (!dash.empty()) body_ += attr("stroke-dasharray", dash);
  body_ += "/>\n";
}

void SvgCanvas::polyline(const std::vector<std::pair<double, double>>& points, const std::string& stroke,
                         double width) {
  std::string pts;
  for (const auto& [x, y] : points) {
    if (!all_finite({x, y})) return comment("polyline skipped: non-finite coordinate");
    if (!pts.empty()) pts += ' ';
    pts += num(x) + "," + num(y);
  }
  body_ += "<polyline points=\"" + pts + "\" fill=\"none\"" + attr("stroke", stroke) + " stroke-width=\"" +
           num(width) + "\" stroke-linejoin=\"round\" stroke-linecap=\"round\"/>\n";
}

void SvgCanvas::circle(double cx, double cy, double r, const std::string& fill, const std::string& stroke,
                       double stroke_width) {
  if (!all_finite({cx, cy, r})) return comment("circle skipped: non-finite coordinate");
  body_ += "<circle cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\"" + attr("fill", fill);
  if (stroke != "none") body_ += attr("stroke", stroke) + " stroke-width=\"" + num(stroke_width) + "\"";
  body_ += "/>\n";
}

void SvgCanvas::polygon(const std::vector<std::pair<double, double>>& points, const std::string& fill) {
  std::string pts;
  for (const auto& [x, y] : points) {
    if (!all_finite({x, y})) return comment("polygon skipped: non-finite coordinate");
    if (!pts.empty()) pts += ' ';
    pts += num(x) + "," + num(y);
  }
  body_ += "<polygon points=\"" + pts + "\"" + attr("fill", fill) + "/>\n";
}

void SvgCanvas::round_rect(double x, double y, double w, double h, double radius, const std::string& fill,
                           const std::string& stroke, double stroke_width) {
  if (!all_finite({x, y, w, h, radius})) return comment("rect skipped: non-finite coordinate");
  body_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.0, w)) + "\" height=\"" +
           num(std::max(0.0, h)) + "\" rx=\"" + num(radius) + "\"" + attr("fill", fill);
  if (stroke != "none") body_ += attr("stroke", stroke) + " stroke-width=\"" + num(stroke_width) + "\"";
  body_ += "/>\n";
}

void SvgCanvas::text(double x, double y, const std::string& text, const TextStyle& style) {
  if (!all_finite({x, y})) return comment("text skipped: non-finite coordinate");
  body_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(style.size) + "\"" +
           attr("fill", style.fill);
  if (style.anchor != "start") body_ += attr("text-anchor", style.anchor);
  if (style.bold) body_ += " font-weight=\"bold\"";
  if (style.dy != 0) body_ += " dy=\"" + num(style.dy) + "em\"";
  if (style.rotate != 0) body_ += " transform=\"rotate(" + num(style.rotate) + " " + num(x) + " " + num(y) + ")\"";
  body_ += ">" + escape_xml(text) + "</text>\n";
}

namespace {

// The number in attribute `name` of an SVG document's opening <svg ...> tag (width, height).
double svg_attribute(const std::string& doc, const char* name) {
  const size_t open = doc.find("<svg"), end = doc.find('>', open);
  check(open != std::string::npos && end != std::string::npos, "stack_vertically: expected an <svg> document");
  const std::string key = std::string(" ") + name + "=\"";
  const size_t at = doc.find(key, open);
  check(at != std::string::npos && at < end, "stack_vertically: the <svg> document has no ", name);
  return std::stod(doc.substr(at + key.size()));
}

}  // namespace

void SvgCanvas::embed(double x, double y, const std::string& svg_document) {
  const size_t open = svg_document.find("<svg");
  check(open != std::string::npos, "SvgCanvas::embed: expected an <svg> document");
  body_ += "<svg x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + svg_document.substr(open + 4);
}

std::string stack_vertically(const std::vector<std::string>& parts) {
  check(!parts.empty(), "stack_vertically: expected at least one picture, got none");
  double width = 0, height = 0;
  for (const std::string& p : parts) {
    width = std::max(width, svg_attribute(p, "width"));
    height += svg_attribute(p, "height");
  }
  SvgCanvas c(width, height);
  c.rect(0, 0, width, height, "white");
  double y = 0;
  for (const std::string& p : parts) {
    c.embed(0, y, p);
    y += svg_attribute(p, "height");
  }
  return c.str();
}

void SvgCanvas::comment(const std::string& text) {
  // A comment may not contain "--" (nor end in "-", which the trailing space prevents).
  std::string s = escape(text, /*markup=*/false);
  for (size_t p; (p = s.find("--")) != std::string::npos;) s.replace(p, 2, "- -");
  body_ += "<!-- " + s + " -->\n";
}

void SvgCanvas::begin_group(const std::vector<std::pair<std::string, std::string>>& attributes) {
  body_ += "<g";
  for (const auto& [name, value] : attributes) body_ += attr(name, value);
  body_ += ">\n";
  ++open_groups_;
}

void SvgCanvas::end_group() {
  check_state(open_groups_ > 0, "SvgCanvas::end_group: no group is open");
  body_ += "</g>\n";
  --open_groups_;
}

std::string SvgCanvas::str() const {
  std::string doc = "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(width_) +
                    "\" height=\"" + num(height_) + "\" viewBox=\"0 0 " + num(width_) + " " + num(height_) +
                    "\" font-family=\"DejaVu Sans, Helvetica, Arial, 'Noto Sans CJK SC', 'WenQuanYi Micro Hei', sans-serif\">\n";
  doc += body_;
  for (int i = 0; i < open_groups_; ++i) doc += "</g>\n";  // close what the caller left open
  doc += "</svg>\n";
  return doc;
}

void SvgCanvas::save(const std::string& path) const { io::write_file_atomic(path, str(), "save"); }

}  // namespace seqgrad::viz
