// Global functions: range, namespace, raise_exception, strftime_now.
#include <cstdio>
#include <ctime>

#include "text/template/jinja/interpreter.h"

namespace duet::jinja {
namespace {

Result<Value> range(Interpreter& in, const Args& args, Pos pos) {
  if (!args.keyword.empty() || args.positional.empty() || args.positional.size() > 3)
    return in.error(pos, "range() takes 1 to 3 integers");
  int64_t v[3] = {0, 0, 1};
  for (size_t i = 0; i < args.positional.size(); ++i) {
    const Value& a = args.positional[i];
    if (a.kind() != Kind::kInt)
      return in.error(pos, std::string("range() needs integers, not ") + type_name(a));
    v[i] = a.as_int();
  }
  int64_t start = 0, stop = v[0], step = 1;
  if (args.positional.size() >= 2) {
    start = v[0];
    stop = v[1];
  }
  if (args.positional.size() == 3) step = v[2];
  if (step == 0) return in.error(pos, "range() step must not be zero");
  // The length first, paid for before anything is allocated.
  const __int128 span =
      step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  const __int128 abs_step = step > 0 ? step : -static_cast<__int128>(step);
  const __int128 n128 = span <= 0 ? 0 : (span + abs_step - 1) / abs_step;
  const uint64_t n =
      n128 > static_cast<__int128>(UINT64_MAX / 2) ? UINT64_MAX / 2 : static_cast<uint64_t>(n128);
  if (n > in.limits().max_steps)
    return in.error(pos, "range() of " + std::to_string(n) + " numbers is too long");
  DUET_TRY(in.charge(n));
  std::vector<Value> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i)
    out.push_back(Value::integer(start + static_cast<int64_t>(i) * step));
  return in.new_list(std::move(out), pos);
}

Result<Value> make_namespace(Interpreter& in, const Args& args, Pos pos) {
  auto ns = std::make_shared<Namespace>();
  if (args.positional.size() > 1)
    return in.error(pos, "namespace() takes at most one positional argument");
  if (args.positional.size() == 1) {
    const Value& src = args.positional[0];
    if (src.kind() != Kind::kDict)
      return in.error(pos, "namespace() takes a dict or keyword arguments");
    for (const auto& [k, v] : src.dict().entries()) ns->attrs.set(k, v);
  }
  for (const auto& [k, v] : args.keyword) ns->attrs.set(k, v);
  DUET_TRY(in.charge(ns->attrs.size()));
  return Value::ns(std::move(ns));
}

// Days since 1970-01-01 for a civil date (Howard Hinnant's algorithm), for the weekday.
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

std::string two(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d", v);
  return buf;
}

// Python's strftime for the directives chat templates use; others are kept as written.
std::string format_time(const DateTime& t, const std::string& fmt) {
  static const char* kMonths[] = {"January",   "February", "March",    "April",
                                  "May",       "June",     "July",     "August",
                                  "September", "October",  "November", "December"};
  static const char* kDays[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                "Friday", "Saturday", "Sunday"};
  const int month = t.month >= 1 && t.month <= 12 ? t.month : 1;
  const int64_t days = days_from_civil(t.year, month, t.day);
  const int weekday = static_cast<int>(((days % 7) + 7 + 3) % 7);  // 1970-01-01 was a Thursday
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 == fmt.size()) {
      out += fmt[i];
      continue;
    }
    const char d = fmt[++i];
    switch (d) {
      case 'Y':
        out += std::to_string(t.year);
        break;
      case 'y':
        out += two(((t.year % 100) + 100) % 100);
        break;
      case 'm':
        out += two(month);
        break;
      case 'd':
        out += two(t.day);
        break;
      case 'e':
        out += (t.day < 10 ? " " : "") + std::to_string(t.day);
        break;
      case 'B':
        out += kMonths[month - 1];
        break;
      case 'b':
        out += std::string(kMonths[month - 1]).substr(0, 3);
        break;
      case 'A':
        out += kDays[weekday];
        break;
      case 'a':
        out += std::string(kDays[weekday]).substr(0, 3);
        break;
      case 'H':
        out += two(t.hour);
        break;
      case 'I':
        out += two(t.hour % 12 == 0 ? 12 : t.hour % 12);
        break;
      case 'p':
        out += t.hour < 12 ? "AM" : "PM";
        break;
      case 'M':
        out += two(t.minute);
        break;
      case 'S':
        out += two(t.second);
        break;
      case 'j': {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%03d",
                      static_cast<int>(days - days_from_civil(t.year, 1, 1) + 1));
        out += buf;
        break;
      }
      case '%':
        out += '%';
        break;
      default:
        out += '%';
        out += d;
    }
  }
  return out;
}

DateTime local_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  return DateTime{tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
}

}  // namespace

bool is_global_function(std::string_view name) {
  return name == "range" || name == "namespace" || name == "raise_exception" ||
         name == "strftime_now";
}

Result<Value> call_global(Interpreter& in, const std::string& name, const Args& args, Pos pos) {
  if (name == "range") return range(in, args, pos);
  if (name == "namespace") return make_namespace(in, args, pos);
  if (name == "raise_exception") {
    const Value* msg = args.get(0, "message");
    std::string text = "raise_exception() called";
    if (msg) {
      JINJA_ASSIGN(text, in.display_of(*msg, pos));
    }
    return in.error(pos, "template raised an error: " + text);
  }
  if (name == "strftime_now") {
    const Value* fmt = args.get(0, "format");
    if (!fmt || !fmt->is_string()) return in.error(pos, "strftime_now() needs a format string");
    DUET_TRY(in.charge_string(fmt->str().size() * 9));  // %B is the longest expansion
    return Value::string(format_time(in.now() ? *in.now() : local_now(), fmt->str()));
  }
  return in.error(pos, "unknown function '" + name + "'");
}

}  // namespace duet::jinja
