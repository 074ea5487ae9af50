// The auto-mode classifier: keyword and pattern rules, tried in a fixed order (auto_mode.h).
//
// English keywords are matched on an ASCII-lowercased copy at word boundaries ("prove" does not
// fire inside "improve"); a trailing '*' makes a keyword a stem ("summar*" covers summary,
// summarize, summarise). Keywords holding non-ASCII bytes (Chinese) are plain substrings,
// since Chinese has no spaces to bound words.
#include "text/mode/auto_mode.h"

#include <utf8proc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <optional>
#include <span>
#include <string>

#include "text/mode/auto_features.h"
#include "text/mode/auto_mode_weights.inc"  // generated at build time (tools/auto_mode_trainer.cc)

namespace duet {
namespace {

using Keywords = std::span<const std::string_view>;

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// What the rules look at, computed once.
struct Features {
  std::string original;   // the (bounded) text as written
  std::string lower;      // ASCII lowercased, whitespace runs folded to one space, trimmed
  int words = 0;          // runs of ASCII letters and digits
  int cjk = 0;            // CJK ideographs
  int questions = 0;      // '?' and '？'
  int kana_hangul = 0;    // Japanese kana and Korean Hangul: CJK text the Chinese rules misread
  int other_letters = 0;  // letters outside ASCII and CJK (accented Latin, Cyrillic, Arabic...)
  // Length in "words": an ideograph counts 2/3 (a Chinese sentence of 60 characters says
  // about as much as 40 English words).
  double units() const { return words + cjk * 2.0 / 3.0; }
};

Features extract(std::string_view text) {
  Features f;
  f.original.assign(bounded_head(text));
  if (const std::string_view tail = bounded_tail(text); !tail.empty()) {
    f.original += '\n';
    f.original.append(tail);
  }
  const std::string& s = f.original;
  f.lower.reserve(s.size());
  bool in_word = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (is_space(c)) {
      if (!f.lower.empty() && f.lower.back() != ' ') f.lower += ' ';
    } else {
      f.lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    if (is_alnum(c) != in_word) {
      in_word = !in_word;
      if (in_word) ++f.words;
    }
    if (c == '?') ++f.questions;
    const auto b = static_cast<uint8_t>(c);
    if (b >= 0xE0 && b <= 0xEF && i + 2 < s.size()) {  // a three-byte sequence
      const uint32_t cp = ((b & 0x0Fu) << 12) | ((static_cast<uint8_t>(s[i + 1]) & 0x3Fu) << 6) |
                          (static_cast<uint8_t>(s[i + 2]) & 0x3Fu);
      if ((cp >= 0x3400 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF)) ++f.cjk;
      if ((cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0xAC00 && cp <= 0xD7AF)) ++f.kana_hangul;
      if (cp == 0xFF1F) ++f.questions;                     // full-width question mark
      if (cp >= 0x0900 && cp < 0x2000) ++f.other_letters;  // Indic, Thai, ... (not symbols)
    } else if (b >= 0xC3 && b <= 0xDF) {  // two-byte letters: accented Latin to Arabic
      ++f.other_letters;
    }
  }
  if (!f.lower.empty() && f.lower.back() == ' ') f.lower.pop_back();
  return f;
}

// Position of the first match of `keyword` in `text` (lowercased), or npos.
size_t find_keyword(const std::string& text, std::string_view keyword) {
  const bool stem = keyword.size() > 1 && keyword.back() == '*';
  if (stem) keyword.remove_suffix(1);
  const bool ascii = std::all_of(keyword.begin(), keyword.end(),
                                 [](char c) { return static_cast<uint8_t>(c) < 0x80; });
  for (size_t pos = text.find(keyword); pos != std::string::npos;
       pos = text.find(keyword, pos + 1)) {
    if (!ascii) return pos;
    const size_t end = pos + keyword.size();
    // A boundary is needed only where the keyword itself starts/ends with a word character.
    const bool left_ok = pos == 0 || !is_alnum(keyword.front()) || !is_alnum(text[pos - 1]);
    const bool right_ok =
        stem || end == text.size() || !is_alnum(keyword.back()) || !is_alnum(text[end]);
    if (left_ok && right_ok) return pos;
  }
  return std::string::npos;
}

struct Match {
  size_t pos = std::string::npos;
  std::string_view keyword;
  explicit operator bool() const { return pos != std::string::npos; }
};

// The earliest match of any keyword.
Match first_of(const std::string& text, Keywords keywords) {
  Match best;
  for (std::string_view k : keywords) {
    const size_t pos = find_keyword(text, k);
    if (pos < best.pos) best = {pos, k};
  }
  return best;
}

int count_of(const std::string& text, Keywords keywords) {
  int n = 0;
  for (std::string_view k : keywords) n += find_keyword(text, k) != std::string::npos;
  return n;
}

std::string quoted(std::string_view keyword) {
  if (!keyword.empty() && keyword.back() == '*') keyword.remove_suffix(1);
  return "'" + std::string(keyword) + "'";
}

// ---------------------------------------------------------------- keyword tables
// clang-format off

// Math vocabulary. Bare "prime" and "matrix" are left out ("prime minister", "The Matrix").
constexpr std::string_view kMathWords[] = {
    "prove*", "proof", "derivative*", "differentiate", "integral*", "integrate", "solve",
    "equation*", "inequalit*", "probabilit*", "calculate*", "calculation", "compute", "eigenvalue*",
    "eigenvector*", "determinant", "theorem", "lemma", "prime number*", "primes", "prime factor*",
    "factorial", "logarithm*", "polynomial*", "expected value", "expected number", "how many ways",
    "permutation*", "combinatori*", "square root", "irrational", "integer solution*", "fibonacci",
    "compound interest", "arithmetic", "geometric series", "modulo", "dice", "coin flip*",
    "coin toss*", "rolls of a die", "计算", "证明", "求解", "方程", "积分", "概率", "导数", "求导",
    "微分", "不等式", "质数", "素数", "数列", "几何", "三角形", "极限", "矩阵", "特征值", "期望值",
    "数学期望", "排列组合", "整数解", "无理数", "有理数", "等于多少", "多少种", "鸡兔同笼", "根号",
    "对数", "余数", "最大公约数", "最小公倍数", "解方程", "算一下"};

// Programming vocabulary: one is not enough ("who created Python?"), two are, and so is one
// together with a request verb from kCodeVerbs.
constexpr std::string_view kCodeWords[] = {
    "function*", "class", "classes", "method*", "variable*", "bug", "bugs", "debug*", "error",
    "errors", "exception*", "compile*", "compiler", "refactor*", "implement*", "algorithm*",
    "regex*", "regular expression*", "api", "apis", "endpoint*", "script*", "program", "programs",
    "code", "coding", "unit test*", "recursion", "recursive", "array*", "linked list", "hash map",
    "hashmap", "binary search", "quicksort", "time complexity", "big-o", "pointer*", "runtime",
    "memory leak*", "thread*", "mutex", "deadlock*", "async", "database*", "schema*", "query",
    "queries", "sql", "json", "docker*", "container*", "kubernetes", "k8s", "git", "repo",
    "repository", "deploy*", "frontend", "backend", "crash*", "returns the wrong",
    "returning the wrong", "wrong result*", "wrong output", "not working", "doesn't work", "throws",
    "infinite loop", "off-by-one", "stack overflow", "python", "javascript", "typescript", "java",
    "c++", "c#", "golang", "rust", "kotlin", "swift", "ruby", "php", "perl", "scala", "haskell",
    "bash", "powershell", "html", "css", "react", "vue", "angular", "node.js", "nodejs", "django",
    "flask", "pandas", "numpy", "pytorch", "tensorflow", "mysql", "postgresql", "postgres",
    "mongodb", "redis", "in go", "in c", "用 go", "用go", "用 c", "代码", "函数", "报错", "调试",
    "编程", "程序", "算法", "实现", "复杂度", "正则", "内存泄漏", "段错误", "排查", "编译", "脚本",
    "接口", "单例", "数据库", "查询", "变量", "异常", "线程", "并发", "死锁", "递归", "数组",
    "链表", "部署", "容器", "服务器", "前端", "后端"};

constexpr std::string_view kCodeVerbs[] = {
    "write", "implement*", "create", "build", "fix", "debug*", "refactor*", "optimi*", "写", "实现",
    "编写", "修复", "优化"};

// Structural signs of code in the message itself.
constexpr std::string_view kCodeStrongWords[] = {
    "stack trace", "traceback", "segmentation fault", "segfault", "core dumped", "exit code",
    "errno", "undefined reference", "段错误"};
constexpr std::string_view kCodeOperators[] = {
    "==", "!=", "&&", "||", "=>", "::"};

constexpr std::string_view kTranslation[] = {
    "translat*", "how do you say", "how to say", "how do i say", "what is the english for",
    "in english", "into english", "to english", "in french", "into french", "to french",
    "in german", "into german", "to german", "in spanish", "into spanish", "to spanish",
    "in japanese", "into japanese", "to japanese", "in chinese", "into chinese", "to chinese",
    "in korean", "into korean", "to korean", "in italian", "into italian", "in russian",
    "into russian", "in portuguese", "in arabic", "翻译", "译成", "译为", "翻成", "用英语",
    "用英文", "用日语", "用法语", "用德语", "用韩语", "用中文", "英文怎么说", "英语怎么说",
    "日语怎么说"};

constexpr std::string_view kRewrite[] = {
    "rewrite*", "rewriting", "rephrase*", "paraphrase*", "reword*", "polish*", "proofread*",
    "fix the grammar", "fix grammar", "grammar", "spelling", "typo*", "shorten*",
    "make this shorter", "make it shorter", "make this more", "make it more", "more formal",
    "more professional", "more concise", "friendlier", "simplify this", "edit this", "润色", "改写",
    "改得", "改成", "修改一下", "错别字", "病句", "语法", "缩短", "精简", "通顺"};

constexpr std::string_view kSummary[] = {
    "summar*", "tl;dr", "tldr", "condense", "bullet point*", "总结", "概括", "摘要", "归纳", "提炼"};

constexpr std::string_view kLogic[] = {
    "puzzle*", "riddle*", "brain teaser*", "logic problem*", "liar*", "lying", "tells the truth",
    "tell the truth", "truth-teller*", "knights and knaves", "syllogism*", "谜题", "逻辑题",
    "脑筋急转弯", "说谎", "说真话", "说假话", "真话", "假话", "推理题", "谁是凶手"};

// One of these alone makes a request multi-step.
constexpr std::string_view kStepsStrong[] = {
    "step by step", "step-by-step", "walk me through", "think through", "reason through",
    "reasoning", "pros and cons", "trade-off*", "tradeoff*", "analy*", "compare", "comparison",
    "plan a", "plan an", "plan my", "plan the", "planning", "design a", "design an", "design the",
    "strategy", "strategies", "evaluate", "derive", "justify", "rank the", "prioriti*",
    "troubleshoot*", "diagnose", "root cause", "一步一步", "逐步", "分步", "分析", "比较", "对比",
    "规划", "推理", "推导", "论证", "利弊", "优缺点", "权衡", "设计一个", "设计一套", "策略",
    "评估", "原理"};

// Weaker cues: two of them, or one in a long message.
constexpr std::string_view kStepsWeak[] = {
    "why", "how does", "how do", "how would", "how could", "how can i", "how should", "explain*",
    "what causes", "what would happen", "what if", "difference*", "differ", "should i",
    "which is better", "which one", "better for", "recommend*", "rather than", "instead of", "vs",
    "versus", "impact", "consequence*", "implication*", "best way", "为什么", "为何", "怎么",
    "如何", "解释", "区别", "不同", "应该", "要不要", "哪个更", "哪个好", "而不是", "原因", "影响",
    "怎样", "建议"};

constexpr std::string_view kGreeting[] = {
    "hi", "hello", "hey", "good morning", "good afternoon", "good evening", "good night", "morning",
    "thanks", "thank you", "thx", "bye", "goodbye", "see you", "lol", "haha", "ok", "okay", "cool",
    "great", "nice", "how are you", "what's your name", "what is your name", "who are you",
    "nice to meet you", "talk tomorrow", "你好", "您好", "嗨", "哈喽", "谢谢", "多谢", "感谢",
    "早上好", "早安", "午安", "晚上好", "晚安", "再见", "拜拜", "哈哈", "嗯", "好的", "愉快",
    "你是谁", "你叫什么", "在吗", "辛苦了", "生日快乐", "新年快乐"};

constexpr std::string_view kCreative[] = {
    "poem*", "haiku*", "joke*", "story", "stories", "limerick*", "slogan*", "name for", "a name",
    "tagline*", "lyrics", "诗", "笑话", "故事", "起个名字", "起名", "口号", "歌词", "对联"};

constexpr std::string_view kFactual[] = {
    "capital of", "who wrote", "who is", "who was", "who invented", "who directed", "who founded",
    "when did", "when was", "when is", "where is", "how tall", "how long is", "how old", "how far",
    "how big", "how high", "what year", "boiling point", "population of", "what does", "meaning of",
    "define", "definition of", "synonym*", "antonym*", "首都", "是谁", "是哪", "哪里", "哪一年",
    "什么时候", "多高", "多长", "多大", "多远", "什么意思", "定义", "几点"};

// Quantity questions that, with two or more numbers, make a word problem.
constexpr std::string_view kQuantityQuestions[] = {
    "how many", "how much", "多少", "几", "求"};

// Nouns and verbs that make a request real work even if it also says "summarize".
constexpr std::string_view kCodeTasks[] = {
    "function*", "class", "script*", "program", "code", "implement*", "debug*", "refactor*", "代码",
    "函数", "程序", "脚本"};

// Math functions that look like calls but are not code.
constexpr std::string_view kMathFunctions[] = {
    "sin", "cos", "tan", "log", "ln", "exp", "sqrt", "max", "min", "abs", "lim", "det", "gcd",
    "lcm", "arcsin", "arccos", "arctan"};
// clang-format on

// ---------------------------------------------------------------- structural detectors

// Lines that read as code: definitions, imports, statements ending in ; { }.
bool has_code_line(const std::string& original) {
  size_t start = 0;
  while (start <= original.size()) {
    size_t end = original.find('\n', start);
    if (end == std::string::npos) end = original.size();
    std::string_view line(original.data() + start, end - start);
    while (!line.empty() && is_space(line.front())) line.remove_prefix(1);
    while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
    start = end + 1;
    if (line.empty()) continue;
    const bool opens_block = line.back() == ':' || line.back() == '{';
    for (std::string_view kw : {"def ", "class ", "fn ", "func "}) {
      if (line.starts_with(kw) && (opens_block || line.find('(') != std::string_view::npos))
        return true;
    }
    for (std::string_view kw :
         {"#include", "import ", "return ", "function ", "const ", "let ", "var ", "public ",
          "private ", "console.", "for (", "while (", "if (", "package ", "using namespace"}) {
      if (line.starts_with(kw) && (line.back() == ';' || opens_block || kw == "#include"))
        return true;
    }
    if (line.starts_with("from ") && line.find(" import ") != std::string_view::npos) return true;
    // A statement ends in ';' — but Greek ends a question with one: a line in another script
    // counts only with code's punctuation in it.
    const bool ascii = std::all_of(line.begin(), line.end(),
                                   [](char c) { return static_cast<uint8_t>(c) < 0x80; });
    const bool statement =
        line.back() == ';' && (ascii || line.find_first_of("=()[]") != std::string_view::npos);
    if (line.size() > 1 && (statement || line == "}" || line == "};")) return true;
  }
  return false;
}

// name(…) with a name of two or more characters that is not a math function: print(x),
// s.length(), COUNT(*). One-letter names are f(x), P(A), O(n) — math notation.
bool has_call(const std::string& original) {
  for (size_t i = 1; i < original.size(); ++i) {
    if (original[i] != '(') continue;
    size_t b = i;
    while (b > 0 && (is_alnum(original[b - 1]) || original[b - 1] == '_' || original[b - 1] == '.'))
      --b;
    const std::string_view name(original.data() + b, i - b);
    if (name.size() < 2 || (!is_alpha(name.front()) && name.front() != '_')) continue;
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    if (std::find(std::begin(kMathFunctions), std::end(kMathFunctions), lower) !=
        std::end(kMathFunctions))
      continue;
    return true;
  }
  return false;
}

// CamelCase names ending in Error or Exception (TypeError, NullPointerException).
bool has_error_name(const std::string& original) {
  for (std::string_view suffix : {"Error", "Exception"}) {
    for (size_t pos = original.find(suffix); pos != std::string::npos;
         pos = original.find(suffix, pos + 1)) {
      const size_t end = pos + suffix.size();
      if (pos == 0 || !is_alpha(original[pos - 1])) continue;  // a bare "Error"
      if (end < original.size() && is_alnum(original[end])) continue;
      return true;
    }
  }
  return false;
}

// SQL written the way people write it: SELECT … FROM in capitals.
bool has_sql(const std::string& original) {
  const size_t select = original.find("SELECT ");
  return select != std::string::npos && original.find(" FROM ", select) != std::string::npos;
}

// Regex escapes such as \d \w \s \b followed by a non-letter.
bool has_regex_escape(const std::string& original) {
  for (size_t i = 0; i + 2 < original.size(); ++i) {
    if (original[i] == '\\' &&
        std::string_view("dwsbDWS").find(original[i + 1]) != std::string_view::npos &&
        !is_alpha(original[i + 2]))
      return true;
  }
  return false;
}

std::optional<std::string> detect_code_structure(const Features& f) {
  if (f.original.find("```") != std::string::npos) return "code: code block";
  if (has_code_line(f.original)) return "code: code lines";
  if (has_sql(f.original)) return "code: SQL";
  if (has_error_name(f.original)) return "code: error name";
  if (Match m = first_of(f.lower, kCodeStrongWords)) return "code: " + quoted(m.keyword);
  if (has_call(f.original)) return "code: call f()";
  if (Match m = first_of(f.lower, kCodeOperators)) return "code: operator " + quoted(m.keyword);
  if (has_regex_escape(f.original)) return "code: regex";
  return std::nullopt;
}

// ---------------------------------------------------------------- math

// A UTF-8 operator at s[i]: returns its length, 0 if none. `spaced_only` operators (- / < >)
// count only with spaces on both sides, so that dates (2024-05-01), ratios and tags do not.
size_t operator_at(std::string_view s, size_t i, bool* spaced_only, bool* is_equals) {
  *spaced_only = false;
  *is_equals = false;
  const char c = s[i];
  if (c == '+' || c == '*' || c == '^') return 1;
  if (c == '=') {
    *is_equals = true;
    return 1;
  }
  if (c == '-' || c == '/' || c == '<' || c == '>') {
    *spaced_only = true;
    return 1;
  }
  for (std::string_view op : {"×", "÷", "≤", "≥", "≠", "−"}) {
    if (s.substr(i, op.size()) == op) {
      *is_equals = op == "≤" || op == "≥" || op == "≠";
      return op.size();
    }
  }
  return 0;
}

// An operand end/start: a digit, a bracket, a superscript, or a lone letter (a variable, as
// in 3x or x + y; a letter inside a word is not one).
bool operand_left(std::string_view s, size_t end /* one past */) {
  if (end == 0) return false;
  const char c = s[end - 1];
  if (is_digit(c) || c == ')') return true;
  if (end >= 2 && (s.substr(end - 2, 2) == "\xC2\xB2" || s.substr(end - 2, 2) == "\xC2\xB3"))
    return true;  // ² ³
  return is_alpha(c) && (end < 2 || !is_alpha(s[end - 2]));
}
bool operand_right(std::string_view s, size_t begin) {
  if (begin >= s.size()) return false;
  const char c = s[begin];
  if (is_digit(c) || c == '(') return true;
  return is_alpha(c) && (begin + 1 >= s.size() || !is_alpha(s[begin + 1]));
}

// "arithmetic" or "equation" if the text holds an expression such as 17 * 23, 3x + 7 = 22.
std::optional<std::string> detect_expression(const std::string& s) {
  bool arithmetic = false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool spaced_only = false, is_equals = false;
    const size_t len = operator_at(s, i, &spaced_only, &is_equals);
    if (len == 0) continue;
    size_t l = i, r = i + len;
    const bool space_left = l > 0 && s[l - 1] == ' ';
    const bool space_right = r < s.size() && s[r] == ' ';
    if (space_left) --l;
    if (space_right) ++r;
    if (spaced_only && !(space_left && space_right)) continue;
    if (!operand_left(s, l) || !operand_right(s, r)) continue;
    if (is_equals) return "math: equation";
    arithmetic = true;
    i += len - 1;
  }
  if (arithmetic) return "math: arithmetic";
  return std::nullopt;
}

// Numbers in the text; a date, time or version (2024-05-01, 10:30, 1.2.3) counts once.
int count_numbers(const std::string& s) {
  int n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!is_digit(s[i])) continue;
    ++n;
    while (i + 1 < s.size() && (is_digit(s[i + 1]) || (std::string_view(",.:/-").find(s[i + 1]) !=
                                                           std::string_view::npos &&
                                                       i + 2 < s.size() && is_digit(s[i + 2]))))
      ++i;
  }
  return n;
}

