// examples/book_figures - draws the book's figures of things that exist in the code, from the
// code's own objects, so that a picture cannot drift from the program it shows:
//   autograd-graph.svg     the Nodes the engine recorded for chapter 2's L = (a b + c) f, with
//                          each value and the gradient backward() sent along each edge
//   gemm-blocking.svg      the blocks, panels and register tile gemm cuts a product into, read
//                          from the kernel's own constants (gemm_blocking)
//   masks.svg              the padding and causal masks, as padding_mask and causal_mask make them
//   positional-waves.svg   columns of sinusoidal_table, and positional-dots.svg its rows' dot products
//   module-tree.svg        a small Transformer's modules, their parameters' shapes and counts
//   attention-cost.svg     multiply-adds of one decoder step, global against local attention, from
//                          the shapes the two modules multiply
//   tensor-layout.svg      a (2, 3, 4) tensor as matrices and as its row-major storage
//   bpe-merges.svg         data::Bpe::learn on the four words of the BPE paper, merge by merge
// None of them trains anything: the same build draws the same bytes. The figures of training
// runs come from the seqgrad tool and the examples (docs/figures/make_figures.sh runs them all).
//   build/examples/book_figures --out docs/figures
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <unordered_map>
#include <string>
#include <vector>

#include "examples/common/args.h"
#include "seqgrad.h"
#include "viz/diagram.h"

using namespace seqgrad;

