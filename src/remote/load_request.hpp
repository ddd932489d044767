// The request `infermark load` sends and the cells of a study's servers: built from what the user
// wrote (flags or study fields) and checked before anything is sent, the same way for both.
#pragma once

#include <string>
#include <vector>

#include "harness/run_options.hpp"
#include "remote/measure_remote.hpp"

namespace infermark::remote {

// What a request's settings are called where the user wrote them, for error messages.
struct RequestFieldNames {
  std::string url, model, io_threads, timeout;
};
inline const RequestFieldNames kLoadFlagNames{"URL", "--model", "--client-threads", "--timeout-s"};
inline const RequestFieldNames kStudyServerFieldNames{"url", "model", "client threads", "timeout"};

// Throws infermark::Error naming the field when the request cannot be sent: a URL that does not
// parse (kserve-grpc: HOST:PORT, checked on connecting), a KServe model not named, fewer than one
// client thread, a timeout that is not above 0.
void check_remote_request(const RemoteRequest& request, const RequestFieldNames& names);

// "NAME=VALUE" of --header; never printed or recorded (it may carry a token).
net::HttpHeader header_of(const std::string& text);

// --body-field KEY=JSON values as one object (a value that is not JSON is a plain string).
nlohmann::json body_fields_of(const std::vector<std::string>& fields);

// The cell `load` measures at one concurrency level of `options` (0: none given): backend
// "remote"; a single-stream scenario with several clients is the concurrency scenario, as for
// language models in `run`; an open loop with no level keeps kDefaultOpenLoopInFlight in flight.
result::CellRequest load_cell(const harness::RunOptions& options, int level);

// A study server's part of a cell (url, protocol, model), checked as `load` checks its flags.
// Throws infermark::Error naming `origin` (where the study file declares the server) and the url.
nlohmann::json server_cell_remote(const std::string& url, const std::string& protocol, const std::string& model,
                                  const std::string& origin, const result::CellRequest& cell);

}  // namespace infermark::remote
