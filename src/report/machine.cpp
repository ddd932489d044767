#include "report/machine.hpp"

#include "report/model_families.hpp"

namespace infermark::report {
namespace {

std::string environment_text(const result::RunResult& r, const char* field, const char* missing) {
  const auto& env = r.environment;
  if (!env.is_object() || !env.contains(field) || !env[field].is_string()) return missing;
  const auto value = env[field].get<std::string>();
  // The environment probe writes "unavailable" when it could not read the field.
  return value.empty() || value == "unavailable" ? missing : value;
}

}  // namespace

std::string machine_key(const result::RunResult& result) {
  return environment_text(result, "hostname", "unknown host") + " (" + environment_text(result, "cpu_model", "unknown CPU") + ")";
}

bool same_family_on_one_machine(const result::RunResult& a, const result::RunResult& b) {
  return parse_variant_name(a.model.name).family == parse_variant_name(b.model.name).family && machine_key(a) == machine_key(b);
}

bool is_x86(const result::RunResult& r) {
  const auto vendor = environment_text(r, "cpu_vendor", ""), flags = environment_text(r, "cpu_flags_simd", "");
  return vendor == "GenuineIntel" || vendor == "AuthenticAMD" || flags.find("avx") != std::string::npos ||
         flags.find("sse4") != std::string::npos;
}

bool is_arm(const result::RunResult& r) {
  const auto flags = environment_text(r, "cpu_flags_simd", "");
  return flags.find("asimd") != std::string::npos || flags.find("sve") != std::string::npos;  // aarch64 SIMD
}

bool has_gpu(const result::RunResult& r) { return r.resources && r.resources->summary.gpu.available; }

std::map<std::string, std::vector<LoadedResult>> group_by_machine(const std::vector<LoadedResult>& results) {
  std::map<std::string, std::vector<LoadedResult>> groups;
  for (const auto& r : results) groups[machine_key(r.result)].push_back(r);
  return groups;
}

}  // namespace infermark::report
