// A kernel file's program text: its includes pasted in, each file once, a cycle an error.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

#include "optune/kernels/opencl/program_text.hpp"

namespace {

using optune::opencl::with_includes;

TEST(ProgramText, IncludesArePastedInPlaceOnceEach) {
  const std::map<std::string, std::string> files = {
      {"a.cl", "// a\n#include \"b.cl\"\nint a;\n"},
      {"b.cl", "int b;\n"},
  };
  auto read = [&](const std::string& name) { return files.at(name); };
  const std::string text = "#if X\n  #  include \"a.cl\"\n#endif\n#include \"b.cl\"\nkernel();\n";
  EXPECT_EQ(with_includes(text, read), "#if X\n// a\nint b;\nint a;\n#endif\nkernel();\n");
  // A comment after the file name is part of the include line.
  EXPECT_EQ(with_includes("#include \"b.cl\"  // b's types\nk;\n", read), "int b;\nk;\n");
  EXPECT_EQ(with_includes("#include \"b.cl\" /* b */\nk;\n", read), "int b;\nk;\n");
  // A line that only mentions an include is text.
  EXPECT_EQ(with_includes("// #include \"a.cl\" here\n", read), "// #include \"a.cl\" here\n");
}

TEST(ProgramText, AMissingFileOrACycleIsAnError) {
  auto missing = [](const std::string& name) -> std::string { throw std::runtime_error("no " + name); };
  EXPECT_THROW(with_includes("#include \"gone.cl\"\n", missing), std::runtime_error);
  // Each file is pasted once, so a cycle ends; a chain deeper than 8 cannot.
  auto cycle = [](const std::string& name) { return "#include \"" + name + "x\"\n"; };
  EXPECT_THROW(with_includes("#include \"a\"\n", cycle), std::runtime_error);
}

}  // namespace
