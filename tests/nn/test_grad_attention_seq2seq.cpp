// tests/nn/test_grad_attention_seq2seq.cpp - gradcheck through the Bahdanau and Luong decoders
// (global, local-p and local-m; the location score), with respect to every parameter. Compiled in float32 and float64.
#include "nn/attention/attention_seq2seq.h"
#include "tests/test_util.h"

using namespace seqgrad;

#ifdef SEQGRAD_DOUBLE
TEST_SUITE_BEGIN("attention seq2seq grad float64");
#else
TEST_SUITE_BEGIN("attention seq2seq grad float32");
#endif

TEST_CASE("grad through the attention decoders, every parameter") {
  const Tensor src = from_vector({5, 6, 7, 6, 5, 0}, {2, 3});
  const Tensor tgt_in = from_vector({1, 7, 1, 6}, {2, 2});
  struct Case {
    const char* name;
    nn::AttentionSeq2SeqOptions options;
  };
  const auto base = nn::AttentionSeq2SeqOptions(8, 8).with_hidden_size(3).with_embed_dim(2);
  for (const Case& c : {Case{"luong general", nn::AttentionSeq2SeqOptions(base).with_score("general")},
                        Case{"luong concat lstm", nn::AttentionSeq2SeqOptions(base).with_score("concat")
                                                      .with_cell("lstm")},
                        Case{"bahdanau additive", nn::AttentionSeq2SeqOptions(base)
                                                      .with_style(nn::AttentionStyle::Bahdanau)
                                                      .with_score("additive")
                                                      .with_bidirectional(true)},
                        Case{"luong local", nn::AttentionSeq2SeqOptions(base).with_score("dot").with_local(true, 1)},
                        Case{"luong local-m", nn::AttentionSeq2SeqOptions(base).with_local(true, 1, /*monotonic=*/true)},
                        Case{"luong location", nn::AttentionSeq2SeqOptions(base).with_score("location")
                                                   .with_max_source_len(4)}}) {
    CAPTURE(c.name);
    manual_seed(3);
    nn::AttentionSeq2Seq model(c.options);
    const GradcheckResult r =
        gradcheck_parameters([&] { return model.forward(src, {3, 2}, tgt_in).logits; }, model.parameters());
    CHECK_MESSAGE(r.ok, r.message);
  }
}

TEST_SUITE_END();
