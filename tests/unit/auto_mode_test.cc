// The auto-mode classifier: accuracy on a labelled set written before the rules, and one test
// per rule family in English and Chinese.
#include "text/mode/auto_mode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "text/mode/auto_features.h"
#include "text/mode/thinking_mode.h"

namespace duet {
namespace {

std::string labels_path() {
  return (std::filesystem::path(__FILE__).parent_path() / "data" / "auto_mode_labels.jsonl")
      .string();
}

struct Tally {
  int right = 0;
  int total = 0;
  double accuracy() const { return total ? static_cast<double>(right) / total : 0; }
};

TEST(AutoMode, LabelledSetAccuracy) {
  std::ifstream in(labels_path());
  ASSERT_TRUE(in) << labels_path();
  std::map<std::string, Tally> by_lang;
  Tally all;
  std::string line;
  int en = 0, zh = 0;
  double total_us = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto row = nlohmann::json::parse(line);
    const std::string text = row.at("text");
    const bool want = row.at("think");
    const std::string lang = row.at("lang");
    // "dev": the first 145 rows, written before the rules were; "heldout": 75 more, written
    // after the rules and before the classifier had seen them (rules not tuned to them).
    const std::string set = row.value("set", "dev");
    ASSERT_TRUE(lang == "en" || lang == "zh" || lang == "mixed") << line;
    en += lang == "en";
    zh += lang == "zh";
    const auto start = std::chrono::steady_clock::now();
    const AutoDecision d = classify_for_thinking(text);
    total_us +=
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    const bool right = d.think == want;
    for (const std::string& key : {lang, "set:" + set}) {
      by_lang[key].right += right;
      by_lang[key].total += 1;
    }
    all.right += right;
    all.total += 1;
    if (!right)
      std::printf("  miss (%s, want %s): %s  [%s]\n", set.c_str(), want ? "think" : "no",
                  text.c_str(), d.reason.c_str());
  }
  ASSERT_GE(en, 50);
  ASSERT_GE(zh, 50);
  ASSERT_GE(all.total, 120);
  std::printf("auto-mode accuracy: overall %.3f (%d/%d)", all.accuracy(), all.right, all.total);
  for (const auto& [lang, t] : by_lang) {
    std::printf(", %s %.3f (%d/%d)", lang.c_str(), t.accuracy(), t.right, t.total);
    RecordProperty("accuracy_" + lang.substr(lang.find(':') + 1), std::to_string(t.accuracy()));
  }
  std::printf("; %.2f us per prompt\n", total_us / all.total);
  RecordProperty("accuracy_overall", std::to_string(all.accuracy()));
  // No worse than the English and Chinese rules alone were before the multilingual classifier
  // (issue 30): 5 misses in all, 3 of them in English. (The classifier gets two English rows
  // right that the length rule missed, and two Chinese ones wrong that it got right — "why is
  // the sky blue" and "list vs tuple", which the corpus's writers would have called reasoning.)
  const auto misses = [&](const char* lang) { return by_lang[lang].total - by_lang[lang].right; };
  EXPECT_LE(all.total - all.right, 5);
  EXPECT_LE(misses("en"), 3);
}

// The multilingual corpus (src/text/mode/auto_corpus): one file per language, written for this
// purpose; every fourth line of each file is held out of training (tools/auto_mode_trainer.cc).
// On the held-out lines the whole decision (rules, then the classifier) must be right 92% of the
// time overall and 85% in every language. Thinking recall (a request that needs reasoning gets
// it) is reported apart from precision: a wrong "no" costs answer quality, a wrong "yes" time.
TEST(AutoMode, MultilingualHeldOut) {
  const std::filesystem::path dir = std::filesystem::path(__FILE__).parent_path() / ".." / ".." /
                                    "src" / "text" / "mode" / "auto_corpus";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 20u) << dir;
  struct Counts {
    int rows = 0, think = 0, right = 0, total = 0, tp = 0, fp = 0, fn = 0;
  };
  std::map<std::string, Counts> by_lang;
  Counts all;
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string line;
    const std::string lang = path.stem().string();
    Counts& c = by_lang[lang];
    for (size_t i = 0; std::getline(in, line); ++i) {
      const auto row = nlohmann::json::parse(line);
      ASSERT_EQ(row.at("lang"), lang) << path << ":" << i + 1;
      const bool want = row.at("think");
      ++c.rows;
      c.think += want;
      if (!auto_corpus_held_out(i)) continue;  // trained on
      const std::string text = row.at("text");
      const AutoDecision d = classify_for_thinking(text);
      for (Counts* t : {&c, &all}) {
        ++t->total;
        t->right += d.think == want;
        t->tp += d.think && want;
        t->fp += d.think && !want;
        t->fn += !d.think && want;
      }
      if (d.think != want)
        std::printf("  miss (%s, want %s): %s  [%s]\n", lang.c_str(), want ? "think" : "no",
                    text.c_str(), d.reason.c_str());
    }
    all.rows += c.rows;
    EXPECT_GE(c.think, 20) << lang << ": both classes in every language";
    EXPECT_GE(c.rows - c.think, 20) << lang << ": both classes in every language";
  }
  EXPECT_GE(all.rows, 2000);
  const auto rate = [](int a, int b) { return b ? static_cast<double>(a) / b : 0.0; };
  std::printf("held out: accuracy %.3f (%d/%d), thinking recall %.3f, thinking precision %.3f\n",
              rate(all.right, all.total), all.right, all.total, rate(all.tp, all.tp + all.fn),
              rate(all.tp, all.tp + all.fp));
  for (const auto& [lang, c] : by_lang) {
    std::printf("  %s %.3f (%d/%d) recall %.2f precision %.2f\n", lang.c_str(),
                rate(c.right, c.total), c.right, c.total, rate(c.tp, c.tp + c.fn),
                rate(c.tp, c.tp + c.fp));
    EXPECT_GE(rate(c.right, c.total), 0.85) << lang;
  }
  RecordProperty("heldout_accuracy", std::to_string(rate(all.right, all.total)));
  RecordProperty("heldout_thinking_recall", std::to_string(rate(all.tp, all.tp + all.fn)));
  RecordProperty("heldout_thinking_precision", std::to_string(rate(all.tp, all.tp + all.fp)));
  EXPECT_GE(rate(all.right, all.total), 0.92);
}

