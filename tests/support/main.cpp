// doctest's main, and a listener that names each test case on stderr as
// it starts: a suite stopped by its timeout (a hang) then shows, in the
// output meson keeps, which test case it was in. Unbuffered stderr, so the
// line is out before the hang; meson shows a suite's output only when the
// suite fails.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdio>

namespace {

struct NameEachTestCase : doctest::IReporter {
  explicit NameEachTestCase(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& test) override {
    std::fprintf(stderr, "[started] %s\n", test.m_name);
  }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("name-each-test-case", 1, NameEachTestCase);
