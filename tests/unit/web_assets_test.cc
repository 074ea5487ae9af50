// The embedded chat page: every file is found by its path, in the order the lookup expects,
// with a quoted ETag; the page and its bundle are there; unknown paths are not.
#include "server/web_assets.h"

#include <gtest/gtest.h>

#include <string>

namespace duet {
namespace {

TEST(WebAssets, EveryFileIsFoundByItsPath) {
  const auto all = web_assets();
  ASSERT_GE(all.size(), 3u);
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(all[i - 1].path, all[i].path) << "sorted for the binary search";
    }
    EXPECT_EQ(find_web_asset(all[i].path), &all[i]) << all[i].path;
    EXPECT_EQ(all[i].etag.size(), 22u) << all[i].path;
    EXPECT_TRUE(all[i].etag.front() == '"' && all[i].etag.back() == '"') << all[i].path;
  }
}

TEST(WebAssets, ThePageAndItsBundleAreEmbedded) {
  for (const char* path : {"/index.html", "/assets/app.js", "/assets/app.css"}) {
    const WebAsset* a = find_web_asset(path);
    ASSERT_NE(a, nullptr) << path;
    EXPECT_GT(a->size, 0u) << path;
  }
  const WebAsset* page = find_web_asset("/index.html");
  const std::string html(reinterpret_cast<const char*>(page->data), page->size);
  EXPECT_NE(html.find("/assets/app.js"), std::string::npos);
}

TEST(WebAssets, UnknownPathsAreNotFound) {
  for (const char* path :
       {"", "/", "/assets", "/assets/", "/assets/app.js/", "/assets/../index.html", "/index.htm",
        "/ASSETS/app.js", "/assets/app.j"})
    EXPECT_EQ(find_web_asset(path), nullptr) << path;
}

TEST(WebAssets, ContentTypesFollowTheExtension) {
  EXPECT_EQ(web_content_type("/index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(web_content_type("/assets/app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(web_content_type("/assets/app.css"), "text/css; charset=utf-8");
  EXPECT_EQ(web_content_type("/assets/fonts/KaTeX_Main-Regular.woff2"), "font/woff2");
  EXPECT_EQ(web_content_type("/assets/favicon.svg"), "image/svg+xml");
  EXPECT_EQ(web_content_type("/assets/x.unknown"), "application/octet-stream");
  EXPECT_EQ(web_content_type("/assets/js"), "application/octet-stream");
}

TEST(WebAssets, PolicyAllowsOnlyThisServer) {
  const std::string_view csp = web_content_security_policy();
  EXPECT_NE(csp.find("default-src 'self'"), std::string_view::npos);
  EXPECT_EQ(csp.find("http"), std::string_view::npos);
  EXPECT_EQ(csp.find('*'), std::string_view::npos);
  EXPECT_EQ(csp.find("unsafe-eval"), std::string_view::npos);
  EXPECT_EQ(csp.find("script-src 'self' 'unsafe-inline'"), std::string_view::npos);
}

}  // namespace
}  // namespace duet
