package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.ChannelException;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import io.srdma.verbs.ConnectionInfo;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The small pieces of the host's limits, driven by hand. */
class HostLimitsUnitTest {
  private static InetAddress ip(int a, int b, int c, int d) throws Exception {
    return InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
  }

  private static ConnectionInfo soft(InetAddress a, int port) {
    byte[] ip = a.getAddress();
    return new ConnectionInfo(
        1, 1, ByteBuffer.allocate(ip.length + 2).put(ip).putShort((short) port).array());
  }

  @Test
  void shouldCapPendingHandshakesPerAddressAndInAll() throws Exception {
    PendingHandshakes p = new PendingHandshakes(5, 2);
    InetAddress a = ip(10, 0, 0, 1);
    InetAddress b = ip(10, 0, 0, 2);
    assertTrue(p.tryAcquire(a));
    assertTrue(p.tryAcquire(a));
    assertFalse(p.tryAcquire(a), "third from one address");
    assertTrue(p.tryAcquire(b));
    assertTrue(p.tryAcquire(b));
    assertTrue(p.tryAcquire(ip(10, 0, 0, 3)));
    assertFalse(p.tryAcquire(ip(10, 0, 0, 4)), "total reached");
    p.release(a);
    assertTrue(p.tryAcquire(a), "a released slot is free again");
    assertEquals(5, p.pending());
    assertThrows(IllegalStateException.class, () -> p.release(ip(10, 9, 9, 9)));
  }

  @Test
  void shouldCountIpv6AddressesByTheirSlash64() throws Exception {
    PendingHandshakes p = new PendingHandshakes(10, 2);
    InetAddress a1 = InetAddress.getByName("2001:db8:1:2::1");
    InetAddress a2 = InetAddress.getByName("2001:db8:1:2:ffff:1:2:3");
    InetAddress other = InetAddress.getByName("2001:db8:1:3::1");
    assertTrue(p.tryAcquire(a1));
    assertTrue(p.tryAcquire(a2));
    assertFalse(p.tryAcquire(InetAddress.getByName("2001:db8:1:2::99")), "same /64");
    assertTrue(p.tryAcquire(other), "another /64");
    p.release(a2);
    assertTrue(p.tryAcquire(a1));
    assertEquals(ip(10, 0, 0, 1), PendingHandshakes.bucket(ip(10, 0, 0, 1)), "IPv4 as is");

    AuthFailureLimiter limiter = new AuthFailureLimiter(2, () -> 0L);
    limiter.failed(a1);
    limiter.failed(a2);
    assertTrue(limiter.blocked(InetAddress.getByName("2001:db8:1:2::7")), "the /64 is blocked");
    assertFalse(limiter.blocked(other));
  }

  @Test
  void shouldTellHowLongAWriteHasBeenBlocked() throws Exception {
    java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    WatchedOutputStream w =
        new WatchedOutputStream(
            new java.io.OutputStream() {
              @Override
              public void write(int b) {}

              @Override
              public void write(byte[] b, int off, int len) throws java.io.IOException {
                entered.countDown();
                try {
                  release.await();
                } catch (InterruptedException e) {
                  throw new java.io.InterruptedIOException();
                }
              }
            });
    assertEquals(0, w.blockedSince(), "nothing written yet");
    long before = System.nanoTime();
    Thread writer =
        new Thread(
            () -> {
              try {
                w.write(new byte[8], 0, 8);
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            },
            "blocked-writer");
    writer.start();
    assertTrue(entered.await(10, java.util.concurrent.TimeUnit.SECONDS));
    assertTrue(w.blockedSince() - before >= 0, "a blocked write is seen with its start");
    release.countDown();
    writer.join(10_000);
    assertEquals(0, w.blockedSince(), "and forgotten once it returns");
  }

  @Test
  void shouldAuditTheFirstRejectionsThenEndOnceAtTheLimit() {
    RejectionBudget b = new RejectionBudget(20);
    List<RejectionBudget.Verdict> seen = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      seen.add(b.reject());
    }
    for (int i = 0; i < RejectionBudget.AUDITED; i++) {
      assertEquals(RejectionBudget.Verdict.AUDIT, seen.get(i));
    }
    for (int i = RejectionBudget.AUDITED; i < 19; i++) {
      assertEquals(RejectionBudget.Verdict.QUIET, seen.get(i));
    }
    assertEquals(RejectionBudget.Verdict.END, seen.get(19));
    assertEquals(1, seen.stream().filter(v -> v == RejectionBudget.Verdict.END).count());
    assertEquals(RejectionBudget.Verdict.SPENT, seen.get(29));
    assertEquals(RejectionBudget.Verdict.END, new RejectionBudget(1).reject(), "limit 1");
  }