// In a conversation: a short follow-up to a reasoning turn keeps reasoning (in any language),
// a thank-you does not; whether the turn reasoned comes from its reasoning sent back, else from
// the question it answered.
ThinkingDecision decide_auto(std::vector<ModeTurn> turns) {
  return decide_thinking(ModeFields{}, turns, /*has_tools=*/false, ThinkDefault::kAuto);
}

TEST(AutoMode, FollowUpsKeepReasoning) {
  const std::string proof = "Prove that there are infinitely many primes.";
  for (const char* follow :
       {"why?", "и дальше?", "続けて", "pourquoi ?", "¿y después?", "继续", "and the next step?"}) {
    const ThinkingDecision d = decide_auto({{"user", proof}, {"assistant", ""}, {"user", follow}});
    EXPECT_TRUE(d.enabled) << follow << " [" << d.reason << "]";
  }
  // The assistant turn came back with reasoning: that alone says it reasoned.
  const ThinkingDecision sent_back =
      decide_auto({{"user", "hmm"}, {"assistant", "", true}, {"user", "warum?"}});
  EXPECT_TRUE(sent_back.enabled) << sent_back.reason;
  EXPECT_NE(sent_back.reason.find("follow-up"), std::string::npos) << sent_back.reason;
  // A chain of follow-ups keeps reasoning (each earlier turn is judged in its own context).
  const ThinkingDecision chain = decide_auto({{"user", proof},
                                              {"assistant", ""},
                                              {"user", "why?"},
                                              {"assistant", ""},
                                              {"user", "и дальше?"}});
  EXPECT_TRUE(chain.enabled) << chain.reason;
  for (const char* closing : {"thanks!", "спасибо", "Спасибо!", "ありがとう", "Merci beaucoup",
                              "ΕΥΧΑΡΙΣΤΩ", "ok", "hi there, how are you?", "Привет!", "hola"}) {
    const ThinkingDecision d = decide_auto({{"user", proof}, {"assistant", ""}, {"user", closing}});
    EXPECT_FALSE(d.enabled) << closing << " [" << d.reason << "]";
  }
  // After a turn that did not reason, a short message is judged on its own.
  const ThinkingDecision chat =
      decide_auto({{"user", "hi there"}, {"assistant", "hello!"}, {"user", "how are you?"}});
  EXPECT_FALSE(chat.enabled) << chat.reason;
}

