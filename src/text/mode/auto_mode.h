// The "auto" mode's classifier: should this request be answered with thinking?
//
// Deterministic rules over surface features of the latest user message, in English and Chinese
// (and text mixing both); no model, a few microseconds. Rules are tried in this order, and the
// first that fires decides:
//   1. code in the text (a ``` block, code lines, f(x)-style calls, error names) → think
//   2. transformation of given text: translation, rewriting, polishing, summarising → no think
//   3. math: arithmetic, equations, LaTeX and math symbols, math vocabulary, word problems → think
//   4. programming requests (vocabulary such as function/debug/报错/算法, language names) → think
//   5. logic puzzles (liars, syllogisms, riddles) → think
//   6. multi-step reasoning (step by step, analyse, compare, plan, design; or two weaker cues
//      such as why / explain / how would / difference; several questions at once) → think
//   7. in a short message (under 15 words, or about 22 Chinese characters): chit-chat
//      (greetings, thanks, small talk), creative requests (a poem, a joke, a name), factual
//      look-ups ("what is the capital of", "是谁") → no think
//   8. otherwise by length: long requests (≥ 40 words, or ≥ 60 Chinese characters) think;
//      with tools offered the bar is lower (20 words / 30 characters), since tool use needs
//      planning. Short unknown requests answer at once.
// Code comes before transformation so that "refactor this function" or "translate this Python to
// Rust" think, and transformation comes before math and reasoning so that "summarise this text
// about why Rome fell" does not.
#pragma once

#include <string>
#include <string_view>

namespace duet {

struct AutoContext {
  bool has_tools = false;  // the request offers tools
};

struct AutoDecision {
  bool think = false;
  std::string reason;  // the rule that fired, e.g. "math: equation", "chat: greeting"
};

// Only the first 4 KiB and the last 2 KiB of a long message are read (instructions sit at the
// ends of a pasted document), so the cost is bounded whatever the prompt's length.
AutoDecision classify_for_thinking(std::string_view latest_user_text,
                                   const AutoContext& context = {});

}  // namespace duet
