// onyx: run, inspect, benchmark and optimize ONNX models.
#include <cstdio>
#include <exception>
#include <string>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"onyx - an ONNX inference engine"};
  app.require_subcommand(1);
  onyx::cli::AddRunCommand(app);
  onyx::cli::AddInfoCommand(app);
  onyx::cli::AddOptimizeCommand(app);
  onyx::cli::AddPerfCommand(app);
  onyx::cli::AddProfileCommand(app);
  onyx::cli::AddExplainCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    // One line, whatever the message holds.
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "onyx: error: %s\n", msg.c_str());
    return 1;
  }
  return 0;
}
