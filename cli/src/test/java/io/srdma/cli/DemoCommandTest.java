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
  void demoOnceRunsEverythingAndEveryAttackIsRefused() {
    StringWriter out = new StringWriter();
    CommandLine cmd = new CommandLine(new SrdmaCommand());
    cmd.setOut(new PrintWriter(out, true));
    int rc = cmd.execute("demo", "--once", "--state-dir", dir.toString());
    String text = out.toString();
    assertEquals(0, rc, text);
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
