// Runs a fuzz target over files instead of under libFuzzer: every regular
// file named on the command line, or found (recursively) in a directory
// named there, is passed once to LLVMFuzzerTestOneInput. `make test` runs
// each target over its seed corpus this way, in the sanitized build, so a
// crash or a sanitizer report on a seed fails the suite; `make fuzz` links
// the same targets with libFuzzer instead (fuzz/CMakeLists.txt).
//
// Exit: 0 when every input ran (a crash aborts the process), 2 when an
// argument names nothing readable or no input was found.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg, ec)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.push_back(arg);
    }
    for (const auto& file : files) {
      if (!RunFile(file)) {
        std::cerr << argv[0] << ": cannot read " << file << "\n";
        return 2;
      }
      ++ran;
    }
  }
  if (ran == 0) {
    std::cerr << "usage: " << argv[0] << " FILE_OR_DIRECTORY... (no input found)\n";
    return 2;
  }
  std::cout << ran << " inputs ran\n";
  return 0;
}
