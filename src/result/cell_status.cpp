#include "result/cell_status.hpp"

#include "core/named_enum.hpp"

namespace infermark::result {
namespace {

constexpr NamedValue<CellStatus> kStatuses[] = {{CellStatus::kOk, "ok"},
                                                {CellStatus::kFailed, "failed"},
                                                {CellStatus::kCrashed, "crashed"},
                                                {CellStatus::kTimeout, "timeout"},
                                                {CellStatus::kMemoryLimit, "memory_limit"},
                                                {CellStatus::kInterrupted, "interrupted"}};

}  // namespace

std::string_view name_of(CellStatus status) { return name_in(kStatuses, status); }

CellStatus parse_cell_status(const std::string& text, const std::string& what) { return parse_in(kStatuses, text, what); }

std::ostream& operator<<(std::ostream& out, CellStatus status) { return out << name_of(status); }

}  // namespace infermark::result
