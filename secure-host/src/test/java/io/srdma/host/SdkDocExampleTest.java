package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/sdk.md holds one complete Java example. This test takes it out of the page, compiles it
 * against the test classpath and runs it: a host and a tenant on loopback that really connect,
 * write, read and revoke on the soft provider. If the page and the API drift apart, it fails.
 */
class SdkDocExampleTest {
  private static final Path DOC = Path.of("..", "docs", "sdk.md");
  private static final String BEGIN = "<!-- sdk-example: begin -->\n```java\n";
  private static final String END = "```\n<!-- sdk-example: end -->";

  @TempDir Path dir;

  @Test
  @Timeout(120)
  void theDocumentedExampleCompilesAndRuns() throws Exception {
    String md = Files.readString(DOC, StandardCharsets.UTF_8);
    assertEquals(
        1, count(md, "```java"), "docs/sdk.md must hold exactly one ```java block: the example");
    int begin = md.indexOf(BEGIN);
    int end = md.indexOf(END, Math.max(begin, 0));
    assertTrue(begin >= 0 && end > begin, "sdk-example markers missing in " + DOC);
    String source = md.substring(begin + BEGIN.length(), end);

    Matcher m = Pattern.compile("public final class (\\w+)").matcher(source);
    assertTrue(m.find(), "the example declares no public final class");
    String className = m.group(1);
    assertTrue(!source.startsWith("package "), "the example must be in the default package");

    Path src = dir.resolve("src");
    Path classes = dir.resolve("classes");
    Files.createDirectories(src);
    Files.createDirectories(classes);
    Path file = src.resolve(className + ".java");
    Files.writeString(file, source, StandardCharsets.UTF_8);

    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertTrue(javac != null, "no system Java compiler (a JDK is needed)");
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    boolean compiled;
    try (StandardJavaFileManager files =
        javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
      compiled =
          javac
              .getTask(
                  null,
                  files,
                  diagnostics,
                  List.of(
                      "-classpath",
                      System.getProperty("java.class.path"),
                      "-d",
                      classes.toString(),
                      "-proc:none",
                      "-Xlint:all",
                      "-encoding",
                      "UTF-8"),
                  null,
                  files.getJavaFileObjects(file))
              .call();
    }
    StringBuilder report = new StringBuilder();
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      report
          .append(d.getKind())
          .append(" line ")
          .append(d.getLineNumber())
          .append(": ")
          .append(d.getMessage(Locale.ROOT))
          .append('\n');
    }
    assertTrue(compiled, "the example in docs/sdk.md does not compile:\n" + report);
    assertEquals("", report.toString(), "the example in docs/sdk.md compiles with warnings");

    Path work = dir.resolve("work");
    Files.createDirectories(work);
    long started = System.nanoTime();
    try (URLClassLoader loader =
        new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
      Method run = loader.loadClass(className).getMethod("run", Path.class);
      try {
        run.invoke(null, work);
      } catch (InvocationTargetException e) {
        throw new AssertionError(
            "the example in docs/sdk.md failed: " + e.getCause(), e.getCause());
      }
    }
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    assertTrue(took.compareTo(Duration.ofSeconds(30)) < 0, "the example took " + took);

    String audit = Files.readString(work.resolve("audit.log"), StandardCharsets.UTF_8);
    assertTrue(audit.contains("\"action\":\"grant\""), "no grant audited:\n" + audit);
    assertTrue(audit.contains("\"action\":\"revoke\""), "no revoke audited:\n" + audit);
  }

  private static int count(String text, String needle) {
    int n = 0;
    for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
      n++;
    }
    return n;
  }
}
