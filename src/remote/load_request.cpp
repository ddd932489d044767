#include "remote/load_request.hpp"

#include "core/error.hpp"

namespace infermark::remote {

void check_remote_request(const RemoteRequest& request, const RequestFieldNames& names) {
  if (request.io_threads < 1) throw Error(names.io_threads + ": at least 1");
  if (!(request.timeout_s > 0)) throw Error(names.timeout + ": must be above 0");
  if (request.protocol != RemoteProtocol::kKServeGrpc) net::parse_http_url(request.url, names.url);
  const bool kserve = request.protocol == RemoteProtocol::kKServe || request.protocol == RemoteProtocol::kKServeGrpc;
  if (kserve && request.model.empty())
    throw Error(names.model + ": name the model to load (its metadata at /v2/models/MODEL gives the inputs)");
  if (!request.tokenizer.empty() && request.protocol != RemoteProtocol::kOpenAi)
    throw Error("--tokenizer: counts an LLM server's output tokens, for --protocol openai only");
}

net::HttpHeader header_of(const std::string& text) {
  auto [name, value] = harness::split_assignment(text, "--header");
  return {name, value};
}

nlohmann::json body_fields_of(const std::vector<std::string>& fields) {
  auto extra = nlohmann::json::object();
  for (const auto& field : fields) {
    auto [key, text] = harness::split_assignment(field, "--body-field");
    auto value = nlohmann::json::parse(text, nullptr, false);
    if (value.is_discarded()) value = text;
    extra[key] = value;
  }
  return extra;
}

result::CellRequest load_cell(const harness::RunOptions& options, int level) {
  auto cell = harness::to_cell(options, "remote", 0, level);
  auto& scenario = cell.scenario;
  if (scenario.name == loadgen::Scenario::kSingleStream && scenario.concurrency > 1)
    scenario.name = loadgen::Scenario::kConcurrency;
  if (level == 0 && loadgen::is_open_loop(scenario)) scenario.concurrency = kDefaultOpenLoopInFlight;
  cell.isolation = "in-process (the server runs elsewhere)";
  return cell;
}

nlohmann::json server_cell_remote(const std::string& url, const std::string& protocol, const std::string& model,
                                  const std::string& origin, const result::CellRequest& cell) {
  const nlohmann::json remote{{"url", url}, {"protocol", protocol}, {"model", model}};
  auto probe = cell;
  probe.remote = remote;
  try {
    check_remote_request(request_for_cell(probe), kStudyServerFieldNames);
  } catch (const Error& e) {
    throw Error(origin + ": server " + url + ": " + e.what());
  }
  return remote;
}

}  // namespace infermark::remote
