# The test every_declared_backend_built: fails unless every backend CMake expected of this build
# (declared, less the opt-outs INFERMARK_WITH_<NAME>=OFF; cmake/Backends.cmake) is built into the
# infermark under test and loads. Without it, a framework whose set-up failed leaves its AUTO
# backend unbuilt, every test of it skips, and the suite still passes.
#
#   cmake -DINFERMARK=<exe> -DEXPECTED=a,b -DOPTED_OUT=c [-DLISTING_FILE=<json>] -P CheckBackendsBuilt.cmake
#
# Lists are comma-separated (a ';' would split the test's arguments). LISTING_FILE, a saved
# `infermark backends --json`, stands in for running INFERMARK: the checker's own test uses it.

if(DEFINED LISTING_FILE)
  file(READ "${LISTING_FILE}" listing)
  set(source "${LISTING_FILE}")
else()
  # Exit status 1 means a built plugin failed to load; each such backend is named below.
  execute_process(COMMAND "${INFERMARK}" backends --json OUTPUT_VARIABLE listing ERROR_VARIABLE errors)
  set(source "${INFERMARK} backends --json")
endif()

string(JSON count ERROR_VARIABLE json_error LENGTH "${listing}")
if(json_error)
  message(FATAL_ERROR "${source} did not give a JSON list of backends (${json_error}):\n${listing}${errors}")
endif()
if(count GREATER 0)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${listing}" ${i} name)
    string(JSON built_${name} GET "${listing}" ${i} built)
    string(JSON error_${name} GET "${listing}" ${i} error)
    set(listed_${name} TRUE)
  endforeach()
endif()

string(REPLACE "," ";" expected "${EXPECTED}")
set(problems "")
foreach(name IN LISTS expected)
  string(TOUPPER "${name}" upper)
  if(NOT listed_${name})
    string(APPEND problems "\n  ${name}: declared in src/backends/ but not in ${source} (a stale build: rebuild infermark)")
  elseif(NOT built_${name})
    string(APPEND problems "\n  ${name}: declared and not opted out, but not built: its framework was not found when CMake "
                           "configured (run scripts/setup, then configure again), or configure with "
                           "-DINFERMARK_WITH_${upper}=OFF to leave it out on purpose")
  elseif(NOT error_${name} STREQUAL "")
    string(APPEND problems "\n  ${name}: built, but its plugin fails to load: ${error_${name}}")
  endif()
endforeach()

set(opted_out_text "none")
if(NOT OPTED_OUT STREQUAL "")
  string(REPLACE "," ", " opted_out_text "${OPTED_OUT}")
endif()
if(problems)
  message(FATAL_ERROR "every declared backend built: no${problems}\nOpted out (INFERMARK_WITH_<NAME>=OFF): ${opted_out_text}")
endif()
string(REPLACE "," ", " expected_text "${EXPECTED}")
message("every declared backend built: yes (${expected_text}); opted out (INFERMARK_WITH_<NAME>=OFF): ${opted_out_text}")
