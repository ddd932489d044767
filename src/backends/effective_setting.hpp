// One setting as a backend was asked for it and as the framework really used it, with how far
// infermark could check that; results, reports and tables carry these as they are.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace infermark {

// How far a setting is known to be in force: the closed set results and reports read.
enum class SettingState {
  kVerified,    // in force: `effective` was read back from the framework or counted in the process
  kUnverified,  // set as asked, but nothing can read it back; `note` says why
  kNotApplied,  // the framework ignored or overrode the request; `note` says why
};

std::string_view name_of(SettingState state);
// Throws infermark::Error naming `what` and the choices.
SettingState parse_setting_state(const std::string& text, const std::string& what);
std::ostream& operator<<(std::ostream& out, SettingState state);

struct EffectiveSetting {
  std::string key;
  std::string requested;  // "" when the user did not ask and the framework chose
  std::string effective;  // the value in force; when verified, the value read back or counted
  SettingState state = SettingState::kUnverified;
  std::string note;

  bool applied() const { return state != SettingState::kNotApplied; }
};

// A setting infermark configured but cannot read back: unverified where the request was taken,
// not applied where it was refused.
inline SettingState configured_state(bool applied) { return applied ? SettingState::kUnverified : SettingState::kNotApplied; }

// A setting read back from the framework (`how` says where): verified when it is what was asked
// (or nothing was asked), not applied when the framework kept another value.
EffectiveSetting read_back(const std::string& key, const std::string& requested, const std::string& effective,
                           const std::string& how = "");

// JSON as results store it: `state` by name, and `applied` beside it for readers that predate
// `state`. Files without `state` read `applied: true` as unverified (nothing was verified then).
void to_json(nlohmann::json& j, const EffectiveSetting& setting);
void from_json(const nlohmann::json& j, EffectiveSetting& setting);

}  // namespace infermark
