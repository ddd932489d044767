#include "loadgen/trace.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include <fmt/core.h>

#include "core/error.hpp"
#include "core/named_enum.hpp"

namespace infermark::loadgen {
namespace {

using nlohmann::json;

constexpr NamedValue<TraceFormat> kFormats[] = {
    {TraceFormat::kMooncake, "mooncake"}, {TraceFormat::kAzure, "azure"}, {TraceFormat::kBurstGpt, "burstgpt"}};

constexpr int kMooncakeBlockTokens = 512;  // Mooncake's published traces hash 512-token blocks

std::string where_of(const std::string& file, int line) { return file + ":" + std::to_string(line); }

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n\"");
  if (first == std::string_view::npos) return "";
  const auto last = text.find_last_not_of(" \t\r\n\"");
  return std::string(text.substr(first, last - first + 1));
}

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Comma-separated fields; a field in double quotes may hold commas ("" is a quote inside one).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  for (auto& f : fields) f = trimmed(f);
  return fields;
}

double number_in(const std::string& text, const std::string& where, std::string_view field) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value))
    throw Error(fmt::format("{}: {}: '{}' is not a number", where, field, text));
  return value;
}

int token_count_in(const std::string& text, const std::string& where, std::string_view field) {
  const double value = number_in(text, where, field);
  if (value < 0 || value != std::floor(value) || value > 1e9)
    throw Error(fmt::format("{}: {}: '{}' is not a token count (a whole number of at least 0)", where, field, text));
  return static_cast<int>(value);
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// Seconds of "YYYY-MM-DD HH:MM:SS[.fraction]" (a 'T' may stand for the space; a zone suffix is
// ignored: a trace's rows share one). A plain number is taken as seconds.
double seconds_of_date_time(const std::string& text, const std::string& where, std::string_view field) {
  if (text.find('-') == std::string::npos || text.size() < 19) return number_in(text, where, field);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char sep = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d", &y, &mo, &d, &sep, &h, &mi, &s) != 7 || (sep != ' ' && sep != 'T') ||
      mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
    throw Error(fmt::format("{}: {}: '{}' is not a date and time (YYYY-MM-DD HH:MM:SS[.fraction])", where, field, text));
  double fraction = 0;
  if (text.size() > 19 && text[19] == '.') {
    double scale = 0.1;
    for (std::size_t i = 20; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, scale /= 10)
      fraction += (text[i] - '0') * scale;
  }
  const auto days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return static_cast<double>(days * 86400 + h * 3600 + mi * 60 + s) + fraction;
}

// Index of the header column named (case and spaces aside) any of `names`; throws naming the file.
std::size_t column(const std::vector<std::string>& header, std::initializer_list<std::string_view> names, const std::string& file,
                   std::string_view format) {
  for (std::size_t i = 0; i < header.size(); ++i)
    for (const auto name : names)
      if (lower(header[i]) == lower(std::string(name))) return i;
  throw Error(fmt::format("{}: the header has no column '{}' (the {} format's header has it)", file, *names.begin(), format));
}

// Reads a CSV trace whose header names the time, input and output columns. `seconds_of` turns a
// time field into seconds.
template <typename SecondsOf>
Trace parse_csv(std::istream& in, const std::string& file, TraceFormat format, std::initializer_list<std::string_view> time,
                std::initializer_list<std::string_view> input, std::initializer_list<std::string_view> output,
                SecondsOf seconds_of) {
  Trace trace;
  trace.format = format;
  trace.file = file;
  std::string line;
  int number = 0;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    ++number;
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    if (!trimmed(line).empty()) header = csv_fields(line);
  }
  if (header.empty()) throw Error(file + ": empty (expected a header line and one row per request)");
  const auto name = name_of(format);
  const auto t = column(header, time, file, name), i = column(header, input, file, name), o = column(header, output, file, name);
  const auto needed = std::max({t, i, o}) + 1;
  while (std::getline(in, line)) {
    ++number;
    if (trimmed(line).empty()) continue;
    const auto where = where_of(file, number);
    const auto fields = csv_fields(line);
    if (fields.size() < needed)
      throw Error(fmt::format("{}: {} fields, the header names {}", where, fields.size(), header.size()));
    TraceRequest request;
    const double at_s = seconds_of(fields[t], where, header[t]);
    request.input_tokens = token_count_in(fields[i], where, header[i]);
    request.output_tokens = token_count_in(fields[o], where, header[o]);
    if (request.input_tokens == 0 || request.output_tokens == 0) {
      ++trace.rows_skipped;
      continue;
    }
    request.arrival_s = at_s;
    trace.requests.push_back(request);
  }
  return trace;
}

