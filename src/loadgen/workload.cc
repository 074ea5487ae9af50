#include "loadgen/workload.h"

#include <cmath>
#include <fstream>
#include <random>

namespace duet::loadgen {
namespace {

using Json = nlohmann::json;

// Common English words that Qwen3's tokenizer (and most BPE vocabularies) keep as a single
// token with their leading space, so that N words make a prompt of about N tokens. A byte
// vocabulary (duet's demo model) counts several tokens a word: the usage says how many.
constexpr const char* kWords[] = {
    "the",     "of",      "and",      "to",     "in",      "is",      "that",     "for",
    "it",      "as",      "was",      "with",   "be",      "by",      "on",       "not",
    "he",      "this",    "are",      "or",     "his",     "from",    "at",       "which",
    "but",     "have",    "an",       "had",    "they",    "you",     "were",     "their",
    "one",     "all",     "we",       "can",    "her",     "has",     "there",    "been",
    "if",      "more",    "when",     "will",   "would",   "who",     "so",       "no",
    "time",    "people",  "year",     "way",    "day",     "man",     "thing",    "woman",
    "life",    "child",   "world",    "school", "state",   "family",  "student",  "group",
    "country", "problem", "hand",     "part",   "place",   "case",    "week",     "company",
    "system",  "program", "question", "work",   "number",  "night",   "point",    "home",
    "water",   "room",    "mother",   "area",   "money",   "story",   "fact",     "month",
    "lot",     "right",   "study",    "book",   "eye",     "job",     "word",     "business",
    "side",    "kind",    "head",     "house",  "service", "friend",  "father",   "power",
    "hour",    "game",    "line",     "end",    "member",  "law",     "car",      "city",
    "name",    "team",    "minute",   "idea",   "kid",     "body",    "back",     "parent",
    "face",    "others",  "level",    "office", "door",    "health",  "person",   "art",
    "war",     "history", "party",    "result", "change",  "morning", "reason",   "research",
    "girl",    "guy",     "moment",   "air",    "teacher", "force",   "education"};
constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);

// Portable draws from a 64-bit Mersenne Twister (whose sequence the standard fixes), so a
// seed means the same plan with any standard library.
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
int uniform_int(std::mt19937_64& rng, int lo, int hi) {
  return lo + static_cast<int>(std::floor(uniform01(rng) * (hi - lo + 1)));
}

int draw_len(std::mt19937_64& rng, int len, double ratio) {
  const int lo = std::max(1, static_cast<int>(std::floor(len * (1.0 - ratio))));
  const int hi = std::max(lo, static_cast<int>(std::floor(len * (1.0 + ratio))));
  return uniform_int(rng, lo, hi);
}

Think think_for(ThinkPlan plan, std::mt19937_64& rng, double fraction) {
  switch (plan) {
    case ThinkPlan::kOn:
      return Think::kOn;
    case ThinkPlan::kOff:
      return Think::kOff;
    case ThinkPlan::kAuto:
      return Think::kAuto;
    case ThinkPlan::kMix:
      return uniform01(rng) < fraction ? Think::kOn : Think::kOff;
    default:
      return Think::kServerDefault;
  }
}

// Independent streams for the dataset, the modes and the arrivals: changing the rate must
// not change the prompts.
uint64_t stream_seed(uint64_t seed, uint64_t stream) {
  return seed * 0x9E3779B97F4A7C15ull + stream;
}

std::vector<PlannedRequest> random_requests(const WorkloadOptions& o, int n, uint64_t stream) {
  std::mt19937_64 rng(stream_seed(o.seed, stream));
  std::mt19937_64 modes(stream_seed(o.seed, stream + 1));
  std::vector<PlannedRequest> out;
  for (int i = 0; i < n; ++i) {
    PlannedRequest p;
    p.index = i;
    p.input_len = draw_len(rng, o.input_len, o.range_ratio);
    p.output_len = draw_len(rng, o.output_len, o.range_ratio);
    for (int w = 0; w < p.input_len; ++w) {
      if (w) p.prompt += ' ';
      p.prompt += kWords[uniform_int(rng, 0, static_cast<int>(kNumWords) - 1)];
    }
    p.think = think_for(o.think, modes, o.mix_thinking_fraction);
    out.push_back(std::move(p));
  }
  return out;
}

Result<Think> parse_think(const Json& v, int line) {
  const std::string where = "line " + std::to_string(line) + ": ";
  if (v.is_boolean()) return v.get<bool>() ? Think::kOn : Think::kOff;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "on") return Think::kOn;
    if (s == "off") return Think::kOff;
    if (s == "auto") return Think::kAuto;
  }
  return Status::error(where + "\"think\" must be true, false, \"on\", \"off\" or \"auto\"");
}

