// The HTML report: self-contained, and what a real browser renders of it
// (headless Chromium; skipped with the reason when it is not installed).
#include "report/html.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "report_fixture.h"

namespace magneton::report {
namespace {

namespace fs = std::filesystem;

std::string Chromium() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(c)) return c;
  return "";
}

std::string RunCommand(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / "magneton_html_test";
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string Render(fixture::ReportCase& c) {
  return RenderHtml(c.report, c.pair.a.b.run, c.pair.b.b.run, {"fp32 run.mgt", "tf32 <run>.mgt"});
}

TEST(ReportHtml, SelfContainedAndEscaped) {
  auto c = fixture::Tf32Report();
  std::string html = Render(c);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*["']?(//|[a-z]+:))")));
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("tf32 &lt;run&gt;.mgt"), std::string::npos);  // names are escaped
  EXPECT_NE(html.find("id=\"finding-1\""), std::string::npos);
  EXPECT_NE(html.find("torch.backends.cuda.matmul.allow_tf32"), std::string::npos);
  // Side a has a power series, side b none: the report says so for b.
  EXPECT_NE(html.find("polyline class=\"series\""), std::string::npos);
  EXPECT_NE(html.find("id=\"power-b-missing\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"power-a-missing\""), std::string::npos);
}

TEST(ReportHtml, RendersInHeadlessChromium) {
  std::string chromium = Chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (Debian package 'chromium'): cannot check rendering";
  auto c = fixture::Tf32Report();
  std::string file = WriteTemp("report.html", Render(c));
  std::string flags = "--headless --no-sandbox --disable-gpu --no-first-run --disable-extensions";
  std::string dom = RunCommand(chromium + " " + flags + " --dump-dom 'file://" + file + "' 2>/dev/null");
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  // The self-check script ran after layout: it counts drawn bars and lines.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex(R"re(data-rendered-marks="(\d+)")re")))
      << dom.substr(0, 400);
  int marks = std::stoi(m[1]);
  // Summary bar + 2 bars per finding + 2 per region row + 1 power line.
  int expected = 1 + 2 * 1 + 2 * static_cast<int>(c.report.regions.size()) + 1;
  EXPECT_EQ(marks, expected);
  ASSERT_TRUE(std::regex_search(dom, m, std::regex(R"re(data-findings="(\d+)")re")));
  EXPECT_EQ(std::stoi(m[1]), 1);
  EXPECT_NE(dom.find("TF32 is off for float32 matmuls"), std::string::npos);

  std::string png = (fs::temp_directory_path() / "magneton_html_test" / "report.png").string();
  fs::remove(png);
  RunCommand(chromium + " " + flags + " --window-size=1200,2000 --screenshot=" + png + " 'file://" + file +
             "' 2>/dev/null");
  ASSERT_TRUE(fs::exists(png)) << "no screenshot";
  std::ifstream in(png, std::ios::binary);
  unsigned char head[24] = {};
  in.read(reinterpret_cast<char*>(head), sizeof head);
  EXPECT_EQ(head[1], 'P');
  auto be32 = [&](int at) {
    return (head[at] << 24) | (head[at + 1] << 16) | (head[at + 2] << 8) | head[at + 3];
  };
  EXPECT_EQ(be32(16), 1200);  // IHDR width
  EXPECT_EQ(be32(20), 2000);
  EXPECT_GT(fs::file_size(png), 20000u) << "a report with tables and charts is not a blank page";
}

}  // namespace
}  // namespace magneton::report