std::optional<std::string> detect_math(const Features& f) {
  if (auto e = detect_expression(f.lower)) return e;
  for (std::string_view latex : {"\\frac", "\\int", "\\sum", "\\sqrt", "\\lim", "\\begin{", "$$",
                                 "\\(", "\\pi", "\\cdot", "\\infty"}) {
    if (f.lower.find(latex) != std::string::npos) return "math: LaTeX";
  }
  for (std::string_view sym : {"∫", "∑", "√", "π", "∞", "∂", "∏", "²", "³", "≈", "∈"}) {
    if (f.lower.find(sym) != std::string::npos) return "math: symbols";
  }
  if (Match m = first_of(f.lower, kMathWords)) return "math: " + quoted(m.keyword);
  // A word problem: two or more numbers and a question about a quantity.
  if (count_numbers(f.lower) >= 2 && (f.questions > 0 || first_of(f.lower, kQuantityQuestions)))
    return "math: word problem";
  return std::nullopt;
}

// ---------------------------------------------------------------- the other families

std::optional<std::string> detect_programming(const Features& f) {
  const int words = count_of(f.lower, kCodeWords);
  if (words >= 2) return "code: programming request";
  if (words == 1 && first_of(f.lower, kCodeVerbs)) return "code: programming request";
  return std::nullopt;
}

