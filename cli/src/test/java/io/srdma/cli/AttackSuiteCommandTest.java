package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.host.HostOptions;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import io.srdma.server.Addresses;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code srdma attack-suite} proves its target before it reports anything: against a closed port, a
 * service that is not an srdma host, or with a missing CRL it prints one line and exits 2, and
 * never an "ok" row.
 */
@Timeout(60)
class AttackSuiteCommandTest {
  @TempDir static Path dir;
  static Path ca;

  @BeforeAll
  static void deployment() throws IOException {
    DeploymentCa deployment = DeploymentCa.init(dir.resolve("ca"), null);
    deployment
        .issuePeer(PeerIdentity.of("acme", "trainer-2"), Duration.ofDays(1))
        .writeTo(dir.resolve("attacker.crt"), dir.resolve("attacker.key"), null);
    deployment
        .issuePeer(PeerIdentity.of("globex", "loader-1"), Duration.ofDays(1))
        .writeTo(dir.resolve("victim.crt"), dir.resolve("victim.key"), null);
    ca = dir.resolve("ca").resolve(DeploymentCa.CA_CERTIFICATE);
  }

  private static List<String> args(String target, boolean withCrl) {
    List<String> a = new ArrayList<>();
    a.addAll(List.of("attack-suite", "--target", target, "--ca", ca.toString()));
    if (withCrl) {
      a.addAll(List.of("--crl", dir.resolve("ca").resolve(DeploymentCa.CRL).toString()));
    }
    a.addAll(
        List.of("--attacker", dir.resolve("attacker.crt") + "," + dir.resolve("attacker.key")));
    a.addAll(List.of("--region", "kvcache"));
    a.addAll(List.of("--victim", dir.resolve("victim.crt") + "," + dir.resolve("victim.key")));
    a.addAll(List.of("--victim-region", "features"));
    return a;
  }

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static void assertNoRowAndOneLine(CliRun r) {
    assertEquals(2, r.exit(), r.out() + r.err());
    assertFalse(r.out().contains("ok "), "no row may be reported: " + r.out());
    assertFalse(r.out().contains("FAIL"), "no row may be reported: " + r.out());
    assertEquals(1, r.err().strip().lines().count(), "one line: " + r.err());
    assertFalse(r.err().contains("Exception"), "no Java class names: " + r.err());
    assertFalse(r.err().contains("\tat "), "no stack trace: " + r.err());
  }

  @Test
  void shouldExitTwoWithOneLineAgainstAClosedPort() throws IOException {
    CliRun r = CliRun.of(args("127.0.0.1:" + closedPort(), true).toArray(new String[0]));
    assertNoRowAndOneLine(r);
    assertTrue(r.err().contains("no srdma host answers at 127.0.0.1:"), r.err());
    assertTrue(r.err().contains("connection refused"), r.err());
  }

