// The remote client's own parsing: URLs, server-sent events, KServe v2 request bodies and
// metadata, error counting. The servers themselves are exercised in tests/e2e/load_test.py.
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
#include "net/http_client.hpp"
#include "remote/kserve_http.hpp"
#include "remote/metrics_scraper.hpp"
#include "remote/remote_errors.hpp"
#include "remote/sse_parser.hpp"
#include "serve/kserve_codec.hpp"

namespace infermark {
namespace {

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
    const auto encoded = serve::encode_infer_request({input}, {"logits"}, binary);
    EXPECT_EQ(encoded.json_length.has_value(), binary);
    const auto parsed = serve::parse_infer_request(encoded.body, encoded.json_length);
    ASSERT_EQ(parsed.inputs.size(), 1u);
    EXPECT_EQ(parsed.inputs[0].shape, input.shape);
    EXPECT_EQ(parsed.inputs[0].data, input.data);
    ASSERT_EQ(parsed.outputs.size(), 1u);
    EXPECT_EQ(parsed.outputs[0].name, "logits");
    EXPECT_EQ(parsed.outputs[0].binary, binary);
  }
}

TEST(KServeMetadata, ReadsDynamicDimsAndNamesTheBadField) {
  const auto specs = serve::parse_tensor_metadata(
      nlohmann::json::parse(R"([{"name":"input","datatype":"FP32","shape":[-1,3,224,224]}])"), "inputs");
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].shape, (std::vector<std::int64_t>{-1, 3, 224, 224}));
  EXPECT_EQ(specs[0].dtype, DType::kFloat32);
  try {
    serve::parse_tensor_metadata(nlohmann::json::parse(R"([{"name":"x","datatype":"FP32","shape":[1,-2]}])"), "inputs");
    FAIL() << "a shape of -2 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("inputs[0].shape"), std::string::npos) << e.what();
  }
  EXPECT_THROW(serve::parse_tensor_metadata(nlohmann::json::parse(R"([{"name":"x","datatype":"BYTES","shape":[1]}])"), "inputs"),
               Error);
  EXPECT_THROW(serve::parse_tensor_metadata(nlohmann::json::object(), "inputs"), Error);
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
  const auto prepared = client.prepare({boost::beast::http::verb::post, "/v2/models/m/infer", "body!", {{"X-Model-Variant", "a"}}});
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
  namespace asio = boost::asio;
  asio::io_context server_io;
  asio::ip::tcp::acceptor acceptor(server_io, {asio::ip::make_address("127.0.0.1"), 0});
  const auto port = acceptor.local_endpoint().port();
  std::atomic<bool> stopping{false};
  std::thread server([&] {
    while (!stopping.load()) {
      asio::ip::tcp::socket socket(server_io);
      boost::system::error_code ec;
      acceptor.accept(socket, ec);
      if (ec || stopping.load()) break;
      asio::streambuf request;
      asio::read_until(socket, request, "\r\n\r\n", ec);
      if (!ec) asio::write(socket, asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")), ec);
      socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    }
  });
  {
    net::HttpClient client(net::parse_http_url("http://127.0.0.1:" + std::to_string(port), "URL"), {});
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
  stopping = true;
  boost::system::error_code ec;
  asio::ip::tcp::socket poke(server_io);
  poke.connect({asio::ip::make_address("127.0.0.1"), port}, ec);  // wakes the blocking accept
  server.join();
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

}  // namespace infermark