std::int64_t integer_field(const json& j, const char* key, const std::string& where, bool required) {
  if (!j.contains(key)) {
    if (required) throw Error(fmt::format("{}: {}: missing", where, key));
    return 0;
  }
  const auto& v = j[key];
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>()))
    throw Error(fmt::format("{}: {}: {} is not a whole number of at least 0", where, key, v.dump()));
  return v.get<std::int64_t>();
}

// Which format a file is: Mooncake for JSON lines, else the CSV header's columns decide.
TraceFormat detect_format(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line) && trimmed(line).empty()) {}
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  const auto first = trimmed(line);
  if (!first.empty() && first.front() == '{') return TraceFormat::kMooncake;
  const auto header = lower(first);
  if (header.find("contexttokens") != std::string::npos) return TraceFormat::kAzure;
  if (header.find("request tokens") != std::string::npos) return TraceFormat::kBurstGpt;
  throw Error(file +
              ": not a trace format infermark knows (Mooncake JSON lines, an Azure CSV with ContextTokens, a BurstGPT "
              "CSV with Request tokens); name it with --trace-format " +
              choices_in(kFormats));
}

// Sorted by arrival (stable), the first at 0 s, cut to the first `max_requests`.
void normalise(Trace& trace, std::uint64_t max_requests) {
  if (trace.requests.empty())
    throw Error(trace.file + ": no requests with input and output tokens" +
                (trace.rows_skipped ? fmt::format(" ({} rows had none)", trace.rows_skipped) : std::string()));
  std::stable_sort(trace.requests.begin(), trace.requests.end(),
                   [](const TraceRequest& a, const TraceRequest& b) { return a.arrival_s < b.arrival_s; });
  if (max_requests > 0 && trace.requests.size() > max_requests) trace.requests.resize(max_requests);
  const double first = trace.requests.front().arrival_s;
  for (auto& r : trace.requests) r.arrival_s -= first;
}

std::string cache_key(const TraceReplay& replay) {
  return fmt::format("{}|{}|{}", replay.file, replay.format ? std::string(name_of(*replay.format)) : "auto", replay.max_requests);
}

}  // namespace

std::string_view name_of(TraceFormat format) { return name_in(kFormats, format); }
std::vector<std::pair<std::string, TraceFormat>> trace_format_names() { return names_in(kFormats); }

std::optional<TraceFormat> parse_trace_format(const std::string& text, const std::string& flag) {
  if (text.empty() || text == "auto") return std::nullopt;
  return parse_in(kFormats, text, flag);
}

