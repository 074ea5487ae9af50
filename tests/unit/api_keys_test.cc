// API keys: --api-key values split at commas, key files (comments, blank lines, Windows line
// ends), the errors (which name the file and line, never the key), and the check of a key a
// client sent against several.
#include "server/api_keys.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace duet {
namespace {

using Keys = std::vector<std::string>;

TEST(ApiKeys, ValuesSplitAtCommas) {
  auto keys = parse_api_key_values({"alpha", "beta,gamma", " delta , epsilon ,", ",,", ""});
  ASSERT_TRUE(keys) << keys.message();
  EXPECT_EQ(*keys, (Keys{"alpha", "beta", "gamma", "delta", "epsilon"}));
}

TEST(ApiKeys, NoValueOrOnlyEmptyOnesMeansNoKey) {
  EXPECT_EQ(*parse_api_key_values({}), Keys{});
  EXPECT_EQ(*parse_api_key_values({""}), Keys{});  // DUET_API_KEY= (set, empty)
}

TEST(ApiKeys, DuplicatesAreKeptOnce) {
  EXPECT_EQ(*parse_api_key_values({"a,b", "a", "b,a"}), (Keys{"a", "b"}));
}

TEST(ApiKeys, ValueWithSpaceOrControlCharacterIsRefusedWithoutEchoingIt) {
  for (const char* bad : {"se cret", "tab\there", "nul\x01", "caf\xc3\xa9", "del\x7f"}) {
    auto keys = parse_api_key_values({std::string("ok,") + bad});
    ASSERT_FALSE(keys) << bad;
    EXPECT_NE(keys.message().find("--api-key"), std::string::npos) << keys.message();
    EXPECT_EQ(keys.message().find(bad), std::string::npos) << "the key is not in the message";
  }
}

TEST(ApiKeys, FileOneKeyPerLineWithCommentsAndBlankLines) {
  const std::string text =
      "# keys for the team\n"
      "\n"
      "first-key\n"
      "   second-key   \n"
      "third-key\r\n"
      "\t# an indented comment\n"
      "with,comma\n"
      "last-without-newline";
  auto keys = parse_api_key_file(text, "/etc/duet/keys");
  ASSERT_TRUE(keys) << keys.message();
  EXPECT_EQ(*keys,
            (Keys{"first-key", "second-key", "third-key", "with,comma", "last-without-newline"}));
}

TEST(ApiKeys, FileWithNoKeyIsAnErrorNamingIt) {
  for (const char* text : {"", "\n\n", "# only a comment\n  \n# another\n"}) {
    auto keys = parse_api_key_file(text, "/etc/duet/keys");
    ASSERT_FALSE(keys) << text;
    EXPECT_EQ(keys.message(),
              "--api-key-file /etc/duet/keys: the file holds no key (one per line; "
              "# starts a comment)");
  }
}

TEST(ApiKeys, FileLineWithSpaceInsideIsAnErrorNamingTheLine) {
  auto keys = parse_api_key_file("good\n# c\nbad key here\n", "k.txt");
  ASSERT_FALSE(keys);
  EXPECT_EQ(keys.message(),
            "--api-key-file k.txt, line 3: a key must be printable ASCII without spaces");
}

class ApiKeyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("duet_api_keys_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ApiKeyFiles, FlagsAndFileTogether) {
  const std::string path = write("keys", "# comment\nfrom-file\nshared\n");
  auto keys = load_api_keys({"from-flag,shared"}, path);
  ASSERT_TRUE(keys) << keys.message();
  EXPECT_EQ(*keys, (Keys{"from-flag", "shared", "from-file"}));
}

TEST_F(ApiKeyFiles, MissingFileIsAnErrorNamingThePath) {
  const std::string path = (dir_ / "nope").string();
  auto keys = load_api_keys({"a"}, path);
  ASSERT_FALSE(keys);
  EXPECT_EQ(keys.message(), "--api-key-file " + path + ": cannot open: No such file or directory");
}

TEST_F(ApiKeyFiles, DirectoryIsNotAKeyFile) {
  auto keys = load_api_keys({}, dir_.string());
  ASSERT_FALSE(keys);
  EXPECT_EQ(keys.message(), "--api-key-file " + dir_.string() + ": not a regular file");
}

TEST_F(ApiKeyFiles, EmptyFileIsAnError) {
  const std::string path = write("empty", "");
  auto keys = load_api_keys({"a"}, path);
  ASSERT_FALSE(keys);
  EXPECT_NE(keys.message().find(path + ": the file holds no key"), std::string::npos);
}

TEST(ApiKeys, AnyKeyIsAccepted) {
  const Keys keys = {"alpha", "beta", "gamma-long-key"};
  for (const std::string& k : keys) EXPECT_TRUE(api_key_accepted(k, keys)) << k;
  for (const char* wrong : {"", "alph", "alphaa", "ALPHA", "beta ", "gamma-long-kez", "delta"})
    EXPECT_FALSE(api_key_accepted(wrong, keys)) << wrong;
  EXPECT_FALSE(api_key_accepted("alpha", {}));
}

}  // namespace
}  // namespace duet