TEST(AutoMode, SystemPromptSetsTheMode) {
  const ThinkingDecision brief =
      decide_auto({{"system", "You are a support bot. Answer directly, without explanation."},
                   {"user", "Prove that there are infinitely many primes."}});
  EXPECT_FALSE(brief.enabled);
  EXPECT_NE(brief.reason.find("system prompt"), std::string::npos) << brief.reason;
  const ThinkingDecision careful =
      decide_auto({{"system", "Réfléchis étape par étape avant de répondre."}, {"user", "salut"}});
  EXPECT_TRUE(careful.enabled) << careful.reason;
  const ThinkingDecision ru = decide_auto(
      {{"system", "Не рассуждай, отвечай сразу."}, {"user", "Докажи, что √2 иррационально."}});
  EXPECT_FALSE(ru.enabled) << ru.reason;
  // "Be concise" is about the answer's length, not about thinking: the message decides.
  const ThinkingDecision concise = decide_auto(
      {{"system", "Be concise."}, {"user", "Prove that there are infinitely many primes."}});
  EXPECT_TRUE(concise.enabled) << concise.reason;
  const ThinkingDecision zh =
      decide_auto({{"system", "请直接回答，不要思考。"}, {"user", "证明勾股定理"}});
  EXPECT_FALSE(zh.enabled) << zh.reason;
  // A neutral system prompt leaves the decision to the message.
  const ThinkingDecision neutral = decide_auto(
      {{"system", "You are a helpful assistant."}, {"user", "Prove that √2 is irrational."}});
  EXPECT_TRUE(neutral.enabled) << neutral.reason;
}

// One rule family at a time, each in English and Chinese. The expected reason names the rule,
// so a case decided by a different rule (right answer, wrong reason) fails too.
struct Case {
  const char* text;
  bool think;
  const char* reason_prefix;
};

void expect_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const AutoDecision d = classify_for_thinking(c.text);
    EXPECT_EQ(d.think, c.think) << c.text << " [" << d.reason << "]";
    EXPECT_TRUE(d.reason.starts_with(c.reason_prefix))
        << c.text << ": reason '" << d.reason << "', want '" << c.reason_prefix << "...'";
  }
}

TEST(AutoMode, Math) {
  expect_cases({
      {"What is 348 + 129 * 3?", true, "math: arithmetic"},
      {"2x - 4 = 10, what is x?", true, "math: equation"},
      {"Evaluate $\\frac{1}{2} + \\frac{1}{3}$", true, "math: LaTeX"},
      {"Show that √2 + √3 is irrational", true, "math: symbols"},
      {"Prove that there are infinitely many primes.", true, "math: 'prove'"},
      {"What is the probability of drawing two aces from a deck?", true, "math: 'probabilit'"},
      {"Tom has 12 apples and gives away 5. How many are left?", true, "math: word problem"},
      {"计算 56 × 78", true, "math: arithmetic"},
      {"求解方程组：x + y = 10，x - y = 2", true, "math: equation"},
      {"证明三角形内角和为180度", true, "math: '证明'"},
      {"求 sin x 在 0 到 π 上的积分", true, "math: symbols"},
      {"掷两枚骰子，点数之和为7的概率是多少", true, "math: '概率'"},
      {"一辆车每小时行驶60公里，走完240公里要几个小时？", true, "math: word problem"},
  });
}

TEST(AutoMode, MathNotFooledByDatesAndNames) {
  expect_cases({
      {"Who is the prime minister of Canada?", false, "short factual"},
      {"The meeting is on 2024-05-01, ok?", false, "chat: greeting"},
  });
}