Trace parse_mooncake(std::istream& in, const std::string& file) {
  Trace trace;
  trace.format = TraceFormat::kMooncake;
  trace.file = file;
  trace.block_tokens = kMooncakeBlockTokens;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (trimmed(line).empty()) continue;
    const auto where = where_of(file, number);
    const auto j = json::parse(line, nullptr, false);
    if (!j.is_object()) throw Error(where + ": not a JSON object (a Mooncake trace has one request per line)");
    if (!j.contains("timestamp") || !j["timestamp"].is_number() || j["timestamp"].get<double>() < 0)
      throw Error(where + ": timestamp: missing or not a number of milliseconds of at least 0");
    TraceRequest request;
    request.arrival_s = j["timestamp"].get<double>() * 1e-3;
    request.input_tokens = static_cast<int>(integer_field(j, "input_length", where, true));
    request.output_tokens = static_cast<int>(integer_field(j, "output_length", where, true));
    if (j.contains("hash_ids")) {
      if (!j["hash_ids"].is_array()) throw Error(where + ": hash_ids: not a list of block hashes");
      for (const auto& id : j["hash_ids"]) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0)
          throw Error(where + ": hash_ids: " + id.dump() + " is not a block hash (a whole number of at least 0)");
        request.blocks.push_back(id.get<std::uint64_t>());
      }
      const auto covered = static_cast<std::int64_t>(request.blocks.size()) * kMooncakeBlockTokens;
      if (!request.blocks.empty() && (covered < request.input_tokens || covered - kMooncakeBlockTokens >= request.input_tokens))
        throw Error(fmt::format("{}: hash_ids: {} blocks of {} tokens do not cover input_length {} (expected {})", where,
                                request.blocks.size(), kMooncakeBlockTokens, request.input_tokens,
                                (request.input_tokens + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens));
    }
    if (request.input_tokens == 0 || request.output_tokens == 0) {
      ++trace.rows_skipped;
      continue;
    }
    trace.requests.push_back(std::move(request));
  }
  return trace;
}

Trace parse_azure(std::istream& in, const std::string& file) {
  return parse_csv(in, file, TraceFormat::kAzure, {"TIMESTAMP"}, {"ContextTokens"}, {"GeneratedTokens"}, seconds_of_date_time);
}

Trace parse_burstgpt(std::istream& in, const std::string& file) {
  return parse_csv(in, file, TraceFormat::kBurstGpt, {"Timestamp"}, {"Request tokens"}, {"Response tokens"},
                   [](const std::string& text, const std::string& where, std::string_view field) {
                     const double s = number_in(text, where, field);
                     if (s < 0) throw Error(fmt::format("{}: {}: {} is before the trace's start", where, field, text));
                     return s;
                   });
}

std::shared_ptr<const Trace> load_trace(const TraceReplay& replay) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Trace>> loaded;
  const std::lock_guard lock(mutex);
  const auto key = cache_key(replay);
  if (const auto found = loaded.find(key); found != loaded.end()) return found->second;
  if (!std::filesystem::is_regular_file(replay.file)) throw Error("--trace " + replay.file + ": no such file");
  const auto format = replay.format ? *replay.format : detect_format(replay.file);
  std::ifstream in(replay.file);
  if (!in) throw Error("--trace " + replay.file + ": cannot read it");
  auto trace = format == TraceFormat::kMooncake ? parse_mooncake(in, replay.file)
               : format == TraceFormat::kAzure  ? parse_azure(in, replay.file)
                                                : parse_burstgpt(in, replay.file);
  normalise(trace, replay.max_requests);
  auto shared = std::make_shared<const Trace>(std::move(trace));
  loaded[key] = shared;
  return shared;
}

std::vector<std::int64_t> replay_arrivals_ns(const Trace& trace, double speed) {
  if (!(speed > 0)) throw Error("--trace-speed must be above 0");
  std::vector<std::int64_t> arrivals;
  arrivals.reserve(trace.requests.size());
  for (const auto& r : trace.requests) arrivals.push_back(static_cast<std::int64_t>(std::llround(r.arrival_s / speed * 1e9)));
  return arrivals;
}

