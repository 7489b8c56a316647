package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class DemoCommandTest {
  @TempDir Path dir;

  @Test
  void demoOnceRunsEverythingAndEveryAttackIsRefused() throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = SrdmaCommand.newCommandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    int rc = cmd.execute("demo", "--once", "--state-dir", dir.toString());
    String text = out.toString();
    assertEquals(0, rc, text + err);
    // issue 18: results, not logs; the phases from the start; the log lines in the run's file
    assertEquals("", err.toString());
    assertTrue(text.startsWith("creating a dev CA, certificates and the policy under "), text);
    for (String phase :
        List.of(
            "starting the host (provider soft) ... done (",
            "moving sealed data for acme and globex ... done (",
            "trying the attacks ... done (")) {
      assertTrue(text.contains(phase), phase + " in\n" + text);
    }
    assertTrue(!text.contains(" WARN ") && !text.contains(" INFO "), text);
    // the JDK's "/127.0.0.1:port" (a URL's "//127.0.0.1" is fine)
    assertTrue(
        !java.util.regex.Pattern.compile("(?<![/\\w])/127\\.0\\.0\\.").matcher(text).find(), text);
    java.util.regex.Matcher log =
        java.util.regex.Pattern.compile("log: (\\S+srdma\\.log)").matcher(text);
    assertTrue(log.find(), text);
    assertTrue(
        java.nio.file.Files.readString(Path.of(log.group(1))).contains("INFO"), log.group(1));
    assertTrue(text.contains("demo: every outcome as expected"), text);
    assertTrue(text.contains("another tenant's rkey and address (PD check)"), text);
    assertTrue(text.contains("QUOTA_EXCEEDED after"), text);
    assertTrue(!text.contains("FAIL "), text);
    // issues 14 and 15: every attack row is present and passed (a row starts with its mark)
    for (String row :
        List.of(
            "peer with no certificate",
            "resume a TLS session (client context reused)",
            "tenant pinned to another host name",
            "tenant certificate acting as a host",
            "notification naming a released grant's slot",
            "flood of zero-length WRITE_WITH_IMM",
            "idle connections from one address, then a tenant",
            "HELLO naming another responder address",
            "revoke a live peer's certificate (CRL)",
            "revoked peer reconnects",
            "older CRL put back in place",
            "WRITE in flight across a grant's revocation",
            "reader whose grant ended, after the rotation",
            "forged owner record (READ+WRITE peer)",
            "old owner record put back",
            "hostile policy (1,500 nested '[')")) {
      assertTrue(
          text.lines().anyMatch(l -> l.startsWith("ok    " + row)), row + " passed in\n" + text);
    }
    assertTrue(text.contains("refused (staleNotifications +1, audited)"), text);
    assertTrue(text.contains("CRL_ROLLBACK, CRL number stays"), text);
    assertTrue(text.contains("reader refused: BAD_SIGNATURE"), text);
    assertTrue(text.contains("reader refused: ROLLED_BACK"), text);
    assertTrue(text.contains("hostile-policy.yaml:3:"), text);
    assertTrue(text.contains("host audited CERTIFICATE_REVOKED"), text);
  }
}
