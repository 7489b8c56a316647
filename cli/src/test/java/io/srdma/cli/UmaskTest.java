package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs {@code srdma} in a child JVM under {@code umask 000} (a JVM cannot change its own umask) and
 * checks that every file it creates has the permissions it chose, not the umask's.
 */
class UmaskTest {
  @TempDir Path dir;

  private void srdma(String... args) throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    StringBuilder cmd =
        new StringBuilder("umask 000 && exec '")
            .append(java)
            .append("' -cp \"$CP\" io.srdma.cli.SrdmaCommand");
    for (String a : args) {
      cmd.append(" '").append(a).append('\'');
    }
    ProcessBuilder pb = new ProcessBuilder("sh", "-c", cmd.toString()).redirectErrorStream(true);
    pb.environment().put("CP", System.getProperty("java.class.path"));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(true, p.waitFor(60, TimeUnit.SECONDS), "srdma did not finish");
    assertEquals(0, p.exitValue(), out);
  }

  private static String perms(Path p) throws Exception {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
  }

  @Test
  @Timeout(120)
  void shouldCreateFilesWithExplicitPermissionsUnderUmaskZero() throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/bin/sh")), "needs /bin/sh");
    Path ca = dir.resolve("ca");
    Path out = dir.resolve("out");
    srdma("ca", "init", "--dir", ca.toString());
    srdma(
        "cert",
        "issue",
        "--ca",
        ca.toString(),
        "--tenant",
        "acme",
        "--peer",
        "p1",
        "--out",
        out.toString());
    srdma("cert", "revoke", "--ca", ca.toString(), out.resolve("acme.p1.crt").toString());
    assertEquals("rwx------", perms(ca));
    assertEquals("rw-------", perms(ca.resolve("ca.key")));
    for (String f : List.of("ca.crt", "crl.pem", "issued.txt")) {
      assertEquals("rw-r--r--", perms(ca.resolve(f)), f);
    }
    assertEquals("rw-------", perms(ca.resolve(".lock")));
    assertEquals("rw-r--r--", perms(out.resolve("acme.p1.crt")));
    assertEquals("rw-------", perms(out.resolve("acme.p1.key")));
  }
}
