// The remote client's own parsing: URLs, server-sent events, KServe v2 request bodies and
// metadata, error counting (against a loopback server where the client's handling of an answer
// matters). The real servers are exercised in tests/e2e/load_test.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

#include "core/error.hpp"
#include "kserve/kserve_codec.hpp"
#include "net/http_client.hpp"
#include "remote/kserve_http.hpp"
#include "remote/measure_remote.hpp"
#include "remote/metrics_scraper.hpp"
#include "remote/remote_errors.hpp"
#include "remote/sse_parser.hpp"

namespace infermark {
namespace {

// A loopback HTTP server that answers every connection's first request with `answer` (raw bytes)
// and closes it without saying so; stops and joins when destroyed.
class OneAnswerServer {
 public:
  explicit OneAnswerServer(std::string answer)
      : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
        answer_(std::move(answer)),
        thread_([this] { serve(); }) {}
  ~OneAnswerServer() {
    stopping_ = true;
    boost::system::error_code ec;
    boost::asio::ip::tcp::socket poke(io_);
    poke.connect(acceptor_.local_endpoint(), ec);  // wakes the blocking accept
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }

 private:
  void serve() {
    namespace asio = boost::asio;
    while (!stopping_.load()) {
      asio::ip::tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec || stopping_.load()) break;
      asio::streambuf request;
      const auto header_bytes = asio::read_until(socket, request, "\r\n\r\n", ec);
      // Reads the request's body too, so closing never resets a connection the client still writes to.
      const std::string head(asio::buffers_begin(request.data()), asio::buffers_begin(request.data()) + header_bytes);
      const auto length_at = head.find("Content-Length: ");
      const auto length = length_at == std::string::npos ? 0 : std::stoul(head.substr(length_at + 16));
      if (!ec && request.size() - header_bytes < length)
        asio::read(socket, request, asio::transfer_exactly(length - (request.size() - header_bytes)), ec);
      if (!ec) asio::write(socket, asio::buffer(answer_), ec);
      socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    }
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::string answer_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;  // last: starts once the rest is ready
};

std::string http_answer(const std::string& status_line, const std::string& content_type, const std::string& body) {
  return "HTTP/1.1 " + status_line + "\r\nContent-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

std::vector<std::string> events_of(const std::vector<std::string>& pieces) {
  remote::SseParser parser;
  std::vector<std::string> events;
  const auto collect = [&](std::string_view data) { events.emplace_back(data); };
  for (const auto& piece : pieces) parser.feed(piece, collect);
  parser.finish(collect);
  return events;
}

}  // namespace

TEST(HttpUrl, ParsesHostPortAndPrefixAndDropsCredentials) {
  const auto plain = net::parse_http_url("http://127.0.0.1:8000", "URL");
  EXPECT_EQ(plain.host, "127.0.0.1");
  EXPECT_EQ(plain.port, "8000");
  EXPECT_EQ(plain.prefix, "");
  const auto prefixed = net::parse_http_url("http://user:secret@models.local/serving/v1/", "URL");
  EXPECT_EQ(prefixed.host, "models.local");
  EXPECT_EQ(prefixed.port, "80");
  EXPECT_EQ(prefixed.prefix, "/serving/v1");
  EXPECT_EQ(prefixed.url.find("secret"), std::string::npos);
  const auto v6 = net::parse_http_url("http://[::1]:9000", "URL");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, "9000");
  EXPECT_THROW(net::parse_http_url("https://host", "URL"), Error);
  EXPECT_THROW(net::parse_http_url("host:8000", "URL"), Error);
  EXPECT_THROW(net::parse_http_url("http://host:80a", "URL"), Error);
  EXPECT_THROW(net::parse_http_url("http://", "URL"), Error);
}

TEST(SseParser, EventsSurviveAnySplitOfTheBytes) {
  const std::string stream =
      ": keep-alive\n\ndata: {\"a\":1}\n\ndata: line one\ndata: line two\r\n\r\nevent: x\ndata: [DONE]\n\n";
  const std::vector<std::string> expected{"{\"a\":1}", "line one\nline two", "[DONE]"};
  EXPECT_EQ(events_of({stream}), expected);
  for (std::size_t cut = 1; cut < stream.size(); ++cut)
    EXPECT_EQ(events_of({stream.substr(0, cut), stream.substr(cut)}), expected) << "cut at " << cut;
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  EXPECT_EQ(events_of(bytes), expected);
  EXPECT_EQ(events_of({"data: unterminated"}), std::vector<std::string>{"unterminated"});
}

TEST(KServeRequest, BinaryAndJsonBodiesRoundTripThroughTheServersParser) {
  Tensor input{"input", DType::kFloat32, {1, 3}, {}};
  const float values[] = {1.5f, -2.0f, 3.25f};
  input.data.resize(sizeof values);
  std::memcpy(input.data.data(), values, sizeof values);
  for (const bool binary : {true, false}) {
    const auto encoded = kserve::encode_infer_request({input}, {"logits"}, binary);
    EXPECT_EQ(encoded.json_length.has_value(), binary);
    const auto parsed = kserve::parse_infer_request(encoded.body, encoded.json_length);
    ASSERT_EQ(parsed.inputs.size(), 1u);
    EXPECT_EQ(parsed.inputs[0].shape, input.shape);
    EXPECT_EQ(parsed.inputs[0].data, input.data);
    ASSERT_EQ(parsed.outputs.size(), 1u);
    EXPECT_EQ(parsed.outputs[0].name, "logits");
    EXPECT_EQ(parsed.outputs[0].binary, binary);
  }
}

TEST(KServeMetadata, ReadsDynamicDimsAndNamesTheBadField) {
  const auto specs = kserve::parse_tensor_metadata(
      nlohmann::json::parse(R"([{"name":"input","datatype":"FP32","shape":[-1,3,224,224]}])"), "inputs");
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].shape, (std::vector<std::int64_t>{-1, 3, 224, 224}));
  EXPECT_EQ(specs[0].dtype, DType::kFloat32);
  try {
    kserve::parse_tensor_metadata(nlohmann::json::parse(R"([{"name":"x","datatype":"FP32","shape":[1,-2]}])"), "inputs");
    FAIL() << "a shape of -2 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inputs[0].shape"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kserve::parse_tensor_metadata(nlohmann::json::parse(R"([{"name":"x","datatype":"BYTES","shape":[1]}])"), "inputs"),
               Error);
  EXPECT_THROW(kserve::parse_tensor_metadata(nlohmann::json::object(), "inputs"), Error);
}

