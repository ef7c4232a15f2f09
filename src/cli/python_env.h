// The Python that `magneton demo` and `magneton doctor` run: $MAGNETON_PYTHON,
// else python3 (the installed package's `magneton` command sets it to the
// environment it was installed into: python/magneton/command.py).
#pragma once

#include <string>

namespace magneton::cli {

// $MAGNETON_PYTHON, else the Python the build was configured with (when it
// still exists), else python3.
std::string ProjectPython();

// In a checkout (the command in build/), puts its python/ first on
// PYTHONPATH, so that child Pythons import this checkout's magneton next to
// its built extensions. An installed command leaves PYTHONPATH alone.
void AddCheckoutToPythonPath();

}  // namespace magneton::cli
