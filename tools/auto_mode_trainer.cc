// Trains the auto mode's multilingual classifier (text/mode/auto_features.h) and writes its
// weights as a C++ header, at build time:
//   duet_auto_mode_trainer CORPUS_DIR OUT.inc
//   duet_auto_mode_trainer --cross-validate CORPUS_DIR    (how the settings below were chosen)
// CORPUS_DIR holds one JSON-lines file per language ({"text", "think", "lang", "kind"}). In each
// file every fourth line (the 4th, 8th, ...) is held out: never trained on, and what
// tests/unit/auto_mode_test.cc measures the classifier on.
//
// Logistic regression with L2 regularisation, by AdaGrad over the training prompts in a fixed
// seeded order: the same corpus gives the same weights on the same compiler and CPU.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "text/mode/auto_features.h"

namespace {

struct Sample {
  std::vector<duet::AutoFeature> x;
  float y;
};

constexpr int kEpochs = 40;
constexpr double kLearningRate = 0.2;
constexpr double kL2 = 1e-5;
constexpr uint32_t kSeed = 20261203;

std::vector<double> train_weights(const std::vector<Sample>& train) {
  std::vector<double> w(duet::kAutoFeatureBuckets, 0.0), g2(duet::kAutoFeatureBuckets, 1e-8);
  std::vector<size_t> order(train.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 rng(kSeed);
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    // Fisher–Yates with the generator's raw output: the same order on every standard library.
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    for (const size_t k : order) {
      const Sample& s = train[k];
      double z = 0;
      for (const auto& f : s.x) z += w[f.index] * f.value;
      const double p = 1.0 / (1.0 + std::exp(-z));
      const double err = p - s.y;
      for (const auto& f : s.x) {
        const double grad = err * f.value + kL2 * w[f.index];
        g2[f.index] += grad * grad;
        w[f.index] -= kLearningRate * grad / std::sqrt(g2[f.index]);
      }
    }
  }
  return w;
}

bool predicts_think(const std::vector<double>& w, const Sample& s) {
  double z = 0;
  for (const auto& f : s.x) z += w[f.index] * f.value;
  return z > 0;
}

// Five-fold cross-validation on the training prompts only (the held-out ones stay unseen): how
// settings are chosen without looking at what the tests measure.
int cross_validate(const std::vector<Sample>& train, const std::vector<std::string>& langs) {
  std::map<std::string, std::pair<int, int>> by_lang;
  int right = 0;
  for (size_t fold = 0; fold < 5; ++fold) {
    std::vector<Sample> part;
    for (size_t i = 0; i < train.size(); ++i)
      if (i % 5 != fold) part.push_back(train[i]);
    const std::vector<double> w = train_weights(part);
    for (size_t i = fold; i < train.size(); i += 5) {
      const bool ok = predicts_think(w, train[i]) == (train[i].y > 0.5f);
      right += ok;
      by_lang[langs[i]].first += ok;
      by_lang[langs[i]].second += 1;
    }
  }
  std::printf("cross-validated accuracy %.4f (%d/%zu):", static_cast<double>(right) / train.size(),
              right, train.size());
  for (const auto& [lang, c] : by_lang)
    std::printf(" %s %.2f", lang.c_str(), static_cast<double>(c.first) / c.second);
  std::printf("\n");
  return 0;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "auto_mode_trainer: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool cv = argc == 3 && std::string(argv[1]) == "--cross-validate";
  if (argc != 3)
    return fail("usage: duet_auto_mode_trainer CORPUS_DIR OUT.inc | --cross-validate CORPUS_DIR");
  const std::filesystem::path dir = argv[cv ? 2 : 1];
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  if (ec || files.empty()) return fail("no .jsonl files in " + dir.string());
  std::sort(files.begin(), files.end());

  std::vector<Sample> train;
  std::vector<std::string> langs;
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string line;
    for (size_t i = 0; std::getline(in, line); ++i) {
      const auto row = nlohmann::json::parse(line, nullptr, false);
      if (!row.is_object() || !row.contains("text") || !row.contains("think") ||
          !row["text"].is_string() || !row["think"].is_boolean())
        return fail(path.string() + ":" + std::to_string(i + 1) + ": not a corpus row");
      if (duet::auto_corpus_held_out(i)) continue;
      train.push_back({duet::extract_auto_features(row["text"].get<std::string>()),
                       row["think"].get<bool>() ? 1.0f : 0.0f});
      langs.push_back(path.stem().string());
    }
  }
  if (cv) return cross_validate(train, langs);

  const std::vector<double> w = train_weights(train);
  size_t right = 0;
  for (const Sample& s : train) right += predicts_think(w, s) == (s.y > 0.5f);

  // Written whole to a temporary file and renamed, so that a failed build never leaves half
  // a header behind.
  const std::string out_path = argv[2];
  const std::string tmp = out_path + ".tmp";
  std::FILE* out = std::fopen(tmp.c_str(), "w");
  if (out == nullptr) return fail("cannot write " + tmp);
  std::fprintf(out,
               "// Generated at build time by tools/auto_mode_trainer.cc from src/text/mode/"
               "auto_corpus\n// (%zu training prompts, %zu languages; training accuracy %.4f). "
               "Do not edit.\n#pragma once\n#include <cstdint>\n"
               "inline constexpr float kAutoModeWeights[%u] = {\n",
               train.size(), files.size(), static_cast<double>(right) / train.size(),
               duet::kAutoFeatureBuckets);
  for (uint32_t i = 0; i < duet::kAutoFeatureBuckets; ++i)
    std::fprintf(out, "%a,%s", static_cast<float>(w[i]) == 0 ? 0.0 : static_cast<float>(w[i]),
                 i % 8 == 7 ? "\n" : "");
  std::fprintf(out, "};\n");
  if (std::fclose(out) != 0) return fail("cannot write " + tmp);
  std::filesystem::rename(tmp, out_path, ec);
  if (ec) return fail("cannot write " + out_path + ": " + ec.message());
  std::printf("auto_mode_trainer: %zu prompts from %zu languages, training accuracy %.4f\n",
              train.size(), files.size(), static_cast<double>(right) / train.size());
  return 0;
}
