package io.srdma.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditKey;
import io.srdma.policy.AuditLogLockedException;
import io.srdma.policy.AuditVerification;
import io.srdma.policy.AuditVerifier;
import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The server's phases without the command: prepare, start, close from several threads. */
@Timeout(120)
class SecureRdmaServerTest {
  @TempDir Path dir;

  @BeforeEach
  void deployment() throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    ca.issuePeer(PeerIdentity.of("host", "host-1"), Duration.ofDays(1))
        .writeTo(dir.resolve("host.crt"), dir.resolve("host.key"), null);
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      Files.write(dir.resolve("policy.yaml"), in.readAllBytes());
    }
  }

  private ServeConfig config(String listen) throws Exception {
    Path f = dir.resolve("serve.yaml");
    Files.writeString(
        f,
        "version: 1\nlisten: "
            + listen
            + "\nprovider: soft\n"
            + "tls: {certificate: host.crt, key: host.key, ca-certificate: ca/ca.crt,"
            + " crl: ca/crl.pem}\n"
            + "policy: {file: policy.yaml, watch: true}\n"
            + "audit: {file: audit.log}\n"
            + "regions:\n  - {tenant: acme, region: kvcache, size: 1MiB}\n"
            + "limits: {shutdown-timeout: 15s}\n",
        StandardCharsets.UTF_8);
    return ServeConfig.read(f);
  }

  @Test
  void shouldStartOnceAndCloseOnceFromManyThreads() throws Exception {
    SecureRdmaServer s = SecureRdmaServer.prepare(config("127.0.0.1:0"));
    assertNull(s.address(), "nothing runs before start");
    assertEquals("srdma://host/host-1", s.hostIdentity());
    s.start();
    assertNotNull(s.address());
    assertNotNull(s.host());
    assertEquals(1, s.host().regions().size());
    assertNull(s.consoleUrl(), "no console section");
    assertTrue(Files.exists(dir.resolve(SecureRdmaServer.CRL_NUMBER_FILE)));
    assertThrows(IllegalStateException.class, s::start);

    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Boolean>> closes = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        closes.add(pool.submit(() -> s.close(Duration.ofSeconds(30))));
      }
      for (Future<Boolean> f : closes) {
        assertTrue(f.get(), "every close returns once everything is closed");
      }
    } finally {
      pool.shutdownNow();
    }
    assertNull(s.host(), "the host is gone after close");
    assertTrue(s.awaitClosed(Duration.ZERO));
    s.close(); // idempotent
    assertThrows(IllegalStateException.class, s::start, "no start after a close");
  }

  @Test
  void shouldUndoAFailedStartAndCountItClosed() throws Exception {
    try (ServerSocket taken = new ServerSocket(0)) {
      SecureRdmaServer s = SecureRdmaServer.prepare(config("127.0.0.1:" + taken.getLocalPort()));
      assertThrows(RuntimeException.class, s::start);
      assertNull(s.host());
      assertTrue(s.awaitClosed(Duration.ZERO), "a failed start leaves nothing open");
      assertTrue(s.close(Duration.ofSeconds(1)));
    }
  }

  @Test
  void shouldLeaveALiveHostsAuditLogAloneWhenASecondServeStartsOnItsConfig() throws Exception {
    SecureRdmaServer live = SecureRdmaServer.prepare(config("127.0.0.1:0"));
    live.start();
    try {
      Path log = dir.resolve("audit.log");
      byte[] before = Files.readAllBytes(log);
      byte[] key = Files.readAllBytes(dir.resolve("audit.key"));
      // the same configuration, as a second `srdma serve` reads it: same log, same address
      SecureRdmaServer second =
          SecureRdmaServer.prepare(config("127.0.0.1:" + live.address().getPort()));
      AuditLogLockedException e = assertThrows(AuditLogLockedException.class, second::start);
      assertTrue(e.getMessage().contains("audit.lock"), e.getMessage());
      assertTrue(second.awaitClosed(Duration.ZERO), "the failed start left nothing open");
      assertTrue(second.close(Duration.ofSeconds(5)));
      assertArrayEquals(before, Files.readAllBytes(log), "no line from the second serve");
      assertArrayEquals(key, Files.readAllBytes(dir.resolve("audit.key")));
      assertNotNull(live.host(), "the live host runs on");
    } finally {
      assertTrue(live.close(Duration.ofSeconds(30)));
    }
    // the live host's close checkpoint continues its own chain: one chain, no fork
    AuditVerification v =
        new AuditVerifier(AuditKey.load(dir.resolve("audit.key")), null)
            .verify(List.of(dir.resolve("audit.log")), null, true);
    assertTrue(v.intact(), v.summary());
  }

  @Test
  void shouldReportEveryBrokenReferenceBeforeStartingAnything() throws Exception {
    ServeConfig c = config("127.0.0.1:0");
    Files.delete(dir.resolve("host.key"));
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(policy, Files.readString(policy).replace("acme", "initech"));
    ServeConfig.ConfigException e =
        assertThrows(ServeConfig.ConfigException.class, () -> SecureRdmaServer.prepare(c));
    assertTrue(
        e.errors().stream().anyMatch(l -> l.contains("tls.key: ") && l.contains("does not exist")),
        e.errors().toString());
    assertTrue(
        e.errors().stream().anyMatch(l -> l.contains("the policy has no tenant 'acme'")),
        e.errors().toString());
    assertTrue(Files.notExists(dir.resolve("audit.log")), "nothing was started");
  }

  @Test
  void shouldNameTheCaCertificateWhenTheCaHasExpired() throws Exception {
    // a CA made 3,651 days ago (its validity is 3,650), and a host certificate of its still in date
    Path old = dir.resolve("old-ca");
    Instant made = Instant.now().minus(DeploymentCa.CA_VALIDITY).minus(Duration.ofDays(1));
    Method init =
        DeploymentCa.class.getDeclaredMethod("init", Path.class, char[].class, Clock.class);
    init.setAccessible(true);
    DeploymentCa ca =
        (DeploymentCa) init.invoke(null, old, null, Clock.fixed(made, ZoneOffset.UTC));
    Files.delete(dir.resolve("host.crt"));
    Files.delete(dir.resolve("host.key"));
    ca.issuePeer(PeerIdentity.of("host", "host-1"), made, Instant.now().plus(Duration.ofDays(1)))
        .writeTo(dir.resolve("host.crt"), dir.resolve("host.key"), null);
    Path yaml = dir.resolve("serve.yaml");
    ServeConfig c = config("127.0.0.1:0");
    Files.writeString(yaml, Files.readString(yaml).replace("ca/", "old-ca/"));
    ServeConfig.ConfigException e =
        assertThrows(
            ServeConfig.ConfigException.class,
            () -> SecureRdmaServer.prepare(ServeConfig.read(yaml)));
    assertTrue(
        e.errors().stream()
            .anyMatch(l -> l.contains("tls.ca-certificate: ") && l.contains("expired at")),
        e.errors().toString());
  }
}
