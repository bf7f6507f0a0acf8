// nn/transformer/language_model.cpp - the decoder-only Transformer: blocks under the causal mask,
// training on the target alone, generating from a prompt; and its model kind, "lm".
#include "nn/transformer/language_model.h"

#include <cmath>

#include "io/special_tokens.h"
#include "nn/core/init.h"
#include "nn/decoding/model_kind.h"
#include "tensor/check.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"

namespace seqgrad::nn {

TransformerLM::TransformerLM(const TransformerLMOptions& o) : options(o) {
  check(o.vocab > 4, "TransformerLM: expected a vocabulary larger than the 4 special tokens, got ", o.vocab);
  check(o.max_len > 0, "TransformerLM: expected a positive max_len, got ", o.max_len);
  const int64_t C = o.d_model;
  const TransformerLayerOptions layer = TransformerLayerOptions(C, o.nhead)
                                            .with_dim_feedforward(o.dim_feedforward)
                                            .with_dropout(o.dropout)
                                            .with_norm_first(o.norm_first);
  // Initialised as the encoder-decoder's (transformer.cpp): the table at N(0, 1/C), <pad> 0;
  // every matrix of the blocks xavier_uniform_.
  tgt_embed = register_module("tgt_embed", std::make_shared<Embedding>(o.vocab, C, /*padding_idx=*/kPadId));
  init::normal_(tgt_embed->weight.value(), 0, 1 / std::sqrt(static_cast<real>(C)));
  std::fill(tgt_embed->weight.value().data(), tgt_embed->weight.value().data() + C, real(0));
  pos_encoding = register_module(
      "pos_encoding", make_positional_encoding(o.positional, PositionalOptions(C, o.max_len, o.nhead, o.positional_settings)));
  decoder = register_module("decoder", std::make_shared<TransformerEncoder>(layer, o.num_layers));
  // The encoding reaches inside every block's self-attention, which is causal here.
  for (const auto& l : *decoder->layers) l->self_attn->attach(pos_encoding, /*causal=*/true);
  generator = register_module("generator", std::make_shared<Linear>(C, o.vocab));
  if (o.tie_embeddings) generator->tie_weight(tgt_embed->weight);
  for (auto& [n, p] : decoder->named_parameters())
    if (p.dim() > 1) init::xavier_uniform_(p.value());
}

// [docs:lm_states]
// x = embed(tokens) sqrt(C) + PE, dropped out; then every block with the causal mask:
// position t attends to positions 0..t. Right padding needs no mask of its own: no real
// position sees a later one.
Variable TransformerLM::states(const Tensor& tokens) {
  check(tokens.dim() == 2, name(), ": expected token ids of shape (B, T), got ", tokens.shape());
  const int64_t T = tokens.size(1);
  check(T <= options.max_len, name(), ": ", T, " positions, more than max_len ", options.max_len);
  Variable x = tgt_embed->forward(tokens) * std::sqrt(static_cast<real>(options.d_model));  // (B, T, C)
  x = dropout(pos_encoding->forward(x, 0), options.dropout, is_training());
  return decoder->forward(x, causal_mask(T));  // (B, T, C)
}
// [docs:end]

Variable TransformerLM::forward(const Tensor& tokens) { return generator->forward(states(tokens)); }  // (B, T, V)

Variable TransformerLM::logits(const Tensor&, const std::vector<int64_t>&, const Tensor& tgt_in,
                               const std::vector<int64_t>&) {
  return forward(tgt_in);
}

Variable TransformerLM::training_loss(const Tensor&, const std::vector<int64_t>&, const Tensor& tgt_in,
                                      const std::vector<int64_t>&, const Tensor& tgt_out,
                                      const CrossEntropyOptions& options) {
  return projected_cross_entropy(states(tgt_in), *generator, tgt_out, options);  // only where targets count
}

// ================================================================================================
// Generating: each row is <bos>, its prompt, and the tokens chosen so far

namespace {

struct LMState : DecoderState {
  std::vector<std::vector<int64_t>> rows;  // per row: <bos> prompt y_1 .. y_t
  bool started = false;                    // the first step's token is the <bos> already in rows

