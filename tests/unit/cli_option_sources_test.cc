// cli/common: flags from the environment and a config file (command line first), where each
// came from, llama-server's spellings, and the suggestion for a mistyped command.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "cli/common/command_line.h"
#include "cli/common/option_sources.h"

namespace duet::cli {
namespace {

struct Flags {
  int port = 8080;
  std::string think = "auto";
  bool fit = false;
  std::vector<std::string> origins;
  std::string key;
};

// A subcommand like serve's, on `app`.
CLI::App* make(CLI::App& app, Flags& f) {
  CLI::App* cmd = app.add_subcommand("serve", "");
  cmd->add_option("--port", f.port, "")->check(CLI::Range(0, 65535));
  cmd->add_option("--think", f.think, "")->check(CLI::IsMember({"on", "off", "auto"}));
  cmd->add_flag("--fit", f.fit, "");
  cmd->add_option("--cors-origin", f.origins, "");
  cmd->add_option("--api-key", f.key, "");
  return cmd;
}

// An app with the subcommand, its command line parsed.
struct Parsed {
  CLI::App app;
  Flags f;
  CLI::App* cmd = make(app, f);
  explicit Parsed(std::vector<std::string> args = {"serve"}) {
    args.insert(args.begin(), "duet");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    app.parse(static_cast<int>(argv.size()), argv.data());
  }
};

class OptionSourcesTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* v : {"DUET_PORT", "DUET_THINK", "DUET_FIT", "DUET_API_KEY"}) unsetenv(v);
    std::filesystem::remove(config_);
  }
  std::string write_config(const std::string& text) {
    std::ofstream(config_) << text;
    return config_;
  }
  std::string config_ = ::testing::TempDir() + "duet_option_sources_test.toml";
};

TEST_F(OptionSourcesTest, CommandLineThenEnvironmentThenFileThenDefault) {
  Parsed app({"serve", "--port", "9000"});
  setenv("DUET_PORT", "9100", 1);  // the command line wins
  setenv("DUET_THINK", "off", 1);  // the environment wins over the file
  const std::string path = write_config(
      "port = 9200\nthink = \"on\"\nfit = true\ncors_origin = [\"https://a.example\", "
      "\"https://b.example\"]\napi-key = \"s3cret\"\n");
  OptionSources sources({"api-key"});
  ASSERT_TRUE(sources.apply(*app.cmd, path, {}));
  EXPECT_EQ(app.f.port, 9000);
  EXPECT_EQ(app.f.think, "off");
  EXPECT_TRUE(app.f.fit);
  EXPECT_EQ(app.f.origins, (std::vector<std::string>{"https://a.example", "https://b.example"}));
  EXPECT_EQ(app.f.key, "s3cret");
  const std::string printed = sources.print(*app.cmd, {});
  EXPECT_NE(printed.find("port = 9000  # command line"), std::string::npos) << printed;
  EXPECT_NE(printed.find("think = \"off\"  # environment DUET_THINK"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("fit = true  # config file " + path), std::string::npos) << printed;
  EXPECT_NE(printed.find("cors-origin = [\"https://a.example\", \"https://b.example\"]"),
            std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("s3cret"), std::string::npos) << "a secret was printed:\n" << printed;
  EXPECT_NE(printed.find("api-key = \"(hidden)\""), std::string::npos) << printed;
}

TEST_F(OptionSourcesTest, DefaultsArePrintedWithTheirVariables) {
  Parsed app;
  OptionSources sources;
  ASSERT_TRUE(sources.apply(*app.cmd, "", {}));
  const std::string printed = sources.print(*app.cmd, {});
  EXPECT_NE(printed.find("port = 8080  # default (DUET_PORT)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("think = \"auto\"  # default"), std::string::npos) << printed;
  EXPECT_NE(printed.find("fit = false  # default"), std::string::npos) << printed;
}

TEST_F(OptionSourcesTest, BadValuesNameTheirSource) {
  {
    Parsed app;
    setenv("DUET_THINK", "sometimes", 1);
    Status s = OptionSources().apply(*app.cmd, "", {});
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("environment DUET_THINK: --think"), std::string::npos)
        << s.message();
    unsetenv("DUET_THINK");
  }
  {
    Parsed app;
    Status s = OptionSources().apply(*app.cmd, write_config("port = 99999\n"), {});
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("config file " + config_ + ": --port"), std::string::npos)
        << s.message();
  }
  {
    Parsed app;
    Status s = OptionSources().apply(*app.cmd, write_config("prot = 9000\n"), {});
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("'prot' is not a flag of duet serve"), std::string::npos)
        << s.message();
  }
  {
    Parsed app;
    Status s = OptionSources().apply(*app.cmd, "/nonexistent/duet.toml", {});
    ASSERT_FALSE(s);
    EXPECT_NE(s.message().find("/nonexistent/duet.toml"), std::string::npos) << s.message();
  }
}

TEST_F(OptionSourcesTest, ASectionNamedForTheCommandIsRead) {
  Parsed app;
  ASSERT_TRUE(OptionSources().apply(*app.cmd, write_config("[serve]\nport = 9300\n"), {}));
  EXPECT_EQ(app.f.port, 9300);
  Parsed app2;
  Status s = OptionSources().apply(*app2.cmd, write_config("[run]\nport = 9300\n"), {});
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("[run]"), std::string::npos) << s.message();
}

TEST(OptionSources, EnvironmentNames) {
  EXPECT_EQ(OptionSources::env_name("ctx-size"), "DUET_CTX_SIZE");
  EXPECT_EQ(OptionSources::env_name("api-key"), "DUET_API_KEY");
}

TEST(CommandLine, LlamaServerSpellings) {
  const auto out = rewrite_llama_spellings(
      {"duet", "serve", "-ctk", "q8_0", "-ctv=q8_0", "-np", "4", "-c", "8192", "--", "-np"});
  EXPECT_EQ(out, (std::vector<std::string>{"duet", "serve", "--cache-type-k", "q8_0",
                                           "--cache-type-v=q8_0", "--parallel", "4", "-c", "8192",
                                           "--", "-np"}));
}

TEST(CommandLine, SuggestsTheNearestCommand) {
  const std::vector<std::string> names = {"serve", "run", "bench", "info", "forge", "render"};
  EXPECT_EQ(closest_name("serv", names), "serve");
  EXPECT_EQ(closest_name("sever", names), "serve");
  EXPECT_EQ(closest_name("rnu", names), "run");
  EXPECT_EQ(closest_name("bnech", names), "bench");
  EXPECT_EQ(closest_name("xyzzy", names), "");
}

}  // namespace
}  // namespace duet::cli
