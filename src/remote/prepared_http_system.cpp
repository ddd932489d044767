#include "remote/prepared_http_system.hpp"

namespace infermark::remote {

PreparedHttpSystem::PreparedHttpSystem(net::HttpClient& client, std::vector<net::PreparedRequestPtr> requests,
                                       std::unique_ptr<loadgen::SampleLibrary> library, int lanes, RemoteErrors& errors)
    : client_(client), requests_(std::move(requests)), library_(std::move(library)), lanes_(lanes), errors_(errors) {}

void PreparedHttpSystem::start(const loadgen::Query& query, loadgen::Completion&, std::function<void(bool)> done) {
  client_.send(requests_[query.sample],
               [this, done = std::move(done)](net::ClientResponse response) { done(errors_.check(response)); });
}

void PreparedHttpSystem::issue(int, const loadgen::Query& query, loadgen::Completion& completion) {
  loadgen::start_and_wait(*this, query, completion);
}

boost::beast::http::verb verb_of(HttpMethod method) {
  using boost::beast::http::verb;
  switch (method) {
    case HttpMethod::kGet:
      return verb::get;
    case HttpMethod::kPost:
      return verb::post;
    case HttpMethod::kPut:
      return verb::put;
  }
  return verb::get;
}

net::PreparedRequestPtr prepare_plain_request(const net::HttpClient& client, const PlainHttpRequest& request) {
  net::ClientRequest fixed;
  fixed.method = verb_of(request.method);
  // The URL's path is the endpoint's prefix; a URL without one asks for "/".
  fixed.target = client.endpoint().prefix.empty() ? "/" : "";
  fixed.body = request.body;
  if (!request.content_type.empty()) fixed.headers.push_back({"Content-Type", request.content_type});
  return client.prepare(std::move(fixed));
}

}  // namespace infermark::remote
