package io.srdma.keys;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the real {@code openssl} command line as an independent implementation. */
final class OpenSsl {
  private static final boolean AVAILABLE = probe();

  /** What a run printed and how it exited. */
  static final class Result {
    final int exitCode;
    final String output;

    Result(int exitCode, String output) {
      this.exitCode = exitCode;
      this.output = output;
    }

    @Override
    public String toString() {
      return "exit " + exitCode + ":\n" + output;
    }
  }

  private OpenSsl() {}

  /** Skips the calling test, saying why, if openssl is not installed. */
  static void assumeAvailable() {
    assumeTrue(
        AVAILABLE,
        "openssl is not on the PATH: install the Debian package 'openssl' (.ci/run does) to run"
            + " the interoperability tests");
  }

  static Result run(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add("openssl");
    cmd.addAll(List.of(args));
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .start();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("openssl " + String.join(" ", args) + " did not finish in 30 s");
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return new Result(p.exitValue(), out);
    } finally {
      p.destroyForcibly();
    }
  }

  private static boolean probe() {
    try {
      Process p = new ProcessBuilder("openssl", "version").redirectErrorStream(true).start();
      try {
        p.getInputStream().readAllBytes();
        return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
      } finally {
        p.destroyForcibly();
      }
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
