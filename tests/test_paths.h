// Paths the tests need (the test data, the built binary, the injection
// library), each defined in one small file per test binary that CMake writes
// (tests/CMakeLists.txt) and declared here, included into every test source.
// No other test source holds a path of the checkout, so the compiler cache
// serves every clone of it (scripts/compiler_cache.sh): the paths were
// string macros on every test's command line before, and a clone elsewhere
// compiled every test again.
#pragma once

const char* magneton_test_data();
const char* magneton_binary();
const char* magneton_cupti_lib();
