#include "cli/python_env.h"

#include <cstdlib>
#include <filesystem>

#include "cli/cmd_diff.h"

namespace magneton::cli {

namespace fs = std::filesystem;

std::string ProjectPython() {
  const char* env = std::getenv("MAGNETON_PYTHON");
  if (env && *env) return env;
#ifdef MAGNETON_BUILD_PYTHON
  std::error_code ec;
  if (fs::exists(MAGNETON_BUILD_PYTHON, ec)) return MAGNETON_BUILD_PYTHON;
#endif
  return "python3";
}

void AddCheckoutToPythonPath() {
  fs::path pkg = fs::path(ExecutableDir()) / ".." / "python";
  std::error_code ec;
  if (!fs::exists(pkg / "magneton" / "__init__.py", ec)) return;
  std::string path = fs::canonical(pkg, ec).string();
  const char* old = std::getenv("PYTHONPATH");
  std::string value = old && *old ? path + ":" + old : path;
  setenv("PYTHONPATH", value.c_str(), 1);
}

}  // namespace magneton::cli