Result<std::vector<PlannedRequest>> file_requests(const WorkloadOptions& o, int n,
                                                  uint64_t stream) {
  std::ifstream in(o.dataset_file);
  if (!in) return Status::error("cannot open the dataset " + o.dataset_file);
  std::vector<PlannedRequest> lines;
  std::vector<bool> own_mode;  // the line said "think": --think does not apply to it
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = o.dataset_file + " line " + std::to_string(line_no) + ": ";
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Status::error(where + "not a JSON object");
    PlannedRequest p;
    p.output_len = o.output_len;
    if (j.contains("messages")) {
      if (!j["messages"].is_array() || j["messages"].empty())
        return Status::error(where + "\"messages\" must be a non-empty array");
      p.messages_json = j["messages"].dump();
    } else if (j.contains("prompt") && j["prompt"].is_string()) {
      p.prompt = j["prompt"].get<std::string>();
    } else {
      return Status::error(where + "needs \"prompt\" (a string) or \"messages\" (an array)");
    }
    for (const char* key : {"output_len", "max_tokens"}) {
      if (!j.contains(key)) continue;
      if (!j[key].is_number_integer() || j[key].get<int64_t>() < 1 ||
          j[key].get<int64_t>() > 1 << 20)
        return Status::error(where + "\"" + key + "\" must be an integer from 1 to 1048576");
      p.output_len = j[key].get<int>();
    }
    if (j.contains("think")) {
      auto t = parse_think(j["think"], line_no);
      if (!t) return Status::error(o.dataset_file + " " + t.message());
      p.think = *t;
    }
    own_mode.push_back(j.contains("think"));
    lines.push_back(std::move(p));
  }
  if (lines.empty()) return Status::error("the dataset " + o.dataset_file + " has no prompts");
  if (n <= 0) n = static_cast<int>(lines.size());
  std::mt19937_64 modes(stream_seed(o.seed, stream + 1));
  std::vector<PlannedRequest> out;
  for (int i = 0; i < n; ++i) {
    const size_t line = static_cast<size_t>(i) % lines.size();  // cycles through the file
    PlannedRequest p = lines[line];
    p.index = i;
    const Think drawn = think_for(o.think, modes, o.mix_thinking_fraction);
    if (!own_mode[line]) p.think = drawn;
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<PlannedRequest>> make_requests(const WorkloadOptions& o, int n,
                                                  uint64_t stream) {
  if (o.dataset_file.empty()) return random_requests(o, n, stream);
  return file_requests(o, n, stream);
}

}  // namespace

std::vector<double> arrival_times(int n, double rate, bool poisson, double burstiness,
                                  uint64_t seed) {
  std::vector<double> t(static_cast<size_t>(std::max(n, 0)), 0.0);
  if (!std::isfinite(rate) || rate <= 0) return t;  // all at once
  std::mt19937_64 rng(stream_seed(seed, 100));
  // Gamma gaps with shape k = burstiness and mean 1/rate (scale 1/(rate·k)), as vLLM draws
  // them; k = 1 is the exponential, i.e. a Poisson process. k = 1 is drawn by inversion so
  // that the plan does not depend on the library's gamma sampler.
  std::gamma_distribution<double> gamma(burstiness, 1.0 / (rate * burstiness));
  for (size_t i = 1; i < t.size(); ++i) {
    double gap = 1.0 / rate;
    if (poisson) gap = burstiness == 1.0 ? -std::log1p(-uniform01(rng)) / rate : gamma(rng);
    t[i] = t[i - 1] + gap;
  }
  return t;
}

Result<std::vector<PlannedRequest>> plan_requests(const WorkloadOptions& o) {
  auto reqs = make_requests(o, o.num_prompts, 0);
  if (!reqs) return reqs;
  const std::vector<double> t = arrival_times(static_cast<int>(reqs->size()), o.request_rate,
                                              o.poisson, o.burstiness, o.seed);
  for (size_t i = 0; i < reqs->size(); ++i) (*reqs)[i].scheduled_s = t[i];
  return reqs;
}

Result<std::vector<PlannedRequest>> plan_warmup(const WorkloadOptions& o) {
  if (o.warmup <= 0) return std::vector<PlannedRequest>{};
  return make_requests(o, o.warmup, 50);
}

std::string request_body(const PlannedRequest& p, const BodyOptions& b) {
  Json j = Json::object();
  j["model"] = b.model;
  if (!p.messages_json.empty())
    j["messages"] = Json::parse(p.messages_json);
  else
    j["messages"] = Json::array({{{"role", "user"}, {"content", p.prompt}}});
  j["stream"] = true;
  j["stream_options"] = {{"include_usage", true}};
  j["max_tokens"] = p.output_len;
  if (b.ignore_eos) {
    j["ignore_eos"] = true;
    j["min_tokens"] = p.output_len;
  }
  if (b.temperature >= 0) j["temperature"] = b.temperature;
  if (p.think == Think::kOn || p.think == Think::kOff)
    j["chat_template_kwargs"] = {{"enable_thinking", p.think == Think::kOn}};
  else if (p.think == Think::kAuto)
    j["mode"] = "auto";
  for (const auto& [k, v] : b.extra.items()) j[k] = v;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace duet::loadgen