// Translation and rewriting count only when they are the request: their keyword comes before
// anything that asks for real work ("write a function that summarizes …" is code).
std::optional<std::string> detect_transformation(const Features& f) {
  const Match translation = first_of(f.lower, kTranslation);
  const Match rewrite = first_of(f.lower, kRewrite);
  const Match summary = first_of(f.lower, kSummary);
  const Match* first = &translation;
  if (rewrite.pos < first->pos) first = &rewrite;
  if (summary.pos < first->pos) first = &summary;
  if (!*first) return std::nullopt;
  const size_t work =
      std::min({first_of(f.lower, kMathWords).pos, first_of(f.lower, kStepsStrong).pos,
                first_of(f.lower, kCodeTasks).pos});
  if (work < first->pos) return std::nullopt;
  if (first == &translation) return "translation";
  if (first == &rewrite) return "rewrite";
  return "summary";
}

std::optional<std::string> detect_logic(const Features& f) {
  if (Match m = first_of(f.lower, kLogic)) return "logic puzzle: " + quoted(m.keyword);
  // Syllogisms: "if all A are B and all B are C …", "如果所有 …".
  const size_t all = f.lower.find("all ");
  if (all != std::string::npos && f.lower.find("all ", all + 4) != std::string::npos &&
      find_keyword(f.lower, "are") != std::string::npos &&
      find_keyword(f.lower, "if") != std::string::npos)
    return "logic puzzle: syllogism";
  if (f.lower.find("如果所有") != std::string::npos) return "logic puzzle: syllogism";
  return std::nullopt;
}