  @Test
  void shouldAcceptOnlyThePeersOwnResponderAddressUnlessConfigured() throws Exception {
    InetAddress peer = ip(192, 0, 2, 10);
    InetAddress other = ip(192, 0, 2, 99);
    ResponderAddresses strict = new ResponderAddresses("soft", false, Set.of());
    assertNull(strict.refusal(soft(peer, 4791), peer));
    assertNotNull(strict.refusal(soft(other, 4791), peer));
    assertNotNull(strict.refusal(soft(ip(127, 0, 0, 1), 22), peer), "the host's own loopback");
    assertNotNull(
        strict.refusal(new ConnectionInfo(1, 1, new byte[5]), peer), "not a soft address");
    assertEquals(
        strict.refusal(soft(other, 1), peer),
        strict.refusal(soft(other, 2), peer),
        "the refusal does not depend on the port");
    assertNull(new ResponderAddresses("soft", false, Set.of(other)).refusal(soft(other, 1), peer));
    assertNull(new ResponderAddresses("soft", true, Set.of()).refusal(soft(other, 1), peer));
    assertNull(
        new ResponderAddresses("ibv", false, Set.of())
            .refusal(new ConnectionInfo(1, 1, new byte[19]), peer),
        "fabric addresses are not TCP endpoints");
  }

  @Test
  void shouldRefuseLimitOptionsOutOfRange(@TempDir Path dir) throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    try (AuditLog log = AuditLog.open(dir.resolve("audit.jsonl"))) {
      Supplier<HostOptions> valid =
          () ->
              new HostOptions()
                  .credential(
                      ca.issuePeer(
                          PeerIdentity.of(RegionHost.HOST_TENANT, "h"), Duration.ofDays(1)))
                  .trust(ca.trust())
                  .policy(new PolicyLoader().loadSample())
                  .audit(new AuditTrail(log));
      valid.get().check();
      assertRefused("firstRecordTimeout", valid.get().firstRecordTimeout(Duration.ofSeconds(10)));
      assertRefused(
          "maxPendingHandshakesPerAddress", valid.get().maxPendingHandshakesPerAddress(0));
      assertRefused("maxRejectedRecords", valid.get().maxRejectedRecords(0));
      assertRefused("maxSessionLifetime", valid.get().maxSessionLifetime(Duration.ZERO));
    }
  }

  @Test
  void shouldRefuseDurationsPastWhatItsDeadlinesCanCount(@TempDir Path dir) throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    try (AuditLog log = AuditLog.open(dir.resolve("audit.jsonl"))) {
      Supplier<HostOptions> valid =
          () ->
              new HostOptions()
                  .credential(
                      ca.issuePeer(
                          PeerIdentity.of(RegionHost.HOST_TENANT, "h"), Duration.ofDays(1)))
                  .trust(ca.trust())
                  .policy(new PolicyLoader().loadSample())
                  .audit(new AuditTrail(log));
      // past ~292 years a duration has no long of nanoseconds: the watchdog's sweep threw on every
      // tick at the first established session, and so checked none of the sessions after it
      Duration forever = java.time.temporal.ChronoUnit.FOREVER.getDuration();
      assertRefused("maxSessionLifetime", valid.get().maxSessionLifetime(forever));
      assertRefused("idleTimeout", valid.get().idleTimeout(Duration.ofDays(36_501)));
      assertRefused("requestTimeout", valid.get().requestTimeout(forever));
      assertRefused(
          "handshakeTimeout",
          valid.get().handshakeTimeout(forever).firstRecordTimeout(Duration.ofSeconds(1)));
      assertRefused("regionKeyRotation", valid.get().regionKeyRotation(forever));
      assertRefused("idleTimeout", valid.get().idleTimeout(null));
      valid
          .get()
          .maxSessionLifetime(Duration.ofDays(36_500))
          .idleTimeout(Duration.ofDays(1))
          .check();
    }
  }

  private static void assertRefused(String option, HostOptions o) {
    ChannelException e = assertThrows(ChannelException.class, o::check);
    assertEquals(ChannelException.Reason.INVALID_ARGUMENT, e.reason());
    assertTrue(e.getMessage().contains(option), e.getMessage());
  }
}
