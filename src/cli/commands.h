// Each subcommand lives in its own cmd_*.cpp and registers itself here.
// Register* adds a CLI11 subcommand and sets `run` to its action when chosen.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "core/status.h"

namespace magneton::cli {

// Exit codes (docs/cli.md): 0 ok, 1 finding/regression, 2 bad input or usage.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFinding = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitNothingCompared = 3;  // diff: no region of the two runs matched

using Action = std::function<int()>;

// Prints "magneton: <message>" on stderr and returns the exit code for it.
int Fail(const Error& error);

void RegisterInfo(CLI::App& app, Action& run);
void RegisterDoctor(CLI::App& app, Action& run);
void RegisterMeasure(CLI::App& app, Action& run);
void RegisterRecord(CLI::App& app, Action& run);
void RegisterTop(CLI::App& app, Action& run);
void RegisterDiff(CLI::App& app, Action& run);
void RegisterCheck(CLI::App& app, Action& run);
void RegisterExport(CLI::App& app, Action& run);
void RegisterDemo(CLI::App& app, Action& run);

}  // namespace magneton::cli
