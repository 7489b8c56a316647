package io.srdma.verbs.ibv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles a C program against the real {@code <infiniband/verbs.h>} that prints {@code sizeof} and
 * {@code offsetof} of every struct and field in {@link Structs}, and compares. Skips, naming the
 * packages, where gcc or libibverbs-dev is missing.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StructLayoutTest {
  private static final Path HEADER = Path.of("/usr/include/infiniband/verbs.h");

  @Test
  void shouldMatchTheLibibverbsHeader(@TempDir Path dir) throws Exception {
    assumeTrue(
        Files.exists(HEADER), "no " + HEADER + ": install libibverbs-dev (rdma-core's headers)");
    assumeTrue(onPath("gcc"), "no gcc on PATH: install gcc");
    Path source = dir.resolve("layout.c");
    Files.writeString(source, program(), StandardCharsets.UTF_8);
    Path binary = dir.resolve("layout");
    String compiled = run(List.of("gcc", "-o", binary.toString(), source.toString()));
    Map<String, Long> actual = parse(run(List.of(binary.toString())));

    List<String> mismatches = new ArrayList<>();
    int checked = 0;
    for (CLayout layout : Structs.ALL) {
      checked += compare(mismatches, "sizeof " + layout.struct(), layout.size(), actual);
      for (Map.Entry<String, Integer> f : layout.fields().entrySet()) {
        checked += compare(mismatches, layout.struct() + "." + f.getKey(), f.getValue(), actual);
      }
    }
    assertTrue(mismatches.isEmpty(), "layouts differ from verbs.h: " + mismatches + compiled);
    assertEquals(actual.size(), checked, "every printed value was compared");
  }

  private static int compare(
      List<String> out, String key, long expected, Map<String, Long> actual) {
    Long value = actual.get(key);
    if (value == null || value != expected) {
      out.add(key + ": Java " + expected + ", C " + value);
    }
    return 1;
  }

  /** The C program: one line per struct size and per field offset. */
  static String program() {
    StringBuilder c = new StringBuilder();
    c.append("#include <stdio.h>\n#include <stddef.h>\n#include <infiniband/verbs.h>\n");
    c.append("int main(void) {\n");
    for (CLayout layout : Structs.ALL) {
      c.append("  printf(\"sizeof ")
          .append(layout.struct())
          .append(" %zu\\n\", sizeof(struct ")
          .append(layout.struct())
          .append("));\n");
      for (String field : layout.fields().keySet()) {
        c.append("  printf(\"")
            .append(layout.struct())
            .append('.')
            .append(field)
            .append(" %zu\\n\", offsetof(struct ")
            .append(layout.struct())
            .append(", ")
            .append(field)
            .append("));\n");
      }
    }
    c.append("  return 0;\n}\n");
    return c.toString();
  }

  private static Map<String, Long> parse(String output) {
    Map<String, Long> values = new HashMap<>();
    for (String line : output.split("\n", -1)) {
      int space = line.lastIndexOf(' ');
      if (space > 0) {
        values.put(line.substring(0, space), Long.parseLong(line.substring(space + 1).trim()));
      }
    }
    return values;
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":", -1)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  private static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    boolean done = p.waitFor(60, TimeUnit.SECONDS);
    if (!done) {
      p.destroyForcibly();
      throw new AssertionError(command + " did not finish in 60 s");
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.exitValue(), () -> command + " failed:\n" + out);
    return out;
  }
}
