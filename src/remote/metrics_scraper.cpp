#include "remote/metrics_scraper.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "remote/remote_errors.hpp"

namespace infermark::remote {
namespace {

constexpr double kAbsent = std::numeric_limits<double>::quiet_NaN();

}  // namespace

MetricsScraper::MetricsScraper(const std::string& url, double interval_s, std::size_t max_series)
    : interval_s_(interval_s), max_series_(max_series) {
  if (!(interval_s > 0)) throw Error("--scrape-interval-s: must be above 0");
  auto endpoint = net::parse_http_url(url, "--scrape");
  url_ = endpoint.url;
  path_ = endpoint.prefix.empty() ? "/metrics" : endpoint.prefix;  // the whole path is the endpoint's
  endpoint.prefix.clear();
  net::ClientOptions options;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::max(1.0, interval_s) * 1000));
  client_ = std::make_unique<net::HttpClient>(endpoint, options);
}

MetricsScraper::~MetricsScraper() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void MetricsScraper::start() {
  scrape_once();
  thread_ = std::thread([this] { loop(); });
}

void MetricsScraper::loop() {
  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(interval_s_ * 1e9));
  auto next = std::chrono::steady_clock::now() + period;
  while (!stopping_) {
    while (!stopping_ && std::chrono::steady_clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (stopping_) break;
    scrape_once();
    next += period;
  }
}

void MetricsScraper::scrape_once() {
  const auto response = client_->send_and_wait({boost::beast::http::verb::get, path_, {}, {}});
  std::lock_guard lock(mutex_);
  const auto now = mono_now_ns();  // under the lock: times stay in order when mark() and the loop overlap
  if (response.error != net::TransportError::kNone || response.status != 200) {
    ++failures_;
    last_failure_ =
        response.error != net::TransportError::kNone ? response.error_text : http_error_text(response.status, response.body);
    return;
  }
  const auto index = times_ns_.size();
  times_ns_.push_back(now);
  for (const auto& sample : parse_prometheus_text(response.body, server_metric_prefixes())) {
    auto found = series_.find(sample.series);
    if (found == series_.end()) {
      if (series_.size() >= max_series_) {
        truncated_ = true;
        continue;
      }
      found = series_.emplace(sample.series, std::vector<double>(index, kAbsent)).first;
    }
    found->second.resize(index, kAbsent);
    found->second.push_back(sample.value);
  }
  for (auto& [_, values] : series_) values.resize(index + 1, kAbsent);
}

nlohmann::json MetricsScraper::finish(std::int64_t measured_from_ns, const std::string& model) {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  scrape_once();
  std::lock_guard lock(mutex_);
  using nlohmann::json;
  json out{{"interval_s", interval_s_}, {"scrapes", times_ns_.size()}, {"failures", failures_}, {"truncated", truncated_}};
  if (!last_failure_.empty()) out["last_failure"] = last_failure_;
  if (times_ns_.empty()) return out;
  // The change of each series over the measurement: from the last scrape at or before its start.
  std::size_t from = 0;
  for (std::size_t i = 0; i < times_ns_.size(); ++i)
    if (times_ns_[i] <= measured_from_ns) from = i;
  json times = json::array();
  for (auto t : times_ns_) times.push_back(static_cast<double>(t - measured_from_ns) * 1e-9);
  out["t_s"] = times;  // seconds from the measurement's start (warm-up before 0)
  json series = json::object();
  std::map<std::string, double> model_change;  // per metric name, summed over the model's series
  const auto model_label = "model=\"" + model + "\"";
  for (const auto& [name, values] : series_) {
    std::optional<double> first, last;
    for (std::size_t i = from; i < values.size(); ++i)
      if (!std::isnan(values[i])) {
        if (!first) first = values[i];
        last = values[i];
      }
    json entry{{"values", values}};  // NaN (absent at that scrape) is written as null
    if (first && last) {
      entry["first"] = *first;
      entry["last"] = *last;
      entry["change"] = *last - *first;
      if (name.find(model_label) != std::string::npos) model_change[name.substr(0, name.find('{'))] += *last - *first;
    }
    series[name] = std::move(entry);
  }
  out["series"] = std::move(series);
  const auto requests = model_change["nv_inference_request_success"];
  if (requests > 0)
    out["kserve_split"] = {{"requests", requests},
                           {"queue_us_per_request", model_change["nv_inference_queue_duration_us"] / requests},
                           {"compute_us_per_request", model_change["nv_inference_compute_infer_duration_us"] / requests},
                           {"request_us_per_request", model_change["nv_inference_request_duration_us"] / requests}};
  return out;
}

}  // namespace infermark::remote
