#include "serve/openai_http_api.hpp"

#include <chrono>

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "core/json_text.hpp"
#include "core/random.hpp"
#include "kserve/kserve_codec.hpp"
#include "net/completion.hpp"

namespace infermark::serve {
namespace {

namespace http = net::http;

net::Response openai_error(int status, const std::string& message) {
  return net::make_response(static_cast<http::status>(status), openai::openai_error_body(status, message));
}

std::int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Everything the engine pushes until the end of the request.
boost::asio::awaitable<std::vector<StreamChunk>> next_chunks(std::shared_ptr<TokenChannel> channel) {
  auto wait = [channel](std::function<void(std::vector<StreamChunk>)> deliver) { channel->next(std::move(deliver)); };
  co_return co_await net::await_completion<std::vector<StreamChunk>>(std::move(wait));
}

}  // namespace

net::Response OpenAiHttpApi::list_models() const {
  auto data = nlohmann::json::array();
  for (const auto& model : repository_.models())
    if (model->is_language_model())
      data.push_back({{"id", model->spec.name}, {"object", "model"}, {"created", 0}, {"owned_by", "infermark"}});
  return net::make_response(http::status::ok, json_text(nlohmann::json{{"object", "list"}, {"data", data}}));
}

boost::asio::awaitable<void> OpenAiHttpApi::handle(net::Request& request, net::Responder& responder) {
  const auto target = std::string(net::target_of(request).substr(0, net::target_of(request).find('?')));
  int status = 0;
  std::string message;
  try {
    if (target == "/v1/models" && request.method() == http::verb::get) {
      auto response = list_models();
      co_await responder.send(std::move(response));
      co_return;
    }
    const bool chat = target == "/v1/chat/completions";
    if ((chat || target == "/v1/completions") && request.method() == http::verb::post) {
      co_await complete(request, responder, chat);
      co_return;
    }
    status = 404;
    message = "no route for " + std::string(request.method_string()) + " " + target +
              " (OpenAI routes: GET /v1/models, POST /v1/completions, POST /v1/chat/completions)";
  } catch (const kserve::RequestError& e) {
    status = e.status();
    message = e.what();
  }
  if (!responder.answered()) {
    auto response = openai_error(status, message);
    co_await responder.send(std::move(response));
  }
}

boost::asio::awaitable<void> OpenAiHttpApi::complete(net::Request& request, net::Responder& responder, bool chat) {
  const auto parsed = [&] {
    try {
      return openai::parse_completion_request(request.body(), chat);
    } catch (const Error& e) {
      throw kserve::RequestError(400, e.what());  // a request that does not parse names the field
    }
  }();
  for (const auto& field : parsed.ignored_fields)
    if (metrics_.count_ignored_field(field))
      fmt::print(stderr,  // the name as JSON: a client's bytes cannot break the log line
                 "infermark serve: OpenAI request field {} is accepted and has no effect here (counted in "
                 "infermark_openai_ignored_fields_total)\n",
                 json_text(nlohmann::json(field)));
  auto* model = repository_.find(parsed.model);
  if (!model) {
    std::string names;
    for (const auto& m : repository_.models())
      if (m->is_language_model()) names += (names.empty() ? "" : ", ") + m->spec.name;
    throw kserve::RequestError(404, "model: '" + parsed.model + "' is not served (language models: " + names + ")");
  }
  if (!model->is_language_model())
    throw kserve::RequestError(
        400, "model: '" + parsed.model + "' is a tensor model: use the KServe v2 API (/v2/models/" + parsed.model + "/infer)");
  const auto choice = model->choose(
      {net::field_of(request, kVariantHeader), kVariantHeader, "", net::field_of(request, model->spec.sticky_header)});
  GenerationEngine* engine = model->generators.at(choice.index).get();
  metrics_.count_routing(model->spec.name, engine->name(), choice.how);
  const auto prompt_text = chat ? engine->generator().chat_prompt(parsed.messages) : parsed.prompt;
  GenerationRequest work;
  try {
    work.prompt = engine->generator().tokenize(prompt_text);
  } catch (const std::exception& e) {
    throw kserve::RequestError(400, std::string("prompt: ") + e.what());
  }
  if (static_cast<int>(work.prompt.size()) + parsed.max_tokens > engine->context_length())
    throw kserve::RequestError(400, "max_tokens: the prompt's " + std::to_string(work.prompt.size()) + " tokens + " +
                                        std::to_string(parsed.max_tokens) + " output tokens exceed the context of " +
                                        std::to_string(engine->context_length()) + " tokens per sequence");
  work.max_tokens = parsed.max_tokens;
  work.sampling = parsed.sampling;
  if (!parsed.seed_given) work.sampling.seed = SeededRandom(unix_seconds() ^ (requests_.fetch_add(1) << 20)).next();
  work.stop = parsed.stop;
  work.channel = std::make_shared<TokenChannel>();
  auto channel = work.channel;
  openai::CompletionIdentity identity{std::string(chat ? "chatcmpl-" : "cmpl-") + std::to_string(requests_.fetch_add(1)),
                                      model->spec.name, unix_seconds(), engine->name()};
  if (!engine->submit(std::move(work))) {
    metrics_.count_rejection(model->spec.name, engine->name(), "queue_full");
    metrics_.count_request(model->spec.name, engine->name(), 429);
    auto response = openai_error(429, "variant '" + engine->name() + "' queue is full; retry later");
    response.set(http::field::retry_after, "1");
    co_await responder.send(std::move(response));
    co_return;
  }
  if (!parsed.stream) {
    std::string text;
    StreamChunk last;
    while (!last.done) {
      auto chunks = co_await next_chunks(channel);
      for (auto& chunk : chunks) {
        text += chunk.text;
        if (chunk.done) last = std::move(chunk);
      }
    }
    const int status = last.error.empty() ? 200 : 500;
    metrics_.count_request(model->spec.name, engine->name(), status);
    auto response = last.error.empty() ? net::make_response(http::status::ok,
                                                            openai::completion_body(parsed, identity, text, last.finish,
                                                                                    last.prompt_tokens, last.completion_tokens))
                                       : openai_error(500, last.error);
    response.set(std::string(kVariantHeader), engine->name());
    co_await responder.send(std::move(response));
    co_return;
  }
  auto head = net::make_response(http::status::ok, "", "text/event-stream");
  head.set(http::field::cache_control, "no-cache");
  head.set(std::string(kVariantHeader), engine->name());
  bool open = co_await responder.begin_stream(std::move(head));
  if (open && chat) {
    const auto first = openai::stream_event(parsed, identity, "", std::nullopt, true);
    open = co_await responder.write(first);
  }
  StreamChunk last;
  while (open && !last.done) {
    auto chunks = co_await next_chunks(channel);
    for (auto& chunk : chunks) {
      if (!chunk.text.empty() && open) {
        const auto event = openai::stream_event(parsed, identity, chunk.text, std::nullopt);
        open = co_await responder.write(event);
      }
      if (chunk.done) last = std::move(chunk);
    }
  }
  if (!open) {
    channel->cancel();  // the client left: free its sequence slot at the next step
    metrics_.count_request(model->spec.name, engine->name(), 499);
    co_return;
  }
  std::string tail;
  if (!last.error.empty()) {
    tail = openai::stream_error_event(last.error);
  } else {
    tail = openai::stream_event(parsed, identity, "", last.finish);
    if (parsed.include_usage) tail += openai::usage_event(parsed, identity, last.prompt_tokens, last.completion_tokens);
    tail += "data: [DONE]\n\n";
  }
  metrics_.count_request(model->spec.name, engine->name(), last.error.empty() ? 200 : 500);
  if (co_await responder.write(tail)) co_await responder.end_stream();
}

}  // namespace infermark::serve
