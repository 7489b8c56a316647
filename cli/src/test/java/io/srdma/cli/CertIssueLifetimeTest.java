package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.Pem;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code srdma cert issue} never issues a certificate that outlives its CA. */
class CertIssueLifetimeTest {
  @TempDir Path tmp;

  /** A CA in {@code tmp/ca} that ends {@code left} from now (made in the past by a fixed clock). */
  private Path caWithLeft(Duration left) throws Exception {
    Path dir = tmp.resolve("ca");
    Method init =
        DeploymentCa.class.getDeclaredMethod("init", Path.class, char[].class, Clock.class);
    init.setAccessible(true);
    Instant made = Instant.now().minus(DeploymentCa.CA_VALIDITY).plus(left);
    init.invoke(null, dir, null, Clock.fixed(made, ZoneOffset.UTC));
    return dir;
  }

  private static CliRun issue(Path ca, Path out, String days) {
    return CliRun.of(
        "cert",
        "issue",
        "--ca",
        ca.toString(),
        "--tenant",
        "acme",
        "--peer",
        "kv-1",
        "--days",
        days,
        "--out",
        out.toString());
  }

  @Test
  void shouldRefuseACertificateOutlivingItsCaNamingBothDatesAndWriteNothing() throws Exception {
    Path ca = caWithLeft(Duration.ofDays(20).plusHours(2));
    Instant caEnd = Pem.readCertificate(ca.resolve("ca.crt")).getNotAfter().toInstant();
    String issued = Files.readString(ca.resolve("issued.txt"));
    Path out = tmp.resolve("out");

    CliRun r = issue(ca, out, "90");
    assertEquals(2, r.exit(), r.err());
    assertTrue(r.err().startsWith("srdma cert issue: "), r.err());
    assertTrue(r.err().contains("would outlive its CA"), r.err());
    assertTrue(r.err().contains(caEnd.toString()), r.err());
    assertTrue(r.err().contains("at most 20 days"), r.err());
    assertTrue(r.out().isEmpty(), r.out());
    assertFalse(Files.exists(out), "no output directory for a refused certificate");
    assertEquals(issued, Files.readString(ca.resolve("issued.txt")), "no issuance recorded");

    CliRun ok = issue(ca, out, "20");
    assertEquals(0, ok.exit(), ok.err());
    assertFalse(
        Pem.readCertificate(out.resolve("acme.kv-1.crt")).getNotAfter().toInstant().isAfter(caEnd));
  }

  @Test
  void shouldRefuseToIssueFromAnExpiredCa() throws Exception {
    Path ca = caWithLeft(Duration.ofHours(-1));
    CliRun r = issue(ca, tmp.resolve("out"), "1");
    assertEquals(1, r.exit(), r.err());
    assertTrue(r.err().contains("expired at"), r.err());
    assertFalse(Files.exists(tmp.resolve("out")));
  }
}
