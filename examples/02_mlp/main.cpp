// examples/02_mlp - a multi-layer perceptron learns to separate three interleaved spirals.
//
// New since 01: modules (nn::Linear, nn::ReLU in an nn::Sequential), a loss (cross-entropy),
// an optimizer (Adam) and a training loop with a progress bar; then two pictures: the loss
// curve and the regions the network assigns to each class. A straight line cannot separate
// spirals, so the hidden layers have to bend the space.
//   make && build/examples/02_mlp [--out DIR]   (the pictures' folder, default build/out)
#include <filesystem>
#include <iostream>

#include "data/toy2d.h"
#include "examples/common/args.h"
#include "nn/core/activation.h"
#include "nn/core/linear.h"
#include "nn/core/loss.h"
#include "nn/optim/optim.h"
#include "seqgrad.h"
#include "viz/plot.h"
#include "viz/progress.h"

using namespace seqgrad;

int run(int argc, char** argv) {
  // ---------------------------------------------------------------------------------------------
  // Config
  const cli::Args args("02_mlp", "02_mlp [--out DIR]", {{"out", "build/out", "folder for the two SVG pictures"}}, argc, argv);
  const std::string out_dir = args.text("out");
  std::error_code ec;
  check(!out_dir.empty(), "02_mlp: --out expects a folder name, got ''");
  check(!std::filesystem::exists(out_dir, ec) || std::filesystem::is_directory(out_dir, ec), "02_mlp: --out '", out_dir,
        "' expects a folder, got a file");
  const int64_t classes = 3, points_per_class = 200, hidden = 64, steps = 1500;
  const real lr = real(0.01);
  manual_seed(0);

  // ---------------------------------------------------------------------------------------------
  // Data: (N, 2) points and their class ids (N), N = 600
  const data::Points2D train = data::make_spirals(points_per_class, classes, real(0.04), /*seed=*/1);
  const data::Points2D test = data::make_spirals(points_per_class, classes, real(0.04), /*seed=*/2);

  // ---------------------------------------------------------------------------------------------
  // Model: 2 -> 64 -> 64 -> 3
  nn::Sequential model({std::make_shared<nn::Linear>(2, hidden), std::make_shared<nn::ReLU>(),
                        std::make_shared<nn::Linear>(hidden, hidden), std::make_shared<nn::ReLU>(),
                        std::make_shared<nn::Linear>(hidden, classes)});
  std::cout << model << "\n" << model.num_parameters() << " parameters\n\n";

  // ---------------------------------------------------------------------------------------------
  // Training: full-batch Adam on the cross-entropy of the logits (N, 3) against the labels (N)
  // [docs:train_loop]
  nn::Adam opt(model.parameters(), nn::AdamOptions(lr));
  std::vector<double> losses;
  viz::ProgressBar bar(steps, "train");
  for (int64_t step = 1; step <= steps; ++step) {
    Variable loss = nn::cross_entropy(model.forward(Variable(train.x)), train.labels);
    opt.zero_grad();
    loss.backward();
    opt.step();
    losses.push_back(loss.item());
    bar.update(step, {{"loss", loss.item()}});
  }
  bar.finish();
  // [docs:end]

  // ---------------------------------------------------------------------------------------------
  // Evaluation
  auto accuracy = [&](const data::Points2D& d) {
    NoGradGuard no_grad;
    return mean(eq(argmax(model.forward(Variable(d.x)).value(), -1), d.labels)).item();
  };
  std::cout << "train accuracy " << accuracy(train) << ", test accuracy " << accuracy(test) << "\n";

  std::filesystem::create_directories(out_dir);
  viz::LinePlot("Cross-entropy while training", "step", "loss").add_series("train", losses).set_log_y(true).save(
      out_dir + "/mlp_loss.svg");
  viz::DecisionMap map(-1.6, 1.6, -1.6, 1.6);
  {
    NoGradGuard no_grad;
    map.set_predictions(argmax(model.forward(Variable(map.grid())).value(), -1));
  }
  map.add_points(test.x, test.labels).set_title("Decision regions (test points on top)").save(out_dir + "/mlp_regions.svg");
  std::cout << "wrote " << out_dir << "/mlp_loss.svg and " << out_dir << "/mlp_regions.svg\n";
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // a bad flag, or a folder that cannot be made
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
