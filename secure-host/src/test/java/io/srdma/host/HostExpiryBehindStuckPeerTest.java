package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.FrameReader;
import io.srdma.channel.protocol.MessageType;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Red team: grant expiry ran on the host's shared timer, whose expiry task also writes the REVOKE
 * frame to the holder. A peer that stops reading (its connection full) blocks that write until the
 * watchdog closes it after the request timeout — and every other tenant's grant expiry queued on
 * the timer meanwhile waits too, its window still valid: bytes land after the grant expired. The
 * invalidation of an expired grant must not wait on any peer's connection; nor must a policy
 * reload's revocation of one tenant's grant wait on telling another, stuck, tenant of its own.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostExpiryBehindStuckPeerTest {
  @TempDir Path dir;
  ChannelRig rig;

  @AfterEach
  void stop() {
    if (rig != null) {
      rig.close();
    }
  }

  @SuppressWarnings("unchecked")
  private HostSession onlySessionOf(String peerName) throws Exception {
    java.lang.reflect.Field f = RegionHost.class.getDeclaredField("sessions");
    f.setAccessible(true);
    for (HostSession s : ((java.util.Map<HostSession, Thread>) f.get(rig.host)).keySet()) {
      if (s.identity() != null && s.identity().endsWith("/" + peerName)) {
        return s;
      }
    }
    throw new AssertionError("no host session of " + peerName);
  }

  @Test
  void aStuckPeersExpiringGrantDoesNotDelayAnotherTenantsExpiry() throws Exception {
    rig = new ChannelRig(dir, o -> o.requestTimeout(ChannelRig.scaled(Duration.ofSeconds(12))));
    SecureRdmaClient globex = rig.client("globex", "loader-1");
    withStuckPeer(
        (stuckExpiry, now) -> {
          // globex's grant expires a second after the stuck peer's
          RemoteGrant g =
              globex.grant(
                  "features",
                  EnumSet.of(Access.WRITE),
                  0,
                  4096,
                  Duration.ofMillis(stuckExpiry + 1000 - now));
          long expiresAt = g.expiresAt().toEpochMilli();
          ChannelRig.await(
              () -> rig.host.grants().stream().noneMatch(i -> i.grantId() == g.id()),
              "globex's grant ended");
          long late = System.currentTimeMillis() - expiresAt;
          assertTrue(
              late <= ChannelRig.scaled(Duration.ofMillis(1000)).toMillis(),
              "another tenant's expired grant was invalidated " + late + " ms after its expiry");
        });
  }

  @Test
  void aPolicyReloadRevokesEveryForbiddenGrantAtOnceWhateverOneStuckHolder() throws Exception {
    rig = new ChannelRig(dir, o -> o.requestTimeout(ChannelRig.scaled(Duration.ofSeconds(12))));
    SecureRdmaClient globex = rig.client("globex", "loader-1");
    String sample;
    try (var in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sample = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    Policy strict =
        new PolicyLoader()
            .parse(
                "strict.yaml",
                sample
                    .replace("max-bytes-per-grant: 16MiB", "max-bytes-per-grant: 1KiB")
                    .replace("max-bytes-per-grant: 64MiB", "max-bytes-per-grant: 1KiB")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    withStuckPeer(
        (stuckExpiry, now) -> {
          // the stuck peer's grant was issued first: the reload reviews it first
          RemoteGrant g =
              globex.grant("features", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
          Thread reload =
              new Thread(() -> rig.host.reloadPolicy(strict, "operator"), "policy-reload");
          reload.setDaemon(true);
          long started = System.nanoTime();
          reload.start();
          ChannelRig.await(
              () -> rig.host.grants().stream().noneMatch(i -> i.grantId() == g.id()),
              "globex's forbidden grant revoked");
          long tookMs = (System.nanoTime() - started) / 1_000_000;
          assertTrue(
              tookMs <= ChannelRig.scaled(Duration.ofMillis(1000)).toMillis(),
              "the reload revoked another tenant's forbidden grant only after " + tookMs + " ms");
          reload.join(ChannelRig.scaled(Duration.ofSeconds(20)).toMillis());
        });
  }

  /** What happens once the stuck peer's connection is full; its grant expires at the first. */
  interface Scenario {
    void run(long stuckExpiry, long now) throws Exception;
  }

  /**
   * Connects acme/trainer-1 by raw frames, takes a 4 KiB WRITE grant of kvcache expiring in 8 s,
   * then pings without reading until its connection filled up (the host ended it, or a host write
   * to it has been blocked for half a second), and runs {@code then}.
   */
  private void withStuckPeer(Scenario then) throws Exception {
    try (RawPeer raw = new RawPeer(rig, "acme", "trainer-1")) {
      Socket socket = raw.socket;
      FrameReader reader = raw.reader;
      ControlProxy proxy = raw.proxy;
      // the stuck peer's grant expires first: its REVOKE is the write that blocks
      long stuckTtl = ChannelRig.scaled(Duration.ofSeconds(8)).toMillis();
      long stuckExpiry = System.currentTimeMillis() + stuckTtl;
      proxy.grantRequest(
          2, "kvcache", io.srdma.channel.protocol.Operations.WRITE, 0, 4096, stuckTtl);
      reader.read().expect(MessageType.GRANT);
      // ping without ever reading: the host's PONGs fill the connection
      Thread pinger =
          new Thread(
              () -> {
                try {
                  for (int i = 0; i < 2_000_000; i++) {
                    proxy.ping(3 + (i & 0xffff), i);
                  }
                } catch (IOException e) {
                  // the host closed the connection
                }
              },
              "stuck-peer-pinger");
      pinger.setDaemon(true);
      pinger.start();
      HostSession stuck = onlySessionOf("trainer-1");
      // host writes never wait for a peer: once the PONGs it does not read fill its connection
      // (the socket's buffers and the connection's bounded backlog) the host ends the session;
      // a host that waited instead would show a write blocked here
      ChannelRig.await(
          () -> {
            long since = stuck.writeBlockedSince();
            return stuck.ended.get() || (since != 0 && System.nanoTime() - since > 500_000_000L);
          },
          "the stuck peer's connection filled up");
      long now = System.currentTimeMillis();
      org.junit.jupiter.api.Assumptions.assumeTrue(
          now < stuckExpiry - 1500,
          "the connection filled up too late on this machine to test the overlap");
      then.run(stuckExpiry, now);
      pinger.interrupt();
      socket.close();
      pinger.join(ChannelRig.scaled(Duration.ofSeconds(10)).toMillis());
    }
  }
}
