// A remote server driven over HTTP with requests rendered before anything is timed: one prepared
// request per sample (a KServe v2 body per input set, or the one fixed request of a plain HTTP
// endpoint). A query sends its sample's bytes and succeeds on a 2xx answer; many are in flight on
// few threads.
#pragma once

#include <boost/beast/http/verb.hpp>
#include <memory>
#include <string>
#include <vector>

#include "loadgen/system_under_test.hpp"
#include "net/http_client.hpp"
#include "remote/remote_errors.hpp"

namespace infermark::remote {

class PreparedHttpSystem final : public loadgen::SystemUnderTest {
 public:
  // `requests[i]` is sample i of `library`.
  PreparedHttpSystem(net::HttpClient& client, std::vector<net::PreparedRequestPtr> requests,
                     std::unique_ptr<loadgen::SampleLibrary> library, int lanes, RemoteErrors& errors);

  int lanes() const override { return lanes_; }
  const loadgen::SampleLibrary& samples() const override { return *library_; }
  bool asynchronous() const override { return true; }
  void issue(int lane, const loadgen::Query& query, loadgen::Completion& completion) override;
  void start(const loadgen::Query& query, loadgen::Completion& completion, std::function<void(bool)> done) override;

 private:
  net::HttpClient& client_;
  std::vector<net::PreparedRequestPtr> requests_;
  std::unique_ptr<loadgen::SampleLibrary> library_;
  int lanes_;
  RemoteErrors& errors_;
};

// `--protocol http`: any endpoint, one fixed request to the URL's path.
// The methods a fixed request may use (CLI11 cannot parse Beast's verb directly).
enum class HttpMethod { kGet, kPost, kPut };
boost::beast::http::verb verb_of(HttpMethod method);

struct PlainHttpRequest {
  HttpMethod method = HttpMethod::kGet;
  std::string body;
  std::string content_type;  // "" sends none
};

net::PreparedRequestPtr prepare_plain_request(const net::HttpClient& client, const PlainHttpRequest& request);

}  // namespace infermark::remote
