#include "backends/effective_setting.hpp"

#include <nlohmann/json.hpp>

#include "core/named_enum.hpp"

namespace infermark {
namespace {

constexpr NamedValue<SettingState> kStates[] = {
    {SettingState::kVerified, "verified"}, {SettingState::kUnverified, "unverified"}, {SettingState::kNotApplied, "not_applied"}};

}  // namespace

std::string_view name_of(SettingState state) { return name_in(kStates, state); }

SettingState parse_setting_state(const std::string& text, const std::string& what) { return parse_in(kStates, text, what); }

std::ostream& operator<<(std::ostream& out, SettingState state) { return out << name_of(state); }

EffectiveSetting read_back(const std::string& key, const std::string& requested, const std::string& effective,
                           const std::string& how) {
  if (requested.empty() || requested == effective) return {key, requested, effective, SettingState::kVerified, how};
  return {key, requested, effective, SettingState::kNotApplied,
          "the framework kept " + effective + (how.empty() ? "" : " (" + how + ")")};
}

void to_json(nlohmann::json& j, const EffectiveSetting& s) {
  j = {{"key", s.key},
       {"requested", s.requested},
       {"effective", s.effective},
       {"state", name_of(s.state)},
       {"applied", s.applied()},
       {"note", s.note}};
}

void from_json(const nlohmann::json& j, EffectiveSetting& s) {
  s.key = j.at("key");
  s.requested = j.at("requested");
  s.effective = j.at("effective");
  if (j.contains("state"))
    s.state = parse_setting_state(j.at("state").get<std::string>(), "settings.effective[" + s.key + "].state");
  else
    s.state = j.at("applied").get<bool>() ? SettingState::kUnverified : SettingState::kNotApplied;
  s.note = j.value("note", "");
}

}  // namespace infermark