  @Test
  void shouldExitTwoAgainstAServiceThatIsNotAnSrdmaHost() throws Exception {
    try (ServerSocket http = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
      Thread server =
          new Thread(
              () -> {
                while (!http.isClosed()) {
                  try (Socket s = http.accept()) {
                    s.getOutputStream()
                        .write(
                            "HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                  } catch (IOException e) {
                    return;
                  }
                }
              },
              "test-http");
      server.setDaemon(true);
      server.start();
      CliRun r = CliRun.of(args("127.0.0.1:" + http.getLocalPort(), true).toArray(new String[0]));
      assertNoRowAndOneLine(r);
      assertTrue(r.err().contains("no srdma host answers at"), r.err());
      http.close();
      server.join(5_000);
    }
  }

  @Test
  void shouldFindTheCrlBesideTheCaWhenCrlIsNotGiven() throws IOException {
    // --crl is optional: crl.pem beside --ca is used, and the run gets as far as the target check
    CliRun r = CliRun.of(args("127.0.0.1:" + closedPort(), false).toArray(new String[0]));
    assertNoRowAndOneLine(r);
    assertTrue(r.err().contains("no srdma host answers at"), r.err());
  }

  @Test
  void shouldSayWhatIsMissingWithoutACrl() throws IOException {
    Path lonely = dir.resolve("lonely");
    Files.createDirectories(lonely);
    Path caCopy = Files.copy(ca, lonely.resolve("ca.crt"));
    List<String> a = args("127.0.0.1:" + closedPort(), false);
    a.set(a.indexOf(ca.toString()), caCopy.toString());
    CliRun r = CliRun.of(a.toArray(new String[0]));
    assertEquals(2, r.exit(), r.out() + r.err());
    assertTrue(r.err().contains("no CRL: give --crl"), r.err());
    assertFalse(r.err().contains("NullPointerException"), r.err());
  }

  @Test
  void shouldRefuseAMissingCredentialFileWithItsName() throws IOException {
    List<String> a = args("127.0.0.1:" + closedPort(), true);
    a.set(a.indexOf("--attacker") + 1, dir.resolve("nope.crt") + "," + dir.resolve("nope.key"));
    CliRun r = CliRun.of(a.toArray(new String[0]));
    assertEquals(2, r.exit(), r.out() + r.err());
    assertTrue(r.err().contains("nope.crt: no such file"), r.err());
  }

  @Test
  @Timeout(120)
  void shouldRunEveryAttackAgainstALiveHostAndReportNothingAsRefusedThatWasNotSeen()
      throws Exception {
    DeploymentCa deployment = DeploymentCa.open(dir.resolve("ca"), null);
    Credential hostCredential = deployment.issueHost("test-host", Duration.ofDays(1));
    Credential narrow =
        deployment.issuePeer(PeerIdentity.of("acme", "dashboard"), Duration.ofDays(1));
    narrow.writeTo(dir.resolve("narrow.crt"), dir.resolve("narrow.key"), null);
    try (AuditLog log = AuditLog.open(dir.resolve("audit.jsonl"));
        RegionHost host =
            RegionHost.start(
                new HostOptions()
                    .credential(hostCredential)
                    .trust(deployment.trust())
                    .policy(new PolicyLoader().loadSample())
                    .audit(new AuditTrail(log))
                    .maxSessionsPerTenant(16)
                    .provider("soft"))) {
      host.registerRegion("acme", "kvcache", 4 << 20);
      host.registerRegion("globex", "features", 4 << 20);
      List<String> a = args(Addresses.format(host.address()), true);
      a.addAll(List.of("--narrow", dir.resolve("narrow.crt") + "," + dir.resolve("narrow.key")));
      a.addAll(List.of("--host-name", "test-host"));
      CliRun r = CliRun.of(a.toArray(new String[0]));
      assertEquals(0, r.exit(), r.out() + r.err());
      assertTrue(r.out().contains("attack-suite: every outcome as expected"), r.out());
      assertTrue(
          r.out()
              .contains(
                  "ok   peer with a foreign CA's certificate: expected TLS refused by the host, got refused by the host"),
          r.out());
      assertTrue(r.out().contains("ok   guessed rkey (ReDMArk)"), r.out());
      // the host cannot be inspected from here: record attacks are "sent", never claimed "ok"
      assertTrue(r.out().contains("sent flip one ciphertext bit"), r.out());
      // issue 14 and 15 attacks a network peer can make
      for (String row :
          List.of(
              "ok   peer with no certificate: expected TLS refused by the host, got refused by the"
                  + " host after TCP connected",
              "ok   resume a TLS session (client context reused): expected every connection a"
                  + " full handshake",
              "ok   tenant pinned to another host name: expected UNEXPECTED_PEER (nothing sent),"
                  + " got AUTHENTICATION_FAILED UNEXPECTED_PEER",
              "ok   tenant certificate acting as a host: expected WRONG_USAGE",
              "sent notification naming a released grant's slot",
              "ok   flood of zero-length WRITE_WITH_IMM: expected host ends the session, got"
                  + " session ended",
              "ok   idle connections from one address, then a tenant: expected tenant served",
              "ok   HELLO naming another responder address: expected ERROR PROTOCOL_VIOLATION, no"
                  + " connection made, got ERROR PROTOCOL_VIOLATION")) {
        assertTrue(r.out().contains(row), row + " in\n" + r.out());
      }
      assertFalse(r.out().lines().anyMatch(l -> l.startsWith("FAIL")), r.out());
      assertFalse(r.out().lines().anyMatch(l -> l.startsWith("skip")), r.out());
    }
  }

  @Test
  void dropsJavaClassNamesFromMessages() {
    assertEquals(
        "connecting to 127.0.0.1:9: handshake failed: Unsupported or unrecognized SSL message",
        Addresses.withoutClassNames(
            "connecting to /127.0.0.1:9: handshake failed: javax.net.ssl.SSLException:"
                + " Unsupported or unrecognized SSL message"));
  }

  @Test
  void formatsAddressesForPeople() {
    assertEquals("127.0.0.1:7", Addresses.format(new InetSocketAddress("127.0.0.1", 7)));
    assertEquals("[::1]:7", Addresses.format(new InetSocketAddress("::1", 7)));
  }
}
