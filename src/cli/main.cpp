// The magneton command: parses the command line and hands off to one subcommand.
#include <cstdio>
#include <iostream>

#include <fmt/core.h>

#include "cli/commands.h"

namespace magneton::cli {

int Fail(const Error& error) {
  fmt::print(stderr, "magneton: {}\n", error.message);
  return kExitBadInput;
}

}  // namespace magneton::cli

int main(int argc, char** argv) {
  using namespace magneton::cli;
  CLI::App app{"Magneton: a differential energy debugger for ML systems.\n"
               "Record two systems on one workload, match what computes the same values, "
               "and find where one of them wastes energy."};
  app.set_version_flag("--version", std::string("magneton ") + MAGNETON_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  Action run;
  RegisterInfo(app, run);
  RegisterDoctor(app, run);
  RegisterMeasure(app, run);
  RegisterRecord(app, run);
  RegisterTop(app, run);
  RegisterDiff(app, run);
  RegisterCheck(app, run);
  RegisterExport(app, run);
  RegisterDemo(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line with a pointer to --help; usage errors exit 2 like bad input.
    fmt::print(stderr, "magneton: {} (see 'magneton --help')\n", e.what());
    return kExitBadInput;
  }
  return run ? run() : kExitBadInput;
}
