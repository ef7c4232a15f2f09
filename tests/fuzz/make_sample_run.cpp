// Writes the synthetic sample run (tests/core/sample_run.h) to a file: the
// fuzz seed, and tests/data/sample.mgt, the run bundled for the demo until a
// real recording replaces it.
//   make_sample_run OUT.mgt
#include <cstdio>

#include "../core/sample_run.h"
#include "core/store.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_sample_run OUT.mgt\n");
    return 2;
  }
  magneton::Status st = magneton::SaveRun(magneton::testing::MakeSampleRun(), argv[1], /*overwrite=*/true);
  if (!st.ok()) {
    std::fprintf(stderr, "make_sample_run: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}
