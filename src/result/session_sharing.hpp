// Whether a cell's lanes share one session (its weights, where the framework serves concurrent
// requests on a session) or each open their own copy (the instances study's other half).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace infermark::result {

enum class SessionSharing { kShared, kSeparate };

std::string_view name_of(SessionSharing sharing);
// Throws infermark::Error naming `what` and the choices.
SessionSharing parse_session_sharing(const std::string& text, const std::string& what = "--sessions");
std::vector<std::pair<std::string, SessionSharing>> session_sharing_names();

}  // namespace infermark::result
