package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
}