bool is_long(const Features& f, double units) { return f.units() >= units; }

std::optional<std::string> detect_multi_step(const Features& f) {
  if (Match m = first_of(f.lower, kStepsStrong)) return "multi-step: " + quoted(m.keyword);
  if (f.questions >= 2) return "multi-step: several questions";
  const Match weak = first_of(f.lower, kStepsWeak);
  if (!weak) return std::nullopt;
  if (count_of(f.lower, kStepsWeak) >= 2)
    return "multi-step: " + quoted(weak.keyword) + " and more";
  if (is_long(f, 20)) return "multi-step: " + quoted(weak.keyword) + " in a long request";
  return std::nullopt;
}

std::optional<std::string> detect_no_think(const Features& f) {
  if (is_long(f, 15)) return std::nullopt;  // a long message is more than small talk
  if (f.lower.empty()) return "chat: empty";
  if (first_of(f.lower, kGreeting)) return "chat: greeting";
  if (first_of(f.lower, kCreative)) return "creative: short writing";
  if (first_of(f.lower, kFactual)) return "short factual";
  return std::nullopt;
}

// ---------------------------------------------------------------- beyond English and Chinese

// The keyword rules are written in English and Chinese. Text in another language (or script)
// goes to the classifier, after the rules that read structure rather than words.
// Common English words, and common words of the other Latin-script languages that English does
// not share ("a", "in", "is", "die", "was", "per", "come" are left out of both). ASCII text is
// read as English unless the second list says otherwise.
constexpr std::string_view kEnglishWords[] = {
    "the",   "are",    "were", "what",   "whats",  "how",  "why",  "who",   "when",
    "where", "which",  "im",   "you",    "your",   "my",   "we",   "it",    "its",
    "this",  "that",   "of",   "for",    "with",   "and",  "but",  "can",   "could",
    "would", "should", "does", "did",    "please", "give", "tell", "write", "make",
    "hi",    "hello",  "hey",  "thanks", "thank",  "ok",   "okay", "yes",   "if",
    "from",  "about",  "have", "has",    "there",  "been", "into", "me"};
