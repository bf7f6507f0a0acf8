// examples/seqgrad/pictures.cpp - the heatmaps, the beam tree and the explorer page of
// `seqgrad attention` (see pictures.h).
#include "examples/seqgrad/pictures.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "io/json.h"
#include "tensor/check.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"

namespace seqgrad::cli {

namespace {

std::string title_of(const AttentionView& v) { return v.sentence + "  ->  " + v.translation; }

int64_t heads_of(const AttentionView& v) { return v.layers[0].size(0); }

}  // namespace

// ================================================================================================
// Heatmaps

viz::Heatmap attention_map(const AttentionView& v, int64_t layer, int64_t head) {
  const int64_t L = static_cast<int64_t>(v.layers.size()), NH = heads_of(v);
  check(layer >= 0 && layer < L, "seqgrad attention: --layer: expected 0 to ", L - 1, " (the model has ", L,
        " decoder layer", L == 1 ? "" : "s", "), got ", layer);
  check(head >= -1 && head < NH, "seqgrad attention: --head: expected 0 to ", NH - 1, " or mean (the model has ", NH,
        " head", NH == 1 ? "" : "s", "), got ", head);
  const Tensor& w = v.layers[static_cast<size_t>(layer)];  // (NH, T, S)
  const Tensor map = head < 0 ? mean(w, 0) : slice(w, 0, head, head + 1).reshape({w.size(1), w.size(2)});
  viz::Heatmap h(v.output, v.source, map);
  h.set_value_range(0, 1);  // attention weights: the same scale in every map
  h.set_title(title_of(v) + (L > 1 || NH > 1 ? "  (layer " + std::to_string(layer) + ", " +
                                                   (head < 0 ? std::string("mean of the heads") : "head " + std::to_string(head)) + ")"
                                             : std::string()));
  return h;
}

viz::HeatmapGrid attention_grid(const AttentionView& v) {
  const int64_t L = static_cast<int64_t>(v.layers.size()), NH = heads_of(v);
  viz::HeatmapGrid grid(NH);
  for (int64_t l = 0; l < L; ++l)
    for (int64_t h = 0; h < NH; ++h) {
      const Tensor& w = v.layers[static_cast<size_t>(l)];
      viz::Heatmap map(v.output, v.source, slice(w, 0, h, h + 1).reshape({w.size(1), w.size(2)}));
      grid.add(map.set_title("layer " + std::to_string(l) + ", head " + std::to_string(h)).set_value_range(0, 1));
    }
  grid.set_title("Every layer (row) and head (column) of the encoder-decoder attention: " + title_of(v));
  return grid;
}

// ================================================================================================
// The beam search's tree

viz::Diagram beam_tree(const AttentionView& v, const data::Vocab& tgt_vocab) {
  check(!v.search.empty(), "seqgrad attention: the beam tree needs beam search; expected --beam 2 or more, got ", v.beam);
  auto token = [&](int64_t id) { return tgt_vocab.decode({id}, /*strip_special=*/false)[0]; };
  // The chosen output: the finished node with the best score (the first, on ties), as
  // beam_search picks it.
  const nn::SearchNode* best = nullptr;
  for (const nn::SearchNode& n : v.search)
    if (n.finished && (!best || n.score > best->score)) best = &n;
  auto on_chosen_path = [&](const std::vector<int64_t>& prefix) {
    return best && prefix.size() <= best->tokens.size() && std::equal(prefix.begin(), prefix.end(), best->tokens.begin());
  };
  viz::Diagram d(viz::Diagram::Direction::top_to_bottom);  // a step per row: as tall as the output is long
  viz::BoxStyle chosen;
  chosen.fill = "#bfdbfe";
  chosen.stroke = "#2563eb";
  chosen.stroke_width = 2.5;
  const int64_t root = d.add_box({"<bos>", "log P 0.00"}, chosen);
  std::map<std::vector<int64_t>, int64_t> live_box;  // a live prefix -> its box (a prefix is kept once)
  live_box[{}] = root;
  auto parent_of = [&](std::vector<int64_t> prefix) {
    if (!prefix.empty()) prefix.pop_back();
    auto it = live_box.find(prefix);
    return it == live_box.end() ? root : it->second;
  };
  for (const nn::SearchNode& n : v.search) {
    const bool is_best = &n == best;
    if (n.finished && !n.eos) {
      // Cut off at max_len: the live prefix itself counts as finished; say so under its box.
      const int64_t box = d.add_box({"(max_len)", "score " + viz::format_fixed(n.score, 2)}, is_best ? chosen : viz::BoxStyle());
      d.add_arrow(live_box.count(n.tokens) ? live_box[n.tokens] : root, box);
      continue;
    }
    if (n.finished) {
      viz::BoxStyle style;
      style.fill = "#ffedd5";
      const int64_t box = d.add_box({"<eos>", "log P " + viz::format_fixed(n.log_prob, 2), "score " + viz::format_fixed(n.score, 2)},
                                    is_best ? chosen : style);
      const auto from = live_box.find(n.tokens);
      d.add_arrow(from == live_box.end() ? root : from->second, box, "", is_best ? "#2563eb" : "#334155");
      continue;
    }
    const bool path = on_chosen_path(n.tokens);
    const int64_t box = d.add_box({token(n.tokens.back()), "log P " + viz::format_fixed(n.log_prob, 2)}, path ? chosen : viz::BoxStyle());
    d.add_arrow(parent_of(n.tokens), box, "", path ? "#2563eb" : "#334155");
    live_box[n.tokens] = box;
  }
  d.set_title("Beam search, K = " + std::to_string(v.beam) + ": " + title_of(v))
      .set_notes({"Each box is a prefix the search kept at that step, with log P(prefix); orange boxes finished with <eos>,",
                  "scored by log P / ((5 + |Y|) / 6)^0.6 (|Y| counts the <eos>). Blue: the chosen output, the best score."});
  return d;
}

// ================================================================================================
// The explorer

namespace {

// A JSON string, safe inside a <script> element ("</" would end it).
std::string js_string(const std::string& s) {
  std::string j = io::Json(s).dump(), out;
  for (size_t i = 0; i < j.size(); ++i) {
    out += j[i];
    if (j[i] == '<' && i + 1 < j.size() && j[i + 1] == '/') out += '\\';
  }
  return out;
}

std::string js_strings(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + js_string(items[i]);
  return out + "]";
}

// [layer][head][t][s], 4 decimals.
std::string js_weights(const AttentionView& v) {
  std::string out = "[";
  for (size_t l = 0; l < v.layers.size(); ++l) {
    const Tensor& w = v.layers[l];  // (NH, T, S)
    const int64_t NH = w.size(0), T = w.size(1), S = w.size(2);
    out += l ? ",[" : "[";
    for (int64_t h = 0; h < NH; ++h) {
      out += h ? ",[" : "[";
      for (int64_t t = 0; t < T; ++t) {
        out += t ? ",[" : "[";
        for (int64_t s = 0; s < S; ++s) out += (s ? "," : "") + viz::format_fixed(w.data()[(h * T + t) * S + s], 4);
        out += "]";
      }
      out += "]";
    }
    out += "]";
  }
  return out + "]";
}

// The finished hypotheses, best score first: [{text, logp, score}].
std::string js_alternatives(const AttentionView& v, const data::Vocab& tgt_vocab) {
  std::vector<const nn::SearchNode*> done;
  for (const nn::SearchNode& n : v.search)
    if (n.finished) done.push_back(&n);
  std::stable_sort(done.begin(), done.end(), [](auto a, auto b) { return a->score > b->score; });
  std::string out = "[";
  for (size_t i = 0; i < done.size(); ++i) {
    std::string text;
    for (const std::string& t : tgt_vocab.decode(done[i]->tokens, /*strip_special=*/false)) text += (text.empty() ? "" : " ") + t;
    out += (i ? "," : "") + std::string("{\"text\":") + js_string(text) + ",\"logp\":" + viz::format_fixed(done[i]->log_prob, 4) +
           ",\"score\":" + viz::format_fixed(done[i]->score, 4) + "}";
  }
  return out + "]";
}

// The page around the data: layout and colours, then the script that draws it.
constexpr const char* kStyle = R"CSS(
body { font-family: "DejaVu Sans", "Noto Sans CJK SC", "WenQuanYi Micro Hei", sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
.sub { color: #475569; margin-bottom: 14px; }
.controls { margin-bottom: 14px; }
.controls label { margin-right: 16px; }
select { font-size: 14px; }
.panels { display: flex; gap: 40px; align-items: flex-start; flex-wrap: wrap; }
h2 { font-size: 15px; margin: 18px 0 8px 0; color: #334155; }
.panel h2 { margin-top: 0; }
.tok { padding: 3px 8px; margin: 2px 0; border-radius: 4px; cursor: pointer; white-space: nowrap; font-size: 15px; }
.tok.focus { outline: 2px solid #2563eb; }
#lines { display: flex; gap: 0; align-items: flex-start; }
table.map { border-collapse: collapse; }
table.map td { width: 30px; height: 30px; border: 1px solid #e2e8f0; text-align: center; font-size: 10px; }
table.map th { font-weight: normal; font-size: 13px; padding: 2px 6px; color: #334155; }
table.map th.col { height: 70px; vertical-align: bottom; }
table.map th.col span { display: inline-block; transform: rotate(-60deg); transform-origin: left bottom; white-space: nowrap; width: 14px; }
table.map tr.focus th { color: #2563eb; font-weight: bold; }
#status { margin: 12px 0; color: #334155; min-height: 20px; }
table.alts { border-collapse: collapse; font-size: 14px; }
table.alts td, table.alts th { padding: 3px 10px; border-bottom: 1px solid #e2e8f0; text-align: left; }
table.alts tr.chosen td { background: #dbeafe; font-weight: bold; }
)CSS";

constexpr const char* kScript = R"JS(
// State: which layer and head (-1 = the mean of the heads), and which output token has the focus.
const state = { layer: D.layers.length - 1, head: -1, focus: -1 };
function weights(layer, head) {  // (T, S) of one head, or the mean of all
  const heads = D.layers[layer];
  if (head >= 0) return heads[head];
  return heads[0].map((row, t) => row.map((_, s) => heads.reduce((sum, h) => sum + h[t][s], 0) / heads.length));
}
function shade(w) { return `rgba(37, 99, 235, ${Math.min(1, Math.max(0, w)).toFixed(3)})`; }
function ink(w) { return w > 0.55 ? "white" : "#222"; }
function draw() {
  const W = weights(state.layer, state.head);
  // The two columns of tokens and the lines between them (bertviz's head view).
  const out = document.getElementById("out-tokens"), src = document.getElementById("src-tokens");
  out.innerHTML = ""; src.innerHTML = "";
  D.output.forEach((tok, t) => {
    const e = document.createElement("div");
    e.className = "tok" + (t === state.focus ? " focus" : "");
    e.id = "out-" + t; e.textContent = tok;
    e.onmouseenter = () => { state.focus = t; draw(); };
    out.appendChild(e);
  });
  D.source.forEach((tok, s) => {
    const e = document.createElement("div");
    const w = state.focus >= 0 ? W[state.focus][s] : 0;
    e.className = "tok"; e.id = "src-" + s; e.textContent = tok;
    e.style.background = shade(w); e.style.color = ink(w); e.dataset.w = w.toFixed(4);
    src.appendChild(e);
  });
  // Each line joins the middles of two tokens, measured where the browser put them.
  const svg = document.getElementById("links");
  svg.setAttribute("height", Math.max(out.offsetHeight, src.offsetHeight));
  const top = svg.getBoundingClientRect().top;
  const middle = id => { const r = document.getElementById(id).getBoundingClientRect(); return (r.top + r.height / 2 - top).toFixed(1); };
  let lines = "";
  W.forEach((row, t) => row.forEach((w, s) => {
    if (state.focus >= 0 && t !== state.focus) return;
    if (w < 0.01) return;
    lines += `<line x1="4" y1="${middle("out-" + t)}" x2="116" y2="${middle("src-" + s)}" stroke="#2563eb" stroke-width="${(1 + 3 * w).toFixed(2)}" stroke-opacity="${w.toFixed(3)}"/>`;
  }));
  svg.innerHTML = lines;
  // The heatmap: one cell per (output token, source token).
  let html = "<tr><th></th>" + D.source.map(s => `<th class="col"><span>${esc(s)}</span></th>`).join("") + "</tr>";
  W.forEach((row, t) => {
    html += `<tr class="${t === state.focus ? "focus" : ""}"><th>${esc(D.output[t])}</th>` +
      row.map((w, s) => `<td id="cell-${t}-${s}" data-w="${w.toFixed(4)}" style="background:${shade(w)};color:${ink(w)}">${w >= 0.1 ? w.toFixed(2) : ""}</td>`).join("") + "</tr>";
  });
  const map = document.getElementById("map");
  map.innerHTML = html;
  map.querySelectorAll("tr").forEach((tr, i) => { if (i > 0) tr.onmouseenter = () => { state.focus = i - 1; draw(); }; });
  // What the focused token looked at most.
  const status = document.getElementById("status");
  if (state.focus < 0) {
    status.textContent = "Point at an output token to see what it looked at.";
  } else {
    const top = W[state.focus].map((w, s) => [w, s]).sort((a, b) => b[0] - a[0]).slice(0, 3);
    status.textContent = `"${D.output[state.focus]}" looked at ` + top.map(([w, s]) => `"${D.source[s]}" ${w.toFixed(2)}`).join(", ");
  }
  document.getElementById("layer").value = String(state.layer);
  document.getElementById("head").value = String(state.head);
}
function esc(s) { return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
function setup() {
  const layer = document.getElementById("layer"), head = document.getElementById("head");
  D.layers.forEach((_, l) => layer.add(new Option("layer " + l, String(l))));
  head.add(new Option("mean of the heads", "-1"));
  D.layers[0].forEach((_, h) => head.add(new Option("head " + h, String(h))));
  layer.onchange = () => { state.layer = Number(layer.value); draw(); };
  head.onchange = () => { state.head = Number(head.value); draw(); };
  // The first state may come from the address: #layer=1&head=2&focus=3 (head=mean).
  for (const part of location.hash.replace(/^#/, "").split("&")) {
    const [key, value] = part.split("=");
    const n = value === "mean" ? -1 : Number(value);
    if (key === "layer" && n >= 0 && n < D.layers.length) state.layer = n;
    if (key === "head" && n >= -1 && n < D.layers[0].length) state.head = n;
    if (key === "focus" && n >= -1 && n < D.output.length) state.focus = n;
  }
  // The beam's alternatives.
  const alts = document.getElementById("alts");
  if (D.alternatives.length === 0) {
    alts.innerHTML = "<p>Greedy decoding: run <code>seqgrad attention --beam 4 --html ...</code> to see the alternatives beam search weighed.</p>";
  } else {
    alts.innerHTML = "<table class='alts'><tr><th>#</th><th>finished hypothesis</th><th>log P</th><th>score</th></tr>" +
      D.alternatives.map((a, i) => `<tr class="${i === 0 ? "chosen" : ""}"><td>${i + 1}</td><td>${esc(a.text)}</td><td>${a.logp.toFixed(3)}</td><td>${a.score.toFixed(3)}</td></tr>`).join("") +
      "</table>";
  }
  draw();
}
setup();
)JS";

}  // namespace

std::string explorer_html(const AttentionView& v, const data::Vocab& tgt_vocab) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>seqgrad attention explorer</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  h += "<h1 id=\"title\"></h1>\n<div class=\"sub\">What each output token looked at in the source: "
       "the encoder-decoder attention of the model, layer by layer and head by head.</div>\n";
  h += "<div class=\"controls\"><label>Layer <select id=\"layer\"></select></label>"
       "<label>Head <select id=\"head\"></select></label></div>\n";
  h += "<div class=\"panels\">\n<div class=\"panel\"><h2>output &rarr; source</h2><div id=\"lines\">"
       "<div id=\"out-tokens\"></div><svg id=\"links\" width=\"120\"></svg><div id=\"src-tokens\"></div></div></div>\n"
       "<div class=\"panel\"><h2>weights (rows: output, columns: source)</h2><table class=\"map\" id=\"map\"></table></div>\n"
       "</div>\n<div id=\"status\"></div>\n<h2>Beam search: the finished alternatives, best score first</h2>\n"
       "<div id=\"alts\"></div>\n";
  h += "<script>\nconst D = {sentence: " + js_string(v.sentence) + ", translation: " + js_string(v.translation) +
       ",\n  source: " + js_strings(v.source) + ",\n  output: " + js_strings(v.output) + ",\n  layers: " + js_weights(v) +
       ",\n  alternatives: " + js_alternatives(v, tgt_vocab) + "};\n";
  h += "document.getElementById(\"title\").textContent = D.sentence + \"  \\u2192  \" + D.translation;\n";
  h += std::string(kScript) + "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace seqgrad::cli
