#include "result/session_sharing.hpp"

#include "core/named_enum.hpp"

namespace infermark::result {
namespace {

constexpr NamedValue<SessionSharing> kSharing[] = {{SessionSharing::kShared, "shared"}, {SessionSharing::kSeparate, "separate"}};

}  // namespace

std::string_view name_of(SessionSharing sharing) { return name_in(kSharing, sharing); }

SessionSharing parse_session_sharing(const std::string& text, const std::string& what) { return parse_in(kSharing, text, what); }

std::vector<std::pair<std::string, SessionSharing>> session_sharing_names() { return names_in(kSharing); }

}  // namespace infermark::result