constexpr std::string_view kOtherLatinWords[] = {
    // French, Spanish, Portuguese, Italian
    "le", "la", "les", "des", "du", "et", "est", "je", "tu", "pas", "que", "qui", "pour", "avec",
    "une", "un", "dans", "sur", "mon", "moi", "comment", "pourquoi", "quel", "quelle", "peux", "el",
    "los", "las", "es", "por", "para", "con", "una", "como", "mi", "cual", "dame", "puedes", "os",
    "uma", "um", "nao", "voce", "qual", "meu", "minha", "pra", "il", "gli", "della", "di", "che",
    "sono", "perche", "quanto", "quanti",
    // German, Dutch, Swedish
    "der", "das", "und", "ist", "ich", "nicht", "wie", "warum", "mit", "ein", "eine", "mir",
    "bitte", "kann", "de", "het", "een", "van", "en", "ik", "niet", "wat", "waarom", "voor", "zijn",
    "je", "och", "att", "det", "som", "med", "inte", "jag", "hur", "vad",
    // Polish, Turkish, Indonesian
    "na", "nie", "jak", "jest", "czy", "dla", "ve", "bir", "bu", "icin", "ile", "ne", "nasil",
    "kac", "neden", "yang", "dan", "ini", "itu", "untuk", "dengan", "tidak", "apa", "saya", "bisa",
    "ke", "dari", "ada", "berapa", "bagaimana", "tolong"};