TEST(PrometheusText, KeepsTheServersSeriesAndSkipsWhatItCannotRead) {
  const std::string text =
      "# HELP nv_inference_request_success Number of successful inference requests\n"
      "# TYPE nv_inference_request_success counter\n"
      "nv_inference_request_success{model=\"resnet50\",version=\"1\"} 42\n"
      "nv_inference_queue_duration_us{model=\"a b}\",version=\"1\"} 1.5e3 1700000000000\r\n"
      "llamacpp:tokens_predicted_total 17\n"
      "go_goroutines 12\n"
      "vllm:num_requests_running{model_name=\"x\"} NaN\n"
      "broken{model=\"x\" 3\n"
      "nv_inference_count{model=\"m\"} not-a-number\n";
  const auto samples = remote::parse_prometheus_text(text, remote::server_metric_prefixes());
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].name, "nv_inference_request_success");
  EXPECT_EQ(samples[0].series, "nv_inference_request_success{model=\"resnet50\",version=\"1\"}");
  EXPECT_EQ(samples[0].value, 42);
  EXPECT_EQ(samples[1].series, "nv_inference_queue_duration_us{model=\"a b}\",version=\"1\"}");  // a brace in a label
  EXPECT_EQ(samples[1].value, 1500);
  EXPECT_EQ(samples[2].name, "llamacpp:tokens_predicted_total");
  EXPECT_TRUE(std::isnan(samples[3].value));
  EXPECT_EQ(remote::parse_prometheus_text(text, {}).size(), 5u);  // no filter: go_goroutines too
}

TEST(RemoteErrors, CountsByKindAndKeepsValidTextExamples) {
  remote::RemoteErrors errors;
  net::ClientResponse refused;
  refused.error = net::TransportError::kConnect;
  refused.error_text = "connect: Connection refused";
  EXPECT_FALSE(errors.check(refused));
  net::ClientResponse overloaded;
  overloaded.status = 429;
  overloaded.body = "queue full \xff\xfe";  // not UTF-8: replaced, never a failure to write the result
  EXPECT_FALSE(errors.check(overloaded));
  EXPECT_FALSE(errors.check(overloaded));
  net::ClientResponse fine;
  fine.status = 200;
  EXPECT_TRUE(errors.check(fine));
  errors.count_stream_error("{\"message\":\"invalid UTF-8\"}");
  const auto j = errors.to_json();
  EXPECT_EQ(j["total"], 4);
  EXPECT_EQ(j["transport"]["connect"], 1);
  EXPECT_EQ(j["http_status"]["429"], 2);
  EXPECT_EQ(j["in_stream"], 1);
  EXPECT_EQ(j["examples"].size(), 3u);  // the repeated 429 is remembered once
  EXPECT_NO_THROW(j.dump());
}

