// tests/examples/test_cli_pictures.cpp - what the seqgrad tool draws: train's two-panel curves,
// `seqgrad attention`'s heatmap of one layer and head (or their mean), the grid of every layer
// and head, the beam search's tree, the explorer page (its contents; tests/examples/
// explorer_browser.sh opens it in a browser), and the pinned errors of those flags.
#include <cstdio>
#include <string>

#include "examples/seqgrad/pictures.h"
#include "tests/examples/cli_helpers.h"
#include "tests/test_util.h"
#include "tests/viz/svg_check.h"

using namespace seqgrad;
using namespace seqgrad::testing;

namespace {

size_t count_of_text(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

// The text of every <text> element, joined by spaces (a wrapped title reads whole again).
std::string text_of(const std::string& svg) {
  std::string text;
  for (size_t at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) {
    const size_t start = svg.find('>', at) + 1;
    text += svg.substr(start, svg.find("</text>", start) - start) + " ";
  }
  return text;
}

}  // namespace

TEST_CASE("seqgrad train and attention draw: curves in two panels, one head, every head, the beam tree, the explorer") {
  // A Transformer of 2 layers of 2 heads that copies: a second of training.
  const std::string model = "build/test_pics.safetensors";
  const Result trained = train({"--task", "copy", "--n", "600", "--min-len", "2", "--max-len", "4", "--arch",
                                "transformer", "--layers", "2", "--heads", "2", "--dim", "16", "--ffn", "32", "--epochs",
                                "3", "--seed", "3", "--out", model});
  INFO(trained.err);
  REQUIRE(trained.code == 0);

  // The curves: losses on a log axis above, the exact match on [0, 1] below, one file.
  const std::string curves = read_file("build/test_pics.training.svg");
  CHECK(svg_problem(curves) == "");
  CHECK(count_of_text(curves, ">Training: loss per epoch</text>") == 1);
  CHECK(count_of_text(curves, ">Validation: exact match per epoch</text>") == 1);
  CHECK(count_of_text(curves, "<svg x=\"0\" y=\"") == 2);  // two panels, one under the other

  // One head of one layer; the default is the mean of the last layer's heads.
  const std::vector<std::string> sentence = {"a", "b", "c"};
  auto attention = [&](std::vector<std::string> flags) {
    std::vector<std::string> words = {"attention", "--model", model};
    words.insert(words.end(), flags.begin(), flags.end());
    words.insert(words.end(), sentence.begin(), sentence.end());
    return run(words);
  };
  REQUIRE(attention({"--svg", "build/test_pics_mean.svg"}).code == 0);
  CHECK(text_of(read_file("build/test_pics_mean.svg")).find("(layer 1, mean of the heads)") != std::string::npos);
  const Result one = attention({"--svg", "build/test_pics_head.svg", "--layer", "0", "--head", "1"});
  REQUIRE(one.code == 0);
  const std::string head = read_file("build/test_pics_head.svg");
  CHECK(svg_problem(head) == "");
  CHECK(text_of(head).find("(layer 0, head 1)") != std::string::npos);
  CHECK(head != read_file("build/test_pics_mean.svg"));
  // Every layer and head: 2 x 2 maps, each with its title.
  REQUIRE(attention({"--svg", "build/test_pics_grid.svg", "--grid"}).code == 0);
  const std::string grid = read_file("build/test_pics_grid.svg");
  CHECK(svg_problem(grid) == "");
  for (const char* title : {">layer 0, head 0</text>", ">layer 0, head 1</text>", ">layer 1, head 0</text>", ">layer 1, head 1</text>"})
    CHECK_MESSAGE(count_of_text(grid, title) == 1, title);
  // The beam search's tree and the explorer, from one run of beam search.
  const Result both = attention({"--beam", "3", "--tree", "build/test_pics_tree.svg", "--html", "build/test_pics.html"});
  INFO(both.err);
  REQUIRE(both.code == 0);
  const std::string tree = read_file("build/test_pics_tree.svg");
  CHECK(svg_problem(tree) == "");
  CHECK(count_of_text(tree, ">&lt;bos&gt;</text>") == 1);
  CHECK(count_of_text(tree, ">&lt;eos&gt;</text>") >= 1);
  CHECK(tree.find(">score -") != std::string::npos);
  const std::string page = read_file("build/test_pics.html");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("source: [\"a\",\"b\",\"c\"]") != std::string::npos);
  CHECK(page.find("alternatives: [{\"text\":") != std::string::npos);
  // Self-contained: nothing fetched from anywhere.
  CHECK(page.find("http") == std::string::npos);
  CHECK(page.find(" src=") == std::string::npos);

  // The same view, drawn directly: the tree needs beam search.
  const std::unique_ptr<cli::Translator> t = cli::Translator::load(model);
  const cli::AttentionView greedy = t->attention("a b c");
  CHECK(greedy.layers.size() == 2);
  CHECK(greedy.layers[0].size(0) == 2);                                          // NH
  CHECK(greedy.layers[0].size(1) == static_cast<int64_t>(greedy.output.size()));  // T_out
  CHECK(greedy.layers[0].size(2) == 3);                                          // S
  CHECK(greedy.search.empty());
  CHECK_THROWS_WITH_AS(cli::beam_tree(greedy, t->tgt_vocab),
                       "seqgrad attention: the beam tree needs beam search; expected --beam 2 or more, got 1",
                       std::invalid_argument);

  // The errors, one line each.
  auto error_of = [&](std::vector<std::string> flags) {
    const Result r = attention(flags);
    CHECK(r.code == 2);
    return r.err;
  };
  CHECK(error_of({"--svg", "build/test_pics_x.svg", "--layer", "2"}) ==
        "error: seqgrad attention: --layer: expected 0 to 1 (the model has 2 decoder layers), got 2\n");
  CHECK(error_of({"--svg", "build/test_pics_x.svg", "--head", "2"}) ==
        "error: seqgrad attention: --head: expected 0 to 1 or mean (the model has 2 heads), got 2\n");
  CHECK(error_of({"--svg", "build/test_pics_x.svg", "--head", "first"}) ==
        "error: seqgrad attention: --head expects a whole number from 0 to 1000000, got 'first'\n");
  CHECK(error_of({"--svg", "build/test_pics_x.svg", "--grid", "--head", "0"}) ==
        "error: seqgrad attention: --grid draws every layer and head; expected no --layer or --head with it\n");
  CHECK(error_of({"--html", "build/test_pics_x.html", "--layer", "0"}) ==
        "error: seqgrad attention: --layer, --head and --grid choose what --svg draws; expected --svg OUT.svg with them\n");
  CHECK(error_of({"--tree", "build/test_pics_x.svg"}) ==
        "error: seqgrad attention: --tree draws the beam search; expected --beam 2 or more, got 1\n");
  CHECK(error_of({"--beam", "2"}) ==
        "error: seqgrad attention: --model MODEL and at least one of --svg OUT.svg, --html OUT.html, --tree OUT.svg "
        "are required\n");
  CHECK(error_of({"--svg", "build/test_pics_same.svg", "--tree", "build/test_pics_same.svg", "--beam", "2"})
            .find("is the same file as --svg") != std::string::npos);
  for (const char* f : {"build/test_pics.safetensors", "build/test_pics.training.svg", "build/test_pics_mean.svg",
                        "build/test_pics_head.svg", "build/test_pics_grid.svg", "build/test_pics_tree.svg",
                        "build/test_pics.html"})
    std::remove(f);
}
