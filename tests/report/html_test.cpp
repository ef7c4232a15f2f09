// The HTML report: self-contained, and what a real browser renders of it
// (headless Chromium; skipped with the reason when it is not installed).
#include "report/html.h"

#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "core/store.h"
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

// A page's screenshot as RGB pixels (libpng's simplified reader); empty when unreadable.
struct Pixels {
  int width = 0, height = 0;
  std::vector<unsigned char> rgb;
  size_t Count(unsigned char r, unsigned char g, unsigned char b) const {
    size_t n = 0;
    for (size_t i = 0; i + 2 < rgb.size(); i += 3) n += rgb[i] == r && rgb[i + 1] == g && rgb[i + 2] == b;
    return n;
  }
};

Pixels ReadPng(const std::string& path) {
  Pixels out;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return out;
  image.format = PNG_FORMAT_RGB;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) return {};
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  return out;
}

std::string Attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  return std::regex_search(dom, m, std::regex(name + "=\"([0-9]+)\"")) ? m[1].str() : "";
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

// The diff of the CPU GELU fixtures with their measured passes: a timeline on
// both sides (host operators), one waste finding.
struct GeluReport {
  Run a, b, ma, mb;
  analysis::DiffReport report;
};

std::unique_ptr<GeluReport> LoadGelu() {
  auto g = std::make_unique<GeluReport>();
  const std::string dir = std::string(MAGNETON_TEST_DATA) + "/diff/";
  for (auto [stem, run] : {std::pair{"gelu_new", &g->a}, std::pair{"gelu_new-measured", &g->ma},
                           std::pair{"gelu_fused", &g->b}, std::pair{"gelu_fused-measured", &g->mb}}) {
    auto r = LoadRun(dir + stem + ".mgt");
    if (!r.ok()) return nullptr;
    *run = std::move(*r);
  }
  auto r = analysis::DiffRuns(g->a, g->b, &g->ma, &g->mb, analysis::DiffOptions{});
  if (!r.ok()) return nullptr;
  g->report = std::move(*r);
  return g;
}

TEST(ReportHtml, TimelineHoldsTheRegionsAndAClickedFindingHighlightsThem) {
  auto g = LoadGelu();
  ASSERT_TRUE(g);
  const auto& r = g->report;
  ASSERT_TRUE(r.timelines.a.available && r.timelines.b.available);
  ASSERT_EQ(r.findings[0].rank, 1);
  std::string html = RenderHtml(r, g->ma, g->mb, {"gelu_new.mgt", "gelu_fused.mgt"});
  EXPECT_NE(html.find("id=\"timeline\""), std::string::npos);
  EXPECT_NE(html.find("data-finding=\"0\""), std::string::npos);  // the finding card and its items

  std::string chromium = Chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (Debian package 'chromium'): cannot check rendering";
  std::string file = WriteTemp("timeline.html", html);
  std::string flags = "--headless --no-sandbox --disable-gpu --no-first-run --disable-extensions";
  // Opened at #finding-1, the page highlights that finding's items, as a click on it does.
  std::string dom =
      RunCommand(chromium + " " + flags + " --dump-dom 'file://" + file + "#finding-1' 2>/dev/null");
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  size_t items = r.timelines.a.items.size() + r.timelines.b.items.size();
  std::set<int64_t> regions;
  size_t of_top = 0;
  for (const auto* t : {&r.timelines.a, &r.timelines.b})
    for (const auto& it : t->items) {
      if (it.region >= 0) regions.insert(r.regions[it.region].region);
      of_top += it.finding == 0;
    }
  ASSERT_GT(of_top, 0u);
  EXPECT_EQ(Attribute(dom, "data-timeline-items"), std::to_string(items));
  EXPECT_EQ(Attribute(dom, "data-timeline-regions"), std::to_string(regions.size()));
  EXPECT_EQ(Attribute(dom, "data-highlighted"), std::to_string(of_top));
  EXPECT_NE(dom.find("class=\"finding waste hl\""), std::string::npos) << "the finding's card is marked too";

  // A screenshot, checked to show the timeline: its items within noise and
  // the idle strip have colours nothing else on the page uses.
  std::string png = (fs::temp_directory_path() / "magneton_html_test" / "timeline.png").string();
  fs::remove(png);
  RunCommand(chromium + " " + flags + " --window-size=1200,2400 --screenshot=" + png + " 'file://" + file +
             "' 2>/dev/null");
  Pixels px = ReadPng(png);
  ASSERT_EQ(px.width, 1200) << "no readable screenshot at " << png;
  std::set<unsigned> colors;
  for (size_t i = 0; i + 2 < px.rgb.size(); i += 3) colors.insert(px.rgb[i] << 16 | px.rgb[i + 1] << 8 | px.rgb[i + 2]);
  EXPECT_GT(colors.size(), 50u) << "a blank page";
  EXPECT_GT(px.Count(0x8f, 0xa3, 0xb8), 400u) << "timeline items within noise (#8fa3b8) were not painted";
  EXPECT_GT(px.Count(0xfb, 0xe3, 0xe3), 1000u) << "the timeline's idle strip (#fbe3e3) was not painted";
}

}  // namespace
}  // namespace magneton::report