TEST(AutoMode, Code) {
  expect_cases({
      {"What does this print?\n```js\nconsole.log([1,2]+[3])\n```", true, "code: code block"},
      {"def f(x):\n    return x * 2\nwhy does it fail on strings", true, "code: code lines"},
      {"Why is items.size() always zero?", true, "code: call f()"},
      {"I get IndexError when I run my script", true, "code: error name"},
      {"Got a segfault in my parser", true, "code: 'segfault'"},
      {"Write a function that merges two sorted arrays", true, "code: programming request"},
      {"Fix this bug: the loop never ends", true, "code: programming request"},
      {"用 Python 写一个爬虫脚本", true, "code: programming request"},
      {"这段代码一直报错，帮我调试一下", true, "code: programming request"},
      {"程序运行时段错误了", true, "code: '段错误'"},
      {"为什么 arr.push() 没有生效", true, "code: call f()"},
      {"```\nint main() { return 0 }\n```\n编译不过", true, "code: code block"},
  });
}

TEST(AutoMode, MultiStep) {
  expect_cases({
      {"Think step by step: which city should host the games?", true, "multi-step: 'step by step'"},
      {"Compare Rust and Go for a CLI tool", true, "multi-step: 'compare'"},
      {"Plan a wedding for 80 guests", true, "multi-step: 'plan a'"},
      {"Analyze the causes of the 2008 crisis", true, "multi-step: 'analy'"},
      {"Why do leaves change color, and how does temperature affect it?", true,
       "multi-step: 'why' and more"},
      {"What is a black hole? How does it form?", true, "multi-step: several questions"},
      {"请一步一步地推导这个结论", true, "multi-step: '一步一步'"},
      {"分析一下这家公司的财报", true, "multi-step: '分析'"},
      {"比较一下高铁和飞机出行", true, "multi-step: '比较'"},
      {"为什么要用微服务而不是单体架构", true, "multi-step: '为什么' and more"},
  });
}

TEST(AutoMode, LogicPuzzles) {
  expect_cases({
      {"Here is a riddle: what has keys but opens no locks", true, "logic puzzle"},
      {"One guard always lies and one always tells the truth. Which door?", true, "logic puzzle"},
      {"If all cats are mammals and all mammals breathe, do cats breathe", true,
       "logic puzzle: syllogism"},
      {"A说B在说谎，B说C在说谎，谁在说谎", true, "logic puzzle"},
      {"如果所有的鸟都会飞，企鹅是鸟，企鹅会飞吗", true, "logic puzzle: syllogism"},
  });
}

TEST(AutoMode, ChatAndCreative) {
  expect_cases({
      {"hello there!", false, "chat: greeting"},
      {"thanks, bye", false, "chat: greeting"},
      {"你好呀", false, "chat: greeting"},
      {"谢谢，辛苦了", false, "chat: greeting"},
      {"Write a haiku about rain", false, "creative: short writing"},
      {"写一个关于猫的小故事", false, "creative: short writing"},
      {"", false, "chat: empty"},
  });
}

TEST(AutoMode, TranslationRewriteSummary) {
  expect_cases({
      {"Translate 'good luck' into Italian", false, "translation"},
      {"How do you say cheers in German?", false, "translation"},
      {"把“晚安”翻译成法语", false, "translation"},
      {"Rephrase: the product is very good", false, "rewrite"},
      {"Polish my cover letter: I am a hard worker who likes computers.", false, "rewrite"},
      {"帮我改写这段话，让它更有感染力：我们的产品很好用。", false, "rewrite"},
      {"Summarize the following: prices rose 5% in May and 3% in June.", false, "summary"},
      {"总结一下：会议决定下周一上线新版本，周三复盘。", false, "summary"},
      // A transformation with real work asked first is real work.
      {"Write a Python function that summarizes a list", true, "code: programming request"},
      {"Translate this code to Rust:\n```\nfn main() {}\n```", true, "code: code block"},
  });
}

TEST(AutoMode, ShortFactual) {
  expect_cases({
      {"What is the capital of Peru?", false, "short factual"},
      {"Who invented the telephone?", false, "short factual"},
      {"法国的首都是哪里", false, "short factual"},
      {"《三体》的作者是谁", false, "short factual"},
  });
}