bool rules_read_language(const Features& f) {
  if (f.kana_hangul > 0) return false;  // Japanese or Korean, even with kanji / hanja in it
  if (f.cjk > 0) return true;           // Chinese, or Chinese with English in it
  if (f.other_letters * 10 > f.words * 3) return false;  // another script, or many accents
  // The language shows in the first few sentences; a long paste need not be read for it.
  const std::string head =
      f.lower.substr(0, utf8_floor(f.lower, std::min<size_t>(f.lower.size(), 400)));
  const int english = count_of(head, kEnglishWords);
  const int other = count_of(head, kOtherLatinWords);
  return other == 0 || english > other;
}

// The classifier's score: above 0, thinking (the weights were trained for 0 as the boundary).
double classifier_score(std::string_view text) {
  double z = 0;
  for (const AutoFeature& x : extract_auto_features(text)) z += kAutoModeWeights[x.index] * x.value;
  return z;
}

std::string score_reason(double z) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "classifier: %.2f", 1.0 / (1.0 + std::exp(-z)));
  return buf;
}

// Words that close an exchange or open a new one rather than continue it: after a reasoning
// turn, "thanks!" or "hello!" needs no more reasoning, "why?" does. (English and Chinese small
// talk is the rules' kGreeting; these cover the other languages too.)
constexpr std::string_view kClosings[] = {
    "bonjour",   "salut",        "hola",      "olá",          "oi",     "ciao",       "hallo",
    "hoi",       "hej",          "привет",    "здравствуйте", "привіт", "cześć",      "merhaba",
    "selam",     "xin chào",     "halo",      "こんにちは",   "안녕",   "สวัสดี",       "नमस्ते",
    "নমস্কার",    "مرحبا",        "السلام",    "שלום",         "سلام",   "γεια",       "thanks",
    "thank you", "thx",          "ty",        "ok",           "okay",   "great",      "cool",
    "perfect",   "got it",       "bye",       "谢谢",         "多谢",   "好的",       "明白了",
    "再见",      "merci",        "gracias",   "obrigad*",     "grazie", "danke",      "bedankt",
    "dank je",   "спасибо",      "дякую",     "dziękuję",     "dzieki", "teşekkür*",  "sağol",
    "cảm ơn",    "terima kasih", "makasih",   "ありがとう",   "了解",   "감사합니다", "고마워",
    "ขอบคุณ",     "धन्यवाद",       "शुक्रिया",    "ধন্যবাদ",       "شكرا",   "תודה",       "ممنون",
    "مرسی",      "سپاس",         "ευχαριστώ", "ευχαριστω",    "tack"};

