// What auto mode's decision costs per request (Google Benchmark): the rules, and for text the
// rules do not read, the classifier's features and score, on ~2,000-character prompts in six
// scripts and on a 20,000-character pasted document (only its ends are read).
//
//   build/duet_bench_auto_mode        # µs per classify_for_thinking()
#include <benchmark/benchmark.h>

#include <string>

#include "text/mode/auto_mode.h"

namespace {

// Repeats `sentence` until the text holds about `chars` bytes.
std::string prompt_of(const std::string& sentence, size_t chars) {
  std::string out;
  while (out.size() < chars) out += sentence + " ";
  return out;
}

void run(benchmark::State& state, const std::string& text) {
  for (auto _ : state) {
    duet::AutoDecision d = duet::classify_for_thinking(text);
    benchmark::DoNotOptimize(d);
  }
  state.SetLabel(std::to_string(text.size()) + " bytes");
}

void BM_English(benchmark::State& s) {
  run(s, prompt_of("Here is the report from last quarter, with the numbers per region and the "
                   "notes from each team lead about what went well.",
                   2000));
}
void BM_Chinese(benchmark::State& s) {
  run(s, prompt_of("这是上个季度的报告，包括每个地区的数据以及各团队负责人关于进展顺利之处的说明。",
                   2000));
}
void BM_French(benchmark::State& s) {
  run(s, prompt_of("Voici le rapport du dernier trimestre, avec les chiffres par région et les "
                   "remarques de chaque responsable d'équipe.",
                   2000));
}
void BM_Russian(benchmark::State& s) {
  run(s, prompt_of("Вот отчёт за прошлый квартал с цифрами по регионам и заметками каждого "
                   "руководителя команды.",
                   2000));
}
void BM_Japanese(benchmark::State& s) {
  run(s,
      prompt_of(
          "これは前四半期の報告書で、地域ごとの数字と各チームリーダーのコメントが含まれています。",
          2000));
}
void BM_Arabic(benchmark::State& s) {
  run(s, prompt_of("هذا تقرير الربع الماضي مع الأرقام لكل منطقة وملاحظات كل قائد فريق.", 2000));
}
void BM_PastedDocument(benchmark::State& s) {
  run(s, prompt_of("Voici le rapport du dernier trimestre, avec les chiffres par région.", 20000) +
             " Résume ce document en trois phrases.");
}

BENCHMARK(BM_English)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Chinese)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_French)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Russian)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Japanese)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Arabic)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PastedDocument)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
