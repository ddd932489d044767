// Compiled as if it were a source of the layer it is linked like (tests/CMakeLists.txt): includes
// the one header named by LAYER_PROBE_HEADER. A header of a folder below compiles; one of a folder
// above or beside does not, which is what the layering test checks.
#include LAYER_PROBE_HEADER

int layer_probe_anchor() { return 0; }