// `text` with every letter lowercased, not only ASCII ones: the closing words and system-prompt
// cues below are matched on it, so "Спасибо!" and "Étape par étape" count.
std::string unicode_lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // an invalid byte: kept as it is
      out += static_cast<char>(*p);
      ++p, --left;
      continue;
    }
    uint8_t buf[4];
    const auto len = utf8proc_encode_char(utf8proc_tolower(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(len));
    p += n, left -= n;
  }
  return out;
}

// A system prompt that tells how to answer: "think step by step" or "answer directly".
constexpr std::string_view kSystemThink[] = {"step by step",
                                             "think carefully",
                                             "reason carefully",
                                             "think through",
                                             "show your reasoning",
                                             "一步一步",
                                             "逐步",
                                             "仔细思考",
                                             "认真思考",
                                             "pas à pas",
                                             "étape par étape",
                                             "paso a paso",
                                             "passo a passo",
                                             "schritt für schritt",
                                             "шаг за шагом",
                                             "段階的に",
                                             "ステップバイステップ",
                                             "단계별로"};
// Only explicit instructions about thinking: "be concise" or "answer briefly" is about the
// answer's length, and a concise answer to a proof still needs the proof worked out.
constexpr std::string_view kSystemNoThink[] = {
    "answer directly", "answer immediately", "without explanation", "no reasoning",
    "do not think",    "don't think",        "without thinking",    "直接回答",
    "不要思考",        "不要推理",           "réponds directement", "responde directamente",
    "antworte direkt", "отвечай сразу",      "не рассуждай",        "すぐに答え",
    "考えずに"};

