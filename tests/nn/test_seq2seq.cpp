// tests/nn/test_seq2seq.cpp - the encoder-decoder: shapes, the three contexts, greedy decoding,
// and "it learns" a short copy task with each cell type.
#include "data/batch.h"
#include "data/tasks.h"
#include "nn/decoding/decoding.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "nn/recurrent/seq2seq.h"
#include "tests/test_util.h"

using namespace seqgrad;

TEST_CASE("Seq2Seq shapes for each context kind, stacked and bidirectional") {
  manual_seed(1);
  const data::Batch b = data::make_batch({{5, 6, 7}, {8, 9}}, {{5, 6}, {7, 8, 9, 5}});
  for (nn::ContextKind kind : {nn::ContextKind::Last, nn::ContextKind::Mean, nn::ContextKind::Max}) {
    nn::Seq2Seq model(nn::Seq2SeqOptions(12, 12).with_num_layers(2).with_bidirectional(true).with_context(kind)
                          .with_cell("lstm").with_hidden_size(8).with_embed_dim(4));
    nn::EncoderOutput enc = model.encoder->forward(b.src, b.src_lengths);
    CHECK(enc.outputs.shape() == Shape{2, 3, 16});
    CHECK(enc.context.shape() == Shape{2, 16});
    CHECK(model.forward(b.src, b.src_lengths, b.tgt_in).shape() == Shape{2, 5, 12});
    const auto out = nn::greedy_decode(model, b.src, b.src_lengths, nn::DecodeOptions().with_max_len(6)).tokens;
    CHECK(out.size() == 2);
    CHECK(out[0].size() <= 6);
  }
}

TEST_CASE("the Last context of a bidirectional encoder is [forward final; backward final]") {
  manual_seed(2);
  nn::Seq2Seq model(nn::Seq2SeqOptions(10, 10).with_bidirectional(true).with_hidden_size(3));
  const Tensor src = from_vector({5, 6, 7, 8}, {1, 4});
  nn::EncoderOutput enc = model.encoder->forward(src, {4});
  const Tensor out = enc.outputs.value();  // (1, 4, 6)
  // forward final = output at the last step, first half; backward final = output at step 0, second half
  CHECK(enc.context.value().at({0, 0}) == out.at({0, 3, 0}));
  CHECK(enc.context.value().at({0, 5}) == out.at({0, 0, 5}));
}

TEST_CASE("it learns: seq2seq copies short sequences with each cell type") {
  const std::vector<data::Pair> pairs =
      data::make_pairs(data::Task::Copy, data::TaskOptions().with_n(2000).with_lengths(2, 4).with_symbols(4).with_seed(5));
  data::Vocab vocab;
  for (char c = 'a'; c < 'a' + 4; ++c) vocab.add(std::string(1, c));
  const data::EncodedPairs enc =
      data::encode_pairs(pairs, vocab, data::Tokenization::Space, vocab, data::Tokenization::Space);
  for (const std::string cell : {"rnn", "gru", "lstm"}) {
    CAPTURE(cell);
    manual_seed(6);
    nn::Seq2Seq model(nn::Seq2SeqOptions(vocab.size(), vocab.size()).with_cell(cell).with_hidden_size(48).with_embed_dim(16));
    nn::Adam opt(model.parameters(), nn::AdamOptions(real(0.01)));
    std::vector<int64_t> lengths;
    for (const auto& s : enc.src) lengths.push_back(static_cast<int64_t>(s.size()));
    for (int epoch = 0; epoch < 3; ++epoch)
      for (const auto& idx : data::make_batches(lengths, 32, epoch)) {
        const data::Batch b = enc.batch(idx);
        opt.zero_grad();
        nn::cross_entropy(model.forward(b.src, b.src_lengths, b.tgt_in), b.tgt_out,
                          nn::CrossEntropyOptions().with_ignore_index(data::Vocab::kPad))
            .backward();
        nn::clip_grad_norm(model.parameters(), 1);
        opt.step();
      }
    std::vector<size_t> first(200);
    for (size_t i = 0; i < first.size(); ++i) first[i] = i;
    const data::Batch test = enc.batch(first);
    const auto out = nn::greedy_decode(model, test.src, test.src_lengths, nn::DecodeOptions().with_max_len(8)).tokens;
    int correct = 0;
    for (size_t i = 0; i < first.size(); ++i) correct += out[i] == enc.tgt[i];
    INFO("exact match " << correct << " / 200");
    CHECK(correct >= 180);
  }
}