  void reorder_rows(const Tensor& index) override {
    std::vector<std::vector<int64_t>> kept;
    for (int64_t i = 0; i < index.numel(); ++i) kept.push_back(rows[static_cast<size_t>(index.data()[i])]);
    rows = std::move(kept);
  }
};

}  // namespace

std::unique_ptr<DecoderState> TransformerLM::start(const Tensor& src, const std::vector<int64_t>& src_lengths,
                                                   const StartOptions&) {
  check(src.dim() == 2, name(), ": expected prompts of shape (N, P), got ", src.shape());
  const int64_t N = src.size(0), P = src.size(1);
  auto state = std::make_unique<LMState>();
  for (int64_t n = 0; n < N; ++n) {
    const int64_t length = src_lengths.empty() ? P : src_lengths[static_cast<size_t>(n)];
    std::vector<int64_t> row{kBosId};
    for (int64_t p = 0; p < length; ++p) {
      const auto id = static_cast<int64_t>(src.data()[n * P + p]);
      check(id >= 0 && id < options.vocab, name(), ": prompt token id ", id, " is out of range for vocab ", options.vocab);
      if (id != kPadId) row.push_back(id);
    }
    state->rows.push_back(std::move(row));
  }
  return state;
}

// [docs:lm_step]
// tokens (N) -> log P(next | <bos> prompt y_1 .. y_t) (N, V): the rows, right-padded to the
// longest, through the stack; each row's last real position through the generator.
Tensor TransformerLM::step(DecoderState& base, const Tensor& tokens) {
  auto& state = static_cast<LMState&>(base);
  const int64_t N = static_cast<int64_t>(state.rows.size());
  check(tokens.numel() == N, name(), ": expected ", N, " tokens, got ", tokens.numel());
  if (state.started)
    for (int64_t n = 0; n < N; ++n) state.rows[n].push_back(static_cast<int64_t>(tokens.data()[n]));
  state.started = true;
  int64_t L = 0;
  for (const auto& row : state.rows) L = std::max<int64_t>(L, static_cast<int64_t>(row.size()));
  check(L <= options.max_len, name(), ": the prompt and the output reach ", L, " positions, more than max_len ",
        options.max_len);
  Tensor ids = zeros({N, L});  // <pad> = 0 after each row
  Tensor last = Tensor::empty({N});    // row n's last position, in the (N L) rows of the states
  for (int64_t n = 0; n < N; ++n) {
    const auto& row = state.rows[n];
    for (size_t t = 0; t < row.size(); ++t) ids.data()[n * L + static_cast<int64_t>(t)] = static_cast<real>(row[t]);
    last.data()[n] = static_cast<real>(n * L + static_cast<int64_t>(row.size()) - 1);
  }
  const Variable h = states(ids);                                                          // (N, L, C)
  const Variable newest = index_select(reshape(h, {N * L, options.d_model}), 0, last);        // (N, C)
  return log_softmax(generator->forward(newest).value(), -1);                              // (N, V)
}
// [docs:end]

// ================================================================================================
// The model kind "lm" (nn/decoding/model_kind.h): the Transformer's options, one stack

namespace {

std::shared_ptr<EncoderDecoder> build_lm(const Settings& s, const ModelContext& c) {
  return std::make_shared<TransformerLM>(
      TransformerLMOptions(c.tgt_vocab).with_d_model(s.integer("dim")).with_nhead(s.integer("heads"))
          .with_num_layers(s.integer("layers")).with_dim_feedforward(s.integer("ffn"))
          .with_dropout(static_cast<real>(s.number("dropout"))).with_positional(s.text("positional"))
          .with_positional_settings(s).with_norm_first(s.on("pre_norm")).with_tie_embeddings(s.on("tie_embeddings"))
          .with_max_len(2 * c.max_len + 2));  // <bos>, a prompt and an output of max_len each, <eos>
}

}  // namespace

SEQGRAD_REGISTER_MODEL(ModelKind{"lm", "a decoder-only Transformer language model of the target side (sources ignored)",
                                 transformer_kind_options, transformer_kind_check,
                                 build_lm})

}  // namespace seqgrad::nn
