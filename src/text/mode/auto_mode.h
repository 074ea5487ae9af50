// The "auto" mode's classifier: should this request be answered with thinking?
//
// Rules over surface features, then a small trained classifier for what no rule decides; no
// model weights of the LLM, 0.1–0.3 ms for a 2,000-character message (docs/PERF.md). Tried in this
// order, the first that fires decides:
//   0. a system prompt that says whether to think ("think step by step", "answer directly",
//      "一步一步", "不要思考", ... in several languages) → as it says
//   1. code in the text (a ``` block, code lines, f(x)-style calls, error names) → think
//   In English and Chinese (and text mixing both), keyword rules:
//   2. transformation of given text: translation, rewriting, polishing, summarising → no think
//   3. math: arithmetic, equations, LaTeX and math symbols, math vocabulary, word problems → think
//   4. programming requests (vocabulary such as function/debug/报错/算法, language names) → think
//   5. logic puzzles (liars, syllogisms, riddles) → think
//   6. multi-step reasoning (step by step, analyse, compare, plan, design; or two weaker cues
//      such as why / explain / how would / difference; several questions at once) → think
//   In every other language: math written as math (an equation, arithmetic) → think.
//   7. a short follow-up ("why?", "и дальше?", "続けて") to a turn that reasoned → think, unless
//      it closes the exchange ("thanks", "merci", "спасибо", ...)
//   8. in English and Chinese, a short message of chit-chat, a creative request or a factual
//      look-up ("what is the capital of", "是谁") → no think
//   9. with tools offered, a request of 20 words or more → think (tool use needs planning)
//  10. the multilingual classifier (auto_features.h: character n-grams, hashed; logistic
//      regression trained at build time on src/text/mode/auto_corpus, 24 languages) → its
//      probability, which the reason reports ("classifier: 0.83")
// Code comes before transformation so that "refactor this function" or "translate this Python to
// Rust" think, and transformation comes before math and reasoning so that "summarise this text
// about why Rome fell" does not.
#pragma once

#include <string>
#include <string_view>

namespace duet {

struct AutoContext {
  bool has_tools = false;          // the request offers tools
  bool follows_reasoning = false;  // the turn before this one was answered with reasoning
  std::string_view system_text;    // the system prompt, if any
};

struct AutoDecision {
  bool think = false;
  std::string reason;  // the rule that fired, e.g. "math: equation", "chat: greeting"
};

// Only the first 4 KiB and the last 2 KiB of a long message are read (instructions sit at the
// ends of a pasted document), so the cost is bounded whatever the prompt's length.
// Whether `text` is short enough, and not a closing or greeting, for the follow-up rule (7) to
// apply: only then does AutoContext::follows_reasoning change the decision.
bool is_short_follow_up(std::string_view text);

AutoDecision classify_for_thinking(std::string_view latest_user_text,
                                   const AutoContext& context = {});

}  // namespace duet