namespace {

std::string shape_text(const Shape& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

// ================================================================================================
// autograd-graph.svg: walk the Nodes from L to the leaves, as graph_to_string does, and draw each
// once. A box is a Variable (its name, the op that made it, its value and gradient); an arrow
// goes from an input to the op's result and carries the gradient that flowed back along it.
void autograd_graph(const std::string& path) {
  Variable a(scalar(2), true), b(scalar(-3), true), c(scalar(10), true), f(scalar(-2), true);
  a.set_name("a"), b.set_name("b"), c.set_name("c"), f.set_name("f");
  Variable e = a * b;
  Variable d = e + c;
  Variable L = d * f;
  e.set_name("e"), d.set_name("d"), L.set_name("L");
  // The values are not kept by the graph's edges (a Node keeps shapes and gradients, not
  // values): look them up by name among the Variables made above.
  const std::map<std::string, real> value = {{"a", a.item()}, {"b", b.item()}, {"c", c.item()}, {"f", f.item()},
                                             {"e", e.item()}, {"d", d.item()}, {"L", L.item()}};
  e.retain_grad(), d.retain_grad(), L.retain_grad();
  L.backward(Tensor(), /*retain_graph=*/true);  // keep the Nodes, to walk them below

  viz::Diagram diagram;
  std::map<const void*, int64_t> box_of;  // AutogradMeta -> box
  std::vector<std::pair<Edge, int64_t>> todo{{Edge(L), -1}};  // (variable, the box it feeds)
  while (!todo.empty()) {
    auto [v, consumer] = todo.back();
    todo.pop_back();
    const void* key = &v.meta();
    auto found = box_of.find(key);
    int64_t box;
    if (found != box_of.end()) {
      box = found->second;
    } else {
      const std::string made = v.is_leaf() ? "leaf" : "made by " + v.op();
      viz::BoxStyle style;
      if (v.is_leaf()) style.fill = "#dbeafe";
      box = diagram.add_box({v.name(), made, "value " + viz::format_fixed(value.at(v.name()), 1),
                             "grad " + viz::format_fixed(v.grad().item(), 1)},
                            style);
      box_of[key] = box;
      if (!v.is_leaf())
        for (auto in = v.node()->inputs.rbegin(); in != v.node()->inputs.rend(); ++in) todo.push_back({*in, box});
    }
    if (consumer >= 0) diagram.add_arrow(box, consumer, "dL/d" + v.name() + " = " + viz::format_fixed(v.grad().item(), 1), "#2563eb");
  }
  diagram.set_title("L = (a b + c) f: the graph backward() walked, right to left")
      .set_notes({"Each box is a Variable: the op that made it, its value (forward, left to right) and dL/d(it)",
                  "(backward, right to left). An arrow carries the input's gradient; blue boxes are leaves."})
      .save(path);
}

// ================================================================================================
// gemm-blocking.svg: C = A B cut as gemm_blocked.h cuts it on one thread, for M = 300, N = 200,
// K = 600: row blocks of at most mc rows (whole slivers of mr), K blocks of at most kc, panels of
// nr columns, and the mr x nr tile of C the micro-kernel keeps in registers.
void gemm_blocking_figure(const std::string& path) {
  const GemmBlocking g = gemm_blocking("avx2"), wide = gemm_blocking("avx512");
  const int64_t M = 300, N = 200, K = 600;
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  // The same splits as gemm's: K into the fewest blocks of at most kc, balanced; M into the
  // fewest blocks of at most mc rows, the slivers shared out evenly.
  const int64_t k_blocks = ceil_div(K, g.kc), kc = ceil_div(K, k_blocks);
  const int64_t slivers = ceil_div(M, g.mr), row_blocks = ceil_div(M, g.mc);
  const double s = 0.5;  // pixels per element
  const double ax = 40, ay = 60 + K * s + 40;  // A's top-left; B sits above C
  const double cx = ax + K * s + 40, cy = ay, bx = cx, by = 60;
  viz::SvgCanvas cv(cx + N * s + 330, ay + M * s + 90);
  cv.rect(0, 0, cv.width(), cv.height(), "white");
  cv.text(20, 26, "C (300, 200) = A (300, 600) B (600, 200), cut as gemm cuts it (the avx2 copy, one thread)",
          {15, "start", "#222222", true});
  const viz::TextStyle label{12, "middle", "#334155"};
  const std::string grid = "#94a3b8";
  // A: row blocks (horizontal lines) and K blocks (vertical lines); B: K blocks and panels.
  cv.rect(ax, ay, K * s, M * s, "#f8fafc", "#334155", 1.5);
  cv.rect(bx, by, N * s, K * s, "#f8fafc", "#334155", 1.5);
  cv.rect(cx, cy, N * s, M * s, "#f8fafc", "#334155", 1.5);
  for (int64_t r = 1; r < row_blocks; ++r) {
    const double y = ay + static_cast<double>(r * slivers / row_blocks * g.mr) * s;
    cv.line(ax, y, ax + K * s, y, "#334155", 1.2);
    cv.line(cx, y, cx + N * s, y, "#334155", 1.2);
  }
  for (int64_t k = 1; k < k_blocks; ++k) {
    cv.line(ax + k * kc * s, ay, ax + k * kc * s, ay + M * s, "#334155", 1.2);
    cv.line(bx, by + k * kc * s, bx + N * s, by + k * kc * s, "#334155", 1.2);
  }
  for (int64_t j = g.nr; j < N; j += g.nr) {
    cv.line(bx + j * s, by, bx + j * s, by + K * s, grid, 0.6);
    cv.line(cx + j * s, cy, cx + j * s, cy + M * s, grid, 0.6);
  }
  // The blocks in use at one moment: A block (rows of block 0, K block 1), B panel 2 of K block
  // 1, and the tile of C they update (sliver 4 of the row block, panel 2).
  const int64_t rows0 = slivers / row_blocks * g.mr;
  // (Sliver 4 of the block: 6 rows are 3 pixels here, so it is drawn darker, with a callout.)
  const int64_t sliver = 4;
  cv.rect(ax + kc * s, ay, kc * s, rows0 * s, "#2563eb33", "#2563eb", 2);
  cv.rect(ax + kc * s, ay + sliver * g.mr * s, kc * s, g.mr * s, "#1e3a8a", "none");
  cv.line(ax + 2 * kc * s + 2, ay + (sliver + 0.5) * g.mr * s, ax + 2 * kc * s + 14, ay + (sliver + 0.5) * g.mr * s + 14,
          "#1e3a8a", 1);
  cv.text(ax + 2 * kc * s + 16, ay + (sliver + 0.5) * g.mr * s + 20, "a sliver: " + std::to_string(g.mr) + " rows",
          {11, "start", "#1e3a8a"});
  cv.rect(bx + 2 * g.nr * s, by + kc * s, g.nr * s, kc * s, "#ea580c", "none");
  cv.rect(cx + 2 * g.nr * s, cy + sliver * g.mr * s, g.nr * s, g.mr * s, "#dc2626", "none");
  cv.text(ax + K * s / 2, ay + M * s + 22, "A: " + std::to_string(row_blocks) + " row blocks (at most mc = " +
          std::to_string(g.mc) + " rows)", label);
  cv.text(ax + K * s / 2, ay + M * s + 40, "x " + std::to_string(k_blocks) + " K blocks of " + std::to_string(kc) +
          " (at most kc = " + std::to_string(g.kc) + ")", label);
  cv.text(bx + N * s / 2, by - 10, "B: panels of nr = " + std::to_string(g.nr) + " columns", label);
  cv.text(cx + N * s / 2, cy + M * s + 22, "C", label);
  // The legend, right of C.
  const double lx = cx + N * s + 30;
  double ly = 80;
  const struct {
    std::string fill, text;
  } items[] = {
      {"#2563eb33", "an A block, mc x kc: stays in L2 while every panel passes"},
      {"#ea580c", "a packed B panel, kc x nr = " + std::to_string(kc) + " x " + std::to_string(g.nr) + ": stays in L1"},
      {"#1e3a8a", "a sliver of A, mr x kc = " + std::to_string(g.mr) + " x " + std::to_string(kc)},
      {"#dc2626", "the tile of C, mr x nr = " + std::to_string(g.mr) + " x " + std::to_string(g.nr) + ": in registers"},
  };
  for (const auto& item : items) {
    cv.rect(lx, ly - 10, 14, 14, item.fill, "#334155", 0.8);
    double line_y = ly + 1;
    // Two lines where the text is long: what it is, then where it lives.
    const size_t colon = item.text.find(':');
    cv.text(lx + 22, line_y, item.text.substr(0, colon), {12, "start", "#222222"});
    if (colon != std::string::npos) cv.text(lx + 22, line_y + 16, item.text.substr(colon + 2), {12, "start", "#475569"});
    ly += 44;
  }
  // The register tile, enlarged: mr rows of nr / (vector lanes) vectors, for both copies.
  auto tile = [&](const GemmBlocking& t, const char* name, double x0, double y0) {
    const int64_t lanes = t.vector_bits / 32, vectors = t.nr / lanes;
    const double cell = 9;
    cv.text(x0, y0 - 8, std::string(name) + ": " + std::to_string(t.mr) + " x " + std::to_string(t.nr) + " tile = " +
            std::to_string(t.mr * vectors) + " registers of " + std::to_string(lanes) + " floats",
            {12, "start", "#222222"});
    for (int64_t r = 0; r < t.mr; ++r)
      for (int64_t v = 0; v < vectors; ++v)
        cv.rect(x0 + v * (lanes * cell + 4), y0 + r * (cell + 3), lanes * cell, cell, "#fecaca", "#dc2626", 0.8);
  };
  // A dashed line from the tile in C to its enlargement.
  cv.line(cx + 2.5 * g.nr * s, cy + (sliver + 0.5) * g.mr * s, lx - 4, ly + 20, "#dc2626", 1, "4,3");
  tile(g, "avx2", lx, ly + 20);
  tile(wide, "avx512", lx, ly + 20 + g.mr * 12 + 40);
  cv.save(path);
}

// ================================================================================================
// masks.svg: what padding_mask and causal_mask return (1 = the position is hidden), and the two
// combined, as a decoder's self-attention over a padded batch uses them.
void masks(const std::string& path) {
  const std::vector<int64_t> lengths = {5, 3, 4};
  const Tensor pad = nn::padding_mask(lengths, 5);  // (B, S)
  const Tensor causal = nn::causal_mask(5);         // (T, T)
  std::vector<std::string> rows_b = {"sentence 0 (5)", "sentence 1 (3)", "sentence 2 (4)"}, keys = {"0", "1", "2", "3", "4"};
  // Sentence 1 in the decoder: query t may see key s only if s <= t and s < 3.
  std::vector<double> both;
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t k = 0; k < 5; ++k) both.push_back(std::max(causal.data()[t * 5 + k], pad.data()[1 * 5 + k]));
  viz::HeatmapGrid grid(3);
  grid.add(viz::Heatmap(rows_b, keys, pad).set_title("padding_mask({5, 3, 4}, 5)").set_value_range(0, 1).set_show_values(true));
  grid.add(viz::Heatmap(keys, keys, causal).set_title("causal_mask(5): query t, key s").set_value_range(0, 1).set_show_values(true));
  grid.add(viz::Heatmap(keys, keys, both).set_title("both, for sentence 1").set_value_range(0, 1).set_show_values(true));
  grid.set_title("Masks: 1 = hidden (weight exactly 0 after masked_softmax), 0 = visible").save(path);
}

// ================================================================================================
// positional-waves.svg and positional-dots.svg: sinusoidal_table(64, 64), a few of its columns
// along the positions, and PE PE^T: how alike two positions' encodings are.
void positional(const std::string& waves_path, const std::string& dots_path) {
  const int64_t P = 64, C = 64;
  const Tensor pe = nn::sinusoidal_table(P, C);  // (P, C)
  viz::LinePlot waves("Sinusoidal positional encoding: columns of sinusoidal_table(64, 64)", "position p",
                      "PE[p, i]");
  std::vector<double> x;
  for (int64_t p = 0; p < P; ++p) x.push_back(static_cast<double>(p));
  for (int64_t i : {4, 5, 10, 16, 30}) {
    std::vector<double> y;
    for (int64_t p = 0; p < P; ++p) y.push_back(pe.data()[p * C + i]);
    waves.add_series("i = " + std::to_string(i) + (i % 2 ? " (cos)" : " (sin)"), x, y);
  }
  waves.set_size(760, 380).save(waves_path);
  const int64_t Q = 32;
  std::vector<double> dots;
  std::vector<std::string> labels;
  for (int64_t p = 0; p < Q; ++p) labels.push_back(p % 4 == 0 ? std::to_string(p) : "");
  for (int64_t p = 0; p < Q; ++p)
    for (int64_t q = 0; q < Q; ++q) {
      double sum = 0;
      for (int64_t i = 0; i < C; ++i) sum += static_cast<double>(pe.data()[p * C + i]) * pe.data()[q * C + i];
      dots.push_back(sum);
    }
  viz::Heatmap(labels, labels, dots)
      .set_title("PE[p] . PE[q] for positions 0-31 (C = 64): the largest on the diagonal, = C/2 = 32")
      .set_cell_size(14)
      .save(dots_path);
}

// ================================================================================================
// module-tree.svg: named_children, recursively, of the Transformer the tool trains by default,
// made small (1 layer each side): each box a module with its parameters' shapes and its count.
void module_tree(const std::string& path) {
  nn::Transformer model(nn::TransformerOptions(40, 50).with_d_model(32).with_nhead(4).with_num_encoder_layers(1)
                            .with_num_decoder_layers(1).with_dim_feedforward(64));
  viz::Diagram diagram;
  struct Todo {
    std::string name;
    std::shared_ptr<nn::Module> module;
    int64_t parent;
  };
  // A child with neither parameters, buffers nor children of its own (a Dropout) gets no box:
  // its owner's box names it. So do the children of a module whose children are all leaves
  // (MultiHeadAttention's out_proj): a line each.
  auto drawn = [](const nn::Module& m) {
    return m.num_parameters() > 0 || !m.named_buffers().empty() || !m.named_children().empty();
  };
  auto leaves_only = [](const nn::Module& m) {
    for (const auto& [n, child] : m.named_children())
      if (!child->named_children().empty()) return false;
    return true;
  };
  auto describe = [&](const std::string& name, const nn::Module& m) {
    std::vector<std::string> lines = {name.empty() ? m.name() : name + ": " + m.name()};
    for (const auto& [p, v] : m.named_parameters())
      if (p.find('.') == std::string::npos) lines.push_back(p + " " + shape_text(v.shape()));
    for (const auto& [b, t] : m.named_buffers())
      if (b.find('.') == std::string::npos) lines.push_back(b + " " + shape_text(t.shape()) + ", a buffer");
    std::string plain;
    for (const auto& [n, child] : m.named_children()) {
      if (!drawn(*child)) plain += (plain.empty() ? "" : ", ") + n;
      else if (leaves_only(m) && !m.named_children().empty() && !name.empty())
        lines.push_back(n + ": " + child->name() + ", " + std::to_string(child->num_parameters()) + " parameters");
    }
    if (!plain.empty()) lines.push_back("also " + plain);
    lines.push_back(std::to_string(m.num_parameters()) + " parameters");
    return lines;
  };
  // The children a box gets: the drawn ones, unless they are listed inside it; a ModuleList of
  // one ("layers" holding "0") is skipped over, its child named "layers.0".
  auto children_of = [&](const std::string& name, const nn::Module& m) {
    std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>> out;
    if (!name.empty() && leaves_only(m)) return out;
    for (const auto& [n, child] : m.named_children()) {
      if (!drawn(*child)) continue;
      const auto grand = child->named_children();
      if (child->name() == "ModuleList" && grand.size() == 1) out.push_back({n + "." + grand[0].first, grand[0].second});
      else out.push_back({n, child});
    }
    return out;
  };
  std::vector<Todo> todo;
  const int64_t root = diagram.add_box(describe("", model));
  for (const auto& [n, child] : children_of("", model)) todo.push_back({n, child, root});
  for (size_t i = 0; i < todo.size(); ++i) {
    const Todo t = todo[i];
    viz::BoxStyle style;
    const auto children = children_of(t.name, *t.module);
    if (children.empty()) style.fill = "#dbeafe";
    const int64_t box = diagram.add_box(describe(t.name, *t.module), style);
    diagram.add_arrow(t.parent, box);
    for (const auto& [n, child] : children) todo.push_back({n, child, box});
  }
  diagram.set_title("Transformer(d_model 32, 4 heads, 1 + 1 layers, vocabularies 40 and 50): named_children()")
      .set_notes({"Each box: the child's name and class, the parameters (and buffers) it holds itself, its children without",
                  "parameters (\"also\") or with no children of their own (a line each), and the count of all parameters below it.",
                  "Blue: no boxes below. A parameter's full name joins the names on its path: encoder.layers.0.self_attn.in_proj_weight."})
      .save(path);
}

// ================================================================================================
// attention-cost.svg: multiply-adds of one decoder step's attention over a source of S positions
// with memory width M = hidden size H (dot scores): global scores and mixes all S rows, 2 S M;
// local-p only its window of 2D + 1, 2 (2D + 1) M, after predicting the window's centre
// p_t = S sigmoid(v_p . tanh(W_p h_t)), H^2 + H (local_p_centre, nn/attention/attention_seq2seq.cpp).
void attention_cost(const std::string& path) {
  const int64_t M = 256, D = nn::AttentionSeq2SeqOptions(1, 1).window;  // the library's default window
  std::vector<double> S, global, local;
  for (int64_t s = 8; s <= 2048; s *= 2) {
    S.push_back(static_cast<double>(s));
    global.push_back(2.0 * static_cast<double>(s * M));
    local.push_back(2.0 * static_cast<double>(std::min<int64_t>(2 * D + 1, s) * M) + static_cast<double>(M * M + M));
  }
  viz::LinePlot("One decoder step's attention, M = H = 256: global grows with S, local-p does not", "source length S",
                "multiply-adds per step")
      .add_series("global: 2 S M", S, global)
      .add_series("local-p, D = " + std::to_string(D) + ": 2 (2D + 1) M + H^2 + H", S, local)
      .set_log_y(true)
      .set_log_x(true)
      .set_size(820, 400)
      .save(path);
}

// ================================================================================================
// tensor-layout.svg: a (2, 3, 4) tensor as the reader pictures it (2 matrices of 3 x 4) and as
// it is stored (24 numbers in a row). The tensor holds arange(24), so each cell shows its own
// offset in storage, read back through at({b, t, c}).
void tensor_layout(const std::string& path) {
  const Tensor x = arange(24).reshape({2, 3, 4});  // (B, T, C)
  const double cell = 34, x0 = 30, y0 = 70;
  viz::SvgCanvas cv(880, 330);
  cv.rect(0, 0, cv.width(), cv.height(), "white");
  cv.text(20, 28, "x = arange(24).reshape({2, 3, 4}): shape (B, T, C) = (2, 3, 4), row-major", {15, "start", "#222222", true});
  for (int64_t b = 0; b < 2; ++b) {
    const double bx = x0 + static_cast<double>(b) * (4 * cell + 60);
    cv.text(bx + 2 * cell, y0 - 10, "b = " + std::to_string(b), {12, "middle", "#334155"});
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t c = 0; c < 4; ++c) {
        const double cx = bx + static_cast<double>(c) * cell, cy = y0 + static_cast<double>(t) * cell;
        cv.rect(cx, cy, cell, cell, b == 1 && t == 2 ? "#dbeafe" : "#f8fafc", "#334155", 1);
        cv.text(cx + cell / 2, cy + cell / 2, viz::format_fixed(x.at({b, t, c}), 0), {13, "middle", "#222222", false, 0, 0.35});
      }
    for (int64_t t = 0; t < 3; ++t)
      cv.text(bx - 6, y0 + (static_cast<double>(t) + 0.5) * cell, "t=" + std::to_string(t), {11, "end", "#475569", false, 0, 0.35});
  }
  cv.text(x0 + 2 * (4 * cell + 60) + 10, y0 + 20, "x.at({1, 2, 3}) = " + viz::format_fixed(x.at({1, 2, 3}), 0), {13, "start", "#222222"});
  cv.text(x0 + 2 * (4 * cell + 60) + 10, y0 + 42, "offset = b*12 + t*4 + c = 12 + 8 + 3", {13, "start", "#475569"});
  cv.text(x0 + 2 * (4 * cell + 60) + 10, y0 + 64, "strides (12, 4, 1): the last axis is contiguous", {13, "start", "#475569"});
  // The storage: x.data()[0 .. 23], the row b = 1, t = 2 shaded as above.
  const double sy = 230, sc = 33;
  cv.text(x0, sy - 12, "x.data(): one contiguous, 64-byte aligned buffer of 24 floats", {12, "start", "#334155"});
  for (int64_t i = 0; i < 24; ++i) {
    const double cx = x0 + static_cast<double>(i) * sc;
    cv.rect(cx, sy, sc, 30, i >= 20 ? "#dbeafe" : (i / 12) % 2 ? "#eef2ff" : "#f8fafc", "#334155", 1);
    cv.text(cx + sc / 2, sy + 15, viz::format_fixed(x.data()[i], 0), {12, "middle", "#222222", false, 0, 0.35});
  }
  for (int64_t b = 0; b < 2; ++b)
    cv.text(x0 + (static_cast<double>(b) * 12 + 6) * sc, sy + 50, "b = " + std::to_string(b) + ": 12 floats", {12, "middle", "#475569"});
  cv.save(path);
}