std::optional<AutoDecision> system_cue(std::string_view system) {
  if (system.empty()) return std::nullopt;
  const std::string lower = unicode_lower(bounded_head(system));
  if (Match m = first_of(lower, kSystemNoThink))
    return AutoDecision{false, "system prompt: " + quoted(m.keyword)};
  if (Match m = first_of(lower, kSystemThink))
    return AutoDecision{true, "system prompt: " + quoted(m.keyword)};
  return std::nullopt;
}

// A short follow-up: a few words, or a short clause in a script without spaces.
bool is_follow_up(const Features& f) {
  return f.units() < 8 && f.original.size() < 60 && !first_of(unicode_lower(f.original), kClosings);
}

}  // namespace

bool is_short_follow_up(std::string_view text) { return is_follow_up(extract(text)); }

AutoDecision classify_for_thinking(std::string_view latest_user_text, const AutoContext& context) {
  if (auto cue = system_cue(context.system_text)) return std::move(*cue);
  const Features f = extract(latest_user_text);
  // Structure reads the same in every language: code, and math written as math.
  if (auto r = detect_code_structure(f)) return {true, std::move(*r)};
  const bool keyword_rules = rules_read_language(f);
  if (keyword_rules) {
    if (auto r = detect_transformation(f)) return {false, std::move(*r)};
    if (auto r = detect_math(f)) return {true, std::move(*r)};
    if (auto r = detect_programming(f)) return {true, std::move(*r)};
    if (auto r = detect_logic(f)) return {true, std::move(*r)};
    if (auto r = detect_multi_step(f)) return {true, std::move(*r)};
  } else if (auto r = detect_expression(f.lower)) {
    return {true, std::move(*r)};
  }
  // Small talk stays small talk after a reasoning turn ("hi there, how are you?").
  if (keyword_rules)
    if (auto r = detect_no_think(f)) return {false, std::move(*r)};
  if (context.follows_reasoning && is_follow_up(f)) return {true, "follow-up to a reasoning turn"};
  // Tool use needs planning: a longer request with tools offered thinks.
  if (context.has_tools && is_long(f, 20)) return {true, "long request with tools"};
  const double z = classifier_score(latest_user_text);
  return {z > 0, score_reason(z)};
}

}  // namespace duet
