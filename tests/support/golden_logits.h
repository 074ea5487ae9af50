// Holds computed logits to a case of ../shared/golden/logits_cases.json or formats_cases.json
// with the golden README's rule (never relaxed): rel L2 <= max(2 * llamacpp_rel_l2, 1e-4),
// and the reference's argmax at >= 95% of positions (100% for the F16 files; for a
// formats_cases.json file, the smaller of 95% and llama.cpp's own agreement on it).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "support/test_util.h"

namespace duet::test {

// ‖got − want‖ / ‖want‖, accumulated in double.
inline double relative_l2(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double d = double(got[i]) - want[i];
    err += d * d;
    norm += double(want[i]) * want[i];
  }
  return std::sqrt(err / norm);
}

inline void expect_matches_golden_logits(const nlohmann::json& c, const std::vector<float>& logits,
                                         const std::string& label) {
  const int64_t n_vocab = c["n_vocab"];
  const size_t n_pos = c["tokens"].size();
  const auto raw = read_bytes(golden_dir() + "/" + c["reference"].get<std::string>());
  ASSERT_EQ(raw.size(), n_pos * static_cast<size_t>(n_vocab) * 4);
  std::vector<float> ref(raw.size() / 4);
  std::memcpy(ref.data(), raw.data(), raw.size());
  ASSERT_EQ(logits.size(), ref.size());

  double err = 0, norm = 0;
  int agree = 0;
  for (size_t p = 0; p < n_pos; ++p) {
    size_t best_ref = 0, best_got = 0;
    for (int64_t v = 0; v < n_vocab; ++v) {
      const size_t i = p * n_vocab + v;
      err += (double(logits[i]) - ref[i]) * (double(logits[i]) - ref[i]);
      norm += double(ref[i]) * ref[i];
      if (ref[i] > ref[p * n_vocab + best_ref]) best_ref = v;
      if (logits[i] > logits[p * n_vocab + best_got]) best_got = v;
    }
    agree += best_ref == best_got;
  }
  const double rel_l2 = std::sqrt(err / norm);
  const double tol = std::max(2.0 * c["llamacpp_rel_l2"].get<double>(), 1e-4);
  const double agreement = double(agree) / n_pos;
  const bool is_f16 = c["model"].get<std::string>().find("f16") != std::string::npos;
  const double agreement_floor =
      c.contains("argmax_floor") ? c["argmax_floor"].get<double>() : (is_f16 ? 1.0 : 0.95);
  ::testing::Test::RecordProperty("rel_l2", std::to_string(rel_l2));
  std::printf("[ %s ] %s: rel_l2 %.3g (tolerance %.3g), argmax %.1f%%\n", label.c_str(),
              c["name"].get<std::string>().c_str(), rel_l2, tol, 100 * agreement);
  EXPECT_LE(rel_l2, tol) << "relative L2 error";
  EXPECT_GE(agreement, agreement_floor) << "argmax agreement";
}

// One case of logits_cases.json or formats_cases.json, as a test parameter.
struct GoldenLogitsCase {
  std::string name;
  nlohmann::json json;
};

inline std::vector<GoldenLogitsCase> golden_logits_cases() {
  std::vector<GoldenLogitsCase> out;
  for (const auto& c : read_json(golden_dir() + "/logits_cases.json"))
    out.push_back({c["name"], c});
  for (auto c : read_json(golden_dir() + "/formats_cases.json")) {
    c["argmax_floor"] = std::min(0.95, c["llamacpp_top1_agree"].get<double>());
    out.push_back({c["name"], c});
  }
  return out;
}

// A case's name as gtest accepts it ("kq-q8_0-64" -> "kq_q8_0_64").
inline std::string golden_case_test_name(std::string name) {
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

}  // namespace duet::test