// ================================================================================================
// bpe-merges.svg: byte-pair encoding learned on Sennrich et al.'s four words (low 5, lower 2,
// newest 6, widest 3) by data::Bpe::learn, and each word as data::Bpe encodes it after each merge.
void bpe_merges(const std::string& path) {
  const std::unordered_map<std::string, int64_t> counts = {{"low", 5}, {"lower", 2}, {"newest", 6}, {"widest", 3}};
  const data::Bpe learned = data::Bpe::learn(counts, 12);
  const std::vector<std::string> words = {"low", "lower", "newest", "widest"};
  const int64_t steps = learned.size();
  const double row = 26, left = 150, col = 170, y0 = 70;
  viz::SvgCanvas cv(left + col * 4 + 20, y0 + row * static_cast<double>(steps + 1) + 50);
  cv.rect(0, 0, cv.width(), cv.height(), "white");
  cv.text(20, 28, "Byte-pair encoding: data::Bpe::learn on low x5, lower x2, newest x6, widest x3", {15, "start", "#222222", true});
  cv.text(20, y0 - 14, "merge", {12, "start", "#334155", true});
  for (size_t w = 0; w < words.size(); ++w)
    cv.text(left + col * static_cast<double>(w), y0 - 14, words[w] + " x" + std::to_string(counts.at(words[w])), {12, "start", "#334155", true});
  for (int64_t k = 0; k <= steps; ++k) {
    const std::vector<std::string> first(learned.merges().begin(), learned.merges().begin() + k);
    const data::Bpe bpe(first);
    const double y = y0 + row * static_cast<double>(k);
    if (k % 2 == 0) cv.rect(10, y - 4, cv.width() - 20, row, "#f8fafc");
    cv.text(20, y + 12, k == 0 ? "(characters)" : std::to_string(k) + ": " + learned.merges()[k - 1], {12, "start", "#2563eb"});
    for (size_t w = 0; w < words.size(); ++w) {  // each piece in a box of its own
      double px = left + col * static_cast<double>(w);
      for (const std::string& p : bpe.encode(words[w])) {
        const double pw = viz::text_width(p, 13) + 8;
        cv.round_rect(px, y - 1, pw, row - 6, 3, "#eef2ff", "#94a3b8", 0.8);
        cv.text(px + pw / 2, y + 10, p, {13, "middle", "#222222", false, 0, 0.1});
        px += pw + 3;
      }
    }
  }
  cv.text(20, cv.height() - 18, "Each row: the merges so far, applied in the order learned (▁ marks the start of a word).",
          {11, "start", "#475569"});
  cv.save(path);
}

int run(int argc, char** argv) {
  cli::Args args("book_figures", "build/examples/book_figures [--out DIR]",
            {{"out", "docs/figures", "the folder the figures are written to"}}, argc, argv);
  const std::string out = args.text("out");
  autograd_graph(out + "/autograd-graph.svg");
  gemm_blocking_figure(out + "/gemm-blocking.svg");
  masks(out + "/masks.svg");
  positional(out + "/positional-waves.svg", out + "/positional-dots.svg");
  module_tree(out + "/module-tree.svg");
  attention_cost(out + "/attention-cost.svg");
  tensor_layout(out + "/tensor-layout.svg");
  bpe_merges(out + "/bpe-merges.svg");
  std::cout << "wrote 9 figures to " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
