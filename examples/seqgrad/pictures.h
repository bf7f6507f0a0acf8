// examples/seqgrad/pictures.h - what `seqgrad attention` draws of one translation: a heatmap of
// one layer and head (or their mean), a grid of every layer and head, the beam search's tree,
// and the attention explorer, one self-contained HTML page.
//
// Each takes an AttentionView (translator.h: the tokens, every decoder layer's (NH, T, S)
// weights and the search) and draws it with viz/; none runs the model. The explorer's page is
// plain HTML, CSS and a short script, with the numbers inlined: no network, no library.
// Read next: docs/figures/make_figures.sh, which draws the book's figures with them.
#pragma once

#include <string>

#include "examples/seqgrad/translator.h"
#include "viz/diagram.h"
#include "viz/heatmap.h"

namespace seqgrad::cli {

// The (T_out, S) map of decoder layer `layer`, head `head` (-1: the mean over heads), titled
// with the sentence and its translation. Throws std::invalid_argument for a layer or head the
// model does not have, naming how many it has.
viz::Heatmap attention_map(const AttentionView& v, int64_t layer, int64_t head);

// Every layer (a row) and head (a column), on one colour scale [0, 1].
viz::HeatmapGrid attention_grid(const AttentionView& v);

// The beam search as a tree: each box a prefix the search kept (its last token, log P), joined
// to the prefix it extends; finished hypotheses with their length-normalised score, the chosen
// one highlighted. Throws std::invalid_argument when the view holds no search (beam 1).
viz::Diagram beam_tree(const AttentionView& v, const data::Vocab& tgt_vocab);

// The explorer: pick a layer and a head (or their mean), point at an output token to see what
// it looked at, and, with beam search, the finished alternatives with their scores. The page
// reads its first state from the address's #fragment ("#layer=1&head=2&focus=3"; head=mean),
// so that a test can open it in a given state.
std::string explorer_html(const AttentionView& v, const data::Vocab& tgt_vocab);

}  // namespace seqgrad::cli
