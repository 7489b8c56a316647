package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Red team: the host has decided to end a session (its certificate was found revoked) but the end
 * itself waits on the watchdog thread — behind other sessions' ends, each of which may wait for
 * invalidations. Meanwhile the revoked peer asks for a new grant: it must be refused, not issued
 * (an R_Key handed to a revoked peer lets its bytes land until the end catches up).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostEndingGrantRaceTest {
  @TempDir Path dir;
  ChannelRig rig;

  @AfterEach
  void stop() {
    if (rig != null) {
      rig.close();
    }
  }

  @Test
  void aSessionTheHostIsEndingGetsNoNewGrantWhileItsEndWaitsForTheWatchdog() throws Exception {
    rig = new ChannelRig(dir);
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant first =
        acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    HostSession session = rig.session(acme);

    CountDownLatch busy = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    rig.host
        .watchdog()
        .execute(
            () -> {
              busy.countDown();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    try {
      assertTrue(busy.await(10, TimeUnit.SECONDS), "watchdog thread occupied");
      // what the watchdog's sweep does when it finds the certificate revoked
      assertTrue(session.endByHost(SessionEnd.CERTIFICATE_REVOKED));

      ChannelException e =
          assertThrows(
              ChannelException.class,
              () ->
                  acme.grant(
                      "kvcache", EnumSet.of(Access.WRITE), 8192, 4096, Duration.ofMinutes(1)));
      assertEquals(ChannelException.Reason.GRANT_DENIED, e.reason(), e.toString());
      assertTrue(e.getMessage().contains("certificate-revoked"), e.getMessage());
      assertEquals(
          1,
          rig.host.grants().stream().filter(g -> g.tenant().equals("acme")).count(),
          "only the grant issued before the decision is live");
    } finally {
      release.countDown();
    }
    ChannelRig.await(
        () -> rig.host.grants().stream().noneMatch(g -> g.tenant().equals("acme")),
        "the end revoked the grant issued before it");
    ChannelRig.await(() -> !first.isValid() || !acme.isOpen(), "the client lost its access");
  }

  @Test
  void aSessionTheHostIsEndingIsSentNoNewRegionKey() throws Exception {
    rig = new ChannelRig(dir);
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant reader =
        acme.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofMinutes(1));
    int known = AttackProbe.regionKeyGeneration(reader);
    HostSession session = rig.session(acme);

    CountDownLatch busy = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    rig.host
        .watchdog()
        .execute(
            () -> {
              busy.countDown();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    try {
      assertTrue(busy.await(10, TimeUnit.SECONDS), "watchdog thread occupied");
      assertTrue(session.endByHost(SessionEnd.CERTIFICATE_REVOKED));
      // a rotation while the revoked session's end waits (the timer, another reader leaving)
      int rotated = rig.acmeKv.rotateKey();
      assertTrue(rotated > known);
      Thread.sleep(1000);
      assertEquals(
          known,
          AttackProbe.regionKeyGeneration(reader),
          "the host decided the peer is revoked: it must not receive the region's new key");
    } finally {
      release.countDown();
    }
    ChannelRig.await(
        () -> rig.host.grants().stream().noneMatch(g -> g.tenant().equals("acme")),
        "the end revoked the read grant");
  }

  /**
   * The host's grant table, holding up the listing of {@code session}'s first grant until released:
   * the point where a grant request and a session's end on the watchdog interleave worst.
   */
  private static final class PausingGrantTable extends ConcurrentHashMap<Long, HostGrant> {
    private final transient HostSession session;
    final transient CountDownLatch listing = new CountDownLatch(1);
    final transient CountDownLatch resume = new CountDownLatch(1);
    transient volatile HostGrant paused;

    PausingGrantTable(HostSession session) {
      this.session = session;
    }

    @Override
    public HostGrant put(Long id, HostGrant g) {
      if (g.session == session && paused == null) {
        paused = g;
        listing.countDown();
        try {
          resume.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.put(id, g);
    }
  }

  @Test
  void aGrantIssuedAsTheHostEndsTheSessionIsNeitherLeftListedNorCounted() throws Exception {
    rig = new ChannelRig(dir);
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    HostSession session = rig.session(acme);
    HostTables tables = session.ctx.tables();
    PausingGrantTable table = new PausingGrantTable(session);
    Field grants = HostTables.class.getDeclaredField("grants");
    grants.setAccessible(true);
    grants.set(tables, table);

    Thread requester =
        new Thread(
            () -> {
              try {
                acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
              } catch (ChannelException expected) {
                // denied or the session closed: either way the peer got no R_Key
              }
            },
            "acme-grant-requester");
    requester.start();
    HostGrant grant;
    try {
      // the worker is issuing the grant: decided, its window bound, now being listed
      assertTrue(table.listing.await(10, TimeUnit.SECONDS), "the grant reached the table");
      grant = table.paused;
      // the watchdog's sweep finds the certificate revoked now, and ends the session at once
      assertTrue(session.endByHost(SessionEnd.CERTIFICATE_REVOKED));
      CountDownLatch swept = new CountDownLatch(1);
      rig.host.watchdog().execute(swept::countDown); // after the session's end on that thread
      assertTrue(swept.await(10, TimeUnit.SECONDS), "the watchdog ended the session");
    } finally {
      table.resume.countDown();
    }
    requester.join(TimeUnit.SECONDS.toMillis(30));
    assertFalse(requester.isAlive(), "the grant request was answered");
    assertTrue(session.awaitEnd(10, TimeUnit.SECONDS), "the session ended");

    assertNotNull(grant);
    assertTrue(session.slots.hasEnded(grant), "the grant ended with its session");
    List<String> orphans =
        rig.host.grants().stream()
            .filter(g -> g.tenant().equals("acme"))
            .map(g -> Long.toString(g.grantId()))
            .collect(Collectors.toList());
    assertEquals(List.of(), orphans, "no grant of the ended session is listed");
    assertEquals(0, rig.host.stats().liveGrants(), "no grant of the ended session is counted");
    assertEquals(0, rig.acmeKv.liveGrants(), "nor counted on its region");
    // the audit log tells the same story: granted, then revoked with the session's end
    List<String> lines =
        rig.audit()
            .lines()
            .filter(l -> l.contains("\"grant\":\"" + grant.id + "\""))
            .collect(Collectors.toList());
    assertEquals(2, lines.size(), String.join("\n", lines));
    assertTrue(lines.get(0).contains("\"action\":\"grant\""), lines.get(0));
    assertTrue(lines.get(1).contains("\"action\":\"revoke\""), lines.get(1));
    assertTrue(lines.get(1).contains("certificate-revoked"), lines.get(1));
  }
}
