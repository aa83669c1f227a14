// word_count_stream: counts the words of a file with a stream pipeline
// that reads like the sentence describing it: the file's lines, without
// the empty ones, in chunks of 500, each chunk counted on the blocking
// pool (four at a time, in any order), the counts folded into one table.
//
//   word_count_stream [FILE=README.md] [TOP=10]
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <pollux/pollux.hpp>

using namespace pollux;

namespace {

using Counts = std::map<std::string, std::size_t>;

// The file's text, read on the blocking pool (reading a file blocks).
auto read_file(std::string path) {
  return spawn_blocking([path = std::move(path)] {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  });
}

// The lines of a text.
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

// Counts the words of some lines: letters and digits, lower-cased.
Counts count_words(const std::vector<std::string>& lines) {
  Counts counts;
  for (const std::string& line : lines) {
    std::string word;
    for (char c : line + ' ') {
      if (std::isalnum(static_cast<unsigned char>(c))) {
        word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else if (!word.empty()) {
        ++counts[word];
        word.clear();
      }
    }
  }
  return counts;
}

// A chunk's counts into the total. Like a JoinHandle, spawn_blocking gives
// Result<Counts, Cancelled>; value() throws for a chunk that the runtime's
// shutdown dropped before it ran.
Counts merge_counts(Counts total, const Result<Counts, Cancelled>& part) {
  for (const auto& [word, n] : part.value()) total[word] += n;
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "README.md";
  std::size_t top = argc > 2 ? std::stoul(argv[2]) : 10;
  try {
    auto rt = Runtime::current_thread();
    auto inside = rt.enter();  // spawn_blocking below finds the runtime's pool
    Counts counts =
        rt.block_on(read_file(path) | then([](Result<std::string, Cancelled> text) {
                      return iter(split_lines(text.value()))
                             | filter([](const std::string& line) { return !line.empty(); }) | chunks(500)
                             | map([](std::vector<std::string> chunk) {
                                 return spawn_blocking([chunk = std::move(chunk)] { return count_words(chunk); });
                               })
                             | buffer_unordered(4) | fold(Counts{}, merge_counts);
                    }));
    std::vector<std::pair<std::size_t, std::string>> ranked;
    std::size_t words = 0;
    for (const auto& [word, n] : counts) {
      ranked.emplace_back(n, word);
      words += n;
    }
    std::sort(ranked.begin(), ranked.end(),
              [](auto& a, auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    std::printf("word_count_stream: %s has %zu words, %zu different; the %zu most frequent:\n", path.c_str(), words,
                counts.size(), std::min(top, ranked.size()));
    for (std::size_t i = 0; i < top && i < ranked.size(); ++i)
      std::printf("  %6zu  %s\n", ranked[i].first, ranked[i].second.c_str());
    return words > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "word_count_stream: %s\n", e.what());
    return 1;
  }
}