TEST(HttpClient, PreparedRequestsCarryTheRequestLineHeadersAndBody) {
  net::ClientOptions options;
  options.headers = {{"Authorization", "Bearer t"}};
  net::HttpClient client(net::parse_http_url("http://127.0.0.1:9/base", "URL"), options);
  const auto prepared =
      client.prepare({boost::beast::http::verb::post, "/v2/models/m/infer", "body!", {{"X-Model-Variant", "a"}}});
  const auto& bytes = prepared->bytes;
  EXPECT_EQ(bytes.rfind("POST /base/v2/models/m/infer HTTP/1.1\r\n", 0), 0u) << bytes;
  EXPECT_NE(bytes.find("Host: 127.0.0.1:9\r\n"), std::string::npos);
  EXPECT_NE(bytes.find("Authorization: Bearer t\r\n"), std::string::npos);
  EXPECT_NE(bytes.find("X-Model-Variant: a\r\n"), std::string::npos);
  EXPECT_NE(bytes.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_EQ(bytes.substr(bytes.size() - 9), "\r\n\r\nbody!");
}

// A server that answers one request per connection and then closes it, without saying so: every
// pooled connection is dead when reused. The retry must open a new connection rather than take
// another dead one from the pool (which left requests with neither an answer nor an error).
TEST(HttpClient, RequestsOnConnectionsTheServerClosedAreRetriedOnANewOne) {
  OneAnswerServer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  net::HttpClient client(net::parse_http_url(server.url(), "URL"), {});
  const auto round = [&client](int requests) {
    std::vector<std::promise<net::ClientResponse>> answers(static_cast<std::size_t>(requests));
    for (auto& answer : answers)
      client.send(net::ClientRequest{boost::beast::http::verb::get, "/", "", {}},
                  [&answer](net::ClientResponse response) { answer.set_value(std::move(response)); });
    std::vector<net::ClientResponse> responses;
    for (auto& answer : answers) responses.push_back(answer.get_future().get());
    return responses;
  };
  round(3);  // three connections, each closed by the server after its answer, back in the pool
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (const auto& response : round(1)) {  // the first dead connection fails, and so would the next pooled one
    EXPECT_EQ(response.error, net::TransportError::kNone) << response.error_text;
    EXPECT_EQ(response.status, 200u);
    EXPECT_EQ(response.body, "ok");
  }
}

TEST(KServeTensors, AutoUsesTheBinaryExtensionOnlyWhereTheServerListsIt) {
  remote::KServeModel triton;
  triton.extensions = {"classification", "binary_tensor_data", "statistics"};
  remote::KServeModel mlserver;  // GET /v2 lists no extensions
  EXPECT_TRUE(remote::choose_tensor_encoding(remote::TensorEncoding::kAuto, triton).binary);
  const auto json = remote::choose_tensor_encoding(remote::TensorEncoding::kAuto, mlserver);
  EXPECT_FALSE(json.binary);
  EXPECT_NE(json.why.find("does not list"), std::string::npos);
  EXPECT_TRUE(remote::choose_tensor_encoding(remote::TensorEncoding::kBinary, mlserver).binary);
  EXPECT_FALSE(remote::choose_tensor_encoding(remote::TensorEncoding::kJson, triton).binary);
}

TEST(RemoteErrors, AnyTwoHundredAnswerSucceeds) {
  remote::RemoteErrors errors;
  net::ClientResponse no_content;
  no_content.status = 204;
  EXPECT_TRUE(errors.check(no_content));
  net::ClientResponse moved;
  moved.status = 301;
  EXPECT_FALSE(errors.check(moved));
  EXPECT_EQ(errors.to_json()["http_status"]["301"], 1);
}

TEST(RemoteErrors, TheServersMessageIsTakenFromKServeOpenAiAndPlainBodies) {
  EXPECT_EQ(remote::server_message(R"({"error": "Request for unknown model: 'nosuch' is not found"})"),
            "Request for unknown model: 'nosuch' is not found");
  EXPECT_EQ(remote::server_message(
                R"({"error": {"message": "The model `nosuch` does not exist.", "type": "invalid_request_error", "code": 404}})"),
            "The model `nosuch` does not exist.");
  EXPECT_EQ(remote::server_message(R"({"detail": "Not Found"})"), "Not Found");  // FastAPI (KServe ModelServer)
  EXPECT_EQ(remote::server_message("404 page not found\n\n  try /v2\n"), "404 page not found try /v2");
  EXPECT_EQ(remote::server_message(R"({"status": "gone"})"), R"({"status": "gone"})");  // JSON of no known shape: as sent
  EXPECT_EQ(remote::server_message(std::string(500, 'x'), 20), std::string(20, 'x') + "...");
  EXPECT_EQ(remote::http_error_text(404, ""), "HTTP 404");
  EXPECT_EQ(remote::http_error_text(503, R"({"error":"queue full"})"), "HTTP 503: queue full");
}

// `load` against a server that refuses every request: the result's error (the table's error
// line) carries the server's own message, for each protocol's way of saying it, streamed or not.
TEST(RemoteErrors, AFailedLoadSaysWhatTheServerSaid) {
  const auto failed_load = [](const std::string& answer, remote::RemoteProtocol protocol) {
    OneAnswerServer server(answer);
    remote::RemoteRequest request;
    request.url = server.url();
    request.protocol = protocol;
    request.model = "nosuch";
    request.timeout_s = 10;
    request.cell.backend = "remote";
    request.cell.scenario.warmup_queries = 0;
    request.cell.scenario.max_queries = 2;
    const auto result = remote::measure_remote(request, nullptr);
    EXPECT_EQ(result.status, result::CellStatus::kFailed);
    return result;
  };
  const auto openai =
      failed_load(http_answer("404 Not Found", "application/json",
                              R"({"error": {"message": "The model `nosuch` does not exist.", "type": "invalid_request_error"}})"),
                  remote::RemoteProtocol::kOpenAi);  // streamed by default: the error body must not go to the SSE reader
  EXPECT_NE(openai.error.find("HTTP 404: The model `nosuch` does not exist."), std::string::npos) << openai.error;
  ASSERT_TRUE(openai.remote && openai.remote->errors);
  EXPECT_EQ(openai.remote->errors->examples.at(0), "HTTP 404: The model `nosuch` does not exist.");
  const auto in_stream = failed_load(
      http_answer("200 OK", "text/event-stream",
                  "data: {\"error\": {\"code\": 500, \"message\": \"Invalid UTF-8\", \"type\": \"server_error\"}}\n\n"),
      remote::RemoteProtocol::kOpenAi);  // llama-server's way after a 200
  EXPECT_NE(in_stream.error.find("in the stream: Invalid UTF-8)"), std::string::npos) << in_stream.error;
  const auto kserve = failed_load(http_answer("404 Not Found", "application/json", R"({"error": "Model 'nosuch' is not found"})"),
                                  remote::RemoteProtocol::kKServe);
  EXPECT_NE(kserve.error.find("/v2: HTTP 404: Model 'nosuch' is not found"), std::string::npos) << kserve.error;
  const auto plain =
      failed_load(http_answer("404 Not Found", "text/plain", "no route for this path\n"), remote::RemoteProtocol::kHttp);
  EXPECT_NE(plain.error.find("HTTP 404: no route for this path)"), std::string::npos) << plain.error;
}

// A remote cell ran on the server: this machine's RAPL would count the client's joules against the
// server's inferences, so the cell's energy is unavailable and says why, whatever this machine reads.
TEST(RemoteEnergy, ARemoteCellsEnergyIsUnavailableNotTheClients) {
  OneAnswerServer server(http_answer("200 OK", "text/plain", "ok"));
  remote::RemoteRequest request;
  request.url = server.url();
  request.protocol = remote::RemoteProtocol::kHttp;
  request.timeout_s = 10;
  request.cell.backend = "remote";
  request.cell.scenario.warmup_queries = 0;
  request.cell.scenario.max_queries = 3;
  const auto result = remote::measure_remote(request, nullptr);
  ASSERT_EQ(result.status, result::CellStatus::kOk) << result.error;
  ASSERT_TRUE(result.resources);
  EXPECT_FALSE(result.resources->summary.energy.available);
  EXPECT_NE(result.resources->summary.energy.source.find("remote server"), std::string::npos)
      << result.resources->summary.energy.source;
  EXPECT_FALSE(result.resources->inferences_per_joule);
}

}  // namespace infermark