TraceSummary summarize(const Trace& trace, double speed) {
  TraceSummary s;
  s.file = std::filesystem::path(trace.file).filename().string();
  s.format = trace.format;
  s.requests = trace.requests.size();
  s.rows_skipped = trace.rows_skipped;
  s.recorded_span_s = trace.requests.empty() ? 0.0 : trace.requests.back().arrival_s;
  s.speed = speed;
  s.replayed_span_s = s.recorded_span_s / speed;
  s.mean_rate_rps = s.replayed_span_s > 0 ? static_cast<double>(s.requests) / s.replayed_span_s : 0.0;
  s.block_tokens = trace.block_tokens;
  std::set<std::uint64_t> seen;
  std::uint64_t blocks = 0, reused = 0;
  for (const auto& r : trace.requests) {
    s.mean_input_tokens += r.input_tokens;
    s.mean_output_tokens += r.output_tokens;
    s.max_input_tokens = std::max(s.max_input_tokens, r.input_tokens);
    s.max_output_tokens = std::max(s.max_output_tokens, r.output_tokens);
    for (const auto block : r.blocks) {
      ++blocks;
      reused += seen.insert(block).second ? 0 : 1;
    }
  }
  if (s.requests > 0) {
    s.mean_input_tokens /= static_cast<double>(s.requests);
    s.mean_output_tokens /= static_cast<double>(s.requests);
  }
  if (blocks > 0) s.block_reuse_share = static_cast<double>(reused) / static_cast<double>(blocks);
  return s;
}

json to_json(const TraceSummary& s) {
  json j{{"file", s.file},
         {"format", name_of(s.format)},
         {"requests", s.requests},
         {"rows_skipped", s.rows_skipped},
         {"recorded_span_s", s.recorded_span_s},
         {"speed", s.speed},
         {"replayed_span_s", s.replayed_span_s},
         {"mean_rate_rps", s.mean_rate_rps},
         {"mean_input_tokens", s.mean_input_tokens},
         {"mean_output_tokens", s.mean_output_tokens},
         {"max_input_tokens", s.max_input_tokens},
         {"max_output_tokens", s.max_output_tokens},
         {"block_tokens", s.block_tokens},
         {"requests_shortened", s.requests_shortened}};
  j["block_reuse_share"] = s.block_reuse_share ? json(*s.block_reuse_share) : json(nullptr);
  return j;
}

TraceSummary trace_summary_from(const json& j, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": not an object");
  TraceSummary s;
  try {
    s.file = j.at("file").get<std::string>();
    s.format = parse_in(kFormats, j.at("format").get<std::string>(), where + ".format");
    s.requests = j.at("requests").get<std::uint64_t>();
    s.rows_skipped = j.value("rows_skipped", std::uint64_t{0});
    s.recorded_span_s = j.at("recorded_span_s").get<double>();
    s.speed = j.at("speed").get<double>();
    s.replayed_span_s = j.at("replayed_span_s").get<double>();
    s.mean_rate_rps = j.at("mean_rate_rps").get<double>();
    s.mean_input_tokens = j.at("mean_input_tokens").get<double>();
    s.mean_output_tokens = j.at("mean_output_tokens").get<double>();
    s.max_input_tokens = j.value("max_input_tokens", 0);
    s.max_output_tokens = j.value("max_output_tokens", 0);
    s.block_tokens = j.value("block_tokens", 0);
    s.requests_shortened = j.value("requests_shortened", std::uint64_t{0});
    if (j.contains("block_reuse_share") && !j["block_reuse_share"].is_null())
      s.block_reuse_share = j["block_reuse_share"].get<double>();
  } catch (const json::exception& e) {
    throw Error(where + ": " + e.what());
  }
  return s;
}

std::uint64_t block_stream_seed(std::uint64_t seed, std::uint64_t block_hash) {
  return seed ^ (0x424C4F434B000000ull + block_hash * 0x9E3779B97F4A7C15ull);
}

FirstBlockGroups first_block_groups(const Trace& trace) {
  FirstBlockGroups grouped;
  std::map<std::uint64_t, std::uint32_t> group_of_block;
  for (const auto& request : trace.requests) {
    if (request.blocks.empty()) {
      grouped.of_request.emplace_back();
      continue;
    }
    const auto [at, added] = group_of_block.emplace(request.blocks.front(), grouped.groups);
    grouped.groups += added ? 1 : 0;
    grouped.of_request.emplace_back(at->second);
  }
  return grouped;
}

std::uint64_t request_stream_seed(std::uint64_t seed, std::uint64_t request_index) {
  return seed ^ (0x5245515545535400ull + (request_index + 1) * 0xD1B54A32D192ED03ull);
}

}  // namespace infermark::loadgen