// What no rule decides goes to the classifier, whose probability is in the reason; with tools
// offered, a request of 20 words or more thinks (tool use needs planning).
TEST(AutoMode, ClassifierDecidesTheRestAndToolsLowerTheBar) {
  const AutoDecision koalas = classify_for_thinking("Tell me about koalas");
  EXPECT_FALSE(koalas.think);
  EXPECT_TRUE(koalas.reason.starts_with("classifier: ")) << koalas.reason;
  const std::string medium =
      "I need the weather for the three cities on my trip next week and whether I should pack "
      "an umbrella for any of them";
  const AutoDecision with_tools = classify_for_thinking(medium, AutoContext{.has_tools = true});
  EXPECT_TRUE(with_tools.think);
  EXPECT_EQ(with_tools.reason, "long request with tools");
  EXPECT_TRUE(classify_for_thinking(medium).reason.starts_with("classifier: "));
  // Another language, no rule: the classifier, both ways.
  const AutoDecision fr_think = classify_for_thinking(
      "Combien de façons y a-t-il de ranger 5 livres sur une étagère si deux d'entre eux doivent "
      "rester côte à côte ?");
  EXPECT_TRUE(fr_think.think) << fr_think.reason;
  const AutoDecision ru_chat = classify_for_thinking("Привет! Как дела?");
  EXPECT_FALSE(ru_chat.think) << ru_chat.reason;
  EXPECT_TRUE(ru_chat.reason.starts_with("classifier: ")) << ru_chat.reason;
}

TEST(AutoMode, LongInputIsBoundedAndDeterministic) {
  // A 1 MB paste: only its ends are read, and the instruction at the end still counts.
  std::string text(1 << 20, 'a');
  for (size_t i = 0; i < text.size(); i += 7) text[i] = ' ';
  text += " Please summarize the above.";
  const AutoDecision a = classify_for_thinking(text);
  EXPECT_FALSE(a.think);
  EXPECT_EQ(a.reason, "summary");
  EXPECT_EQ(classify_for_thinking(text).reason, a.reason);
  // The middle is never read (so the cost is bounded by structure, not by a timing): code
  // there, which would make the first rule fire, changes nothing.
  std::string with_code = text;
  const std::string code = "```python\ndef f(x):\n    return g(x) + 1\n```";
  with_code.replace(with_code.size() / 2, code.size(), code);
  const AutoDecision b = classify_for_thinking(with_code);
  EXPECT_EQ(b.think, a.think);
  EXPECT_EQ(b.reason, a.reason);
  EXPECT_TRUE(classify_for_thinking(code + " Please summarize the above.").think)
      << "the same code at an end is read";
  // Cutting inside a multi-byte character must not break anything, and the request at the end
  // is still read.
  std::string zh;
  for (int i = 0; i < 5000; ++i) zh += "字";
  EXPECT_EQ(classify_for_thinking(zh + "证明勾股定理").reason, "math: '证明'");
}

}  // namespace
}  // namespace duet

namespace duet {
namespace {

// A quoted passage of 24 characters or more is one marker to the classifier (what it says does not
// matter, that it is there does); short quotes and the text between quotes are read as written.
TEST(AutoFeatures, LongQuotesAreMaskedShortOnesAreRead) {
  const auto same = [](std::string_view a, std::string_view b) {
    auto fa = extract_auto_features(a), fb = extract_auto_features(b);
    const auto key = [](const AutoFeature& x, const AutoFeature& y) { return x.index < y.index; };
    std::sort(fa.begin(), fa.end(), key);
    std::sort(fb.begin(), fb.end(), key);
    return fa.size() == fb.size() && std::equal(fa.begin(), fa.end(), fb.begin(),
                                                [](const AutoFeature& x, const AutoFeature& y) {
                                                  return x.index == y.index;
                                                });
  };
  EXPECT_TRUE(same("Summarise: «the council met on Monday and agreed the budget»",
                   "Summarise: «a long quoted text about something else entirely»"));
  EXPECT_FALSE(same("Translate \"hello\" into French and tell me how to pronounce \"bonjour\"",
                    "Translate \"hello\" and write me a program that sorts it, then \"bonjour\""));
  EXPECT_FALSE(same("Translate \"hello\" into French", "Translate \"bye\" into French"));
  // Unclosed quotes are text; many of them cost one scan, not one each.
  std::string many(6000, '"');
  many[0] = 'x';
  std::string guillemets;
  for (int i = 0; i < 2000; ++i) guillemets += "«";
  EXPECT_FALSE(extract_auto_features(guillemets + "abc").empty());
  EXPECT_FALSE(extract_auto_features(many).empty());
}

}  // namespace
}  // namespace duet
