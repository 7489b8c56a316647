package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.channel.protocol.ControlProxy;
import io.srdma.channel.protocol.Operations;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile host's control frames against the client SDK: frames the client never asked for, or
 * that do not answer what it asked, end the session with a typed protocol error and leave nothing
 * behind. The host here is the rig's, misbehaving through its own control proxy; a test that must
 * answer one of the client's requests itself holds the proxy's lock meanwhile, so the host's own
 * answer waits until the client has handled the forged one.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileHostFramesTest {
  @TempDir Path dir;

  static Object field(Object o, String name) throws Exception {
    Class<?> c = o instanceof Class<?> k ? k : o.getClass();
    while (c != null) {
      try {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o instanceof Class<?> ? null : o);
      } catch (NoSuchFieldException e) {
        c = c.getSuperclass();
      }
    }
    throw new NoSuchFieldException(name);
  }

  @SuppressWarnings("unchecked")
  static ControlProxy hostProxy(RegionHost host) throws Exception {
    Map<HostSession, HostSession> sessions =
        (Map<HostSession, HostSession>) field(host, "sessions");
    ChannelRig.await(
        () -> sessions.size() == 1 && sessions.keySet().iterator().next().proxy != null,
        "one session");
    return sessions.keySet().iterator().next().proxy;
  }

  @SuppressWarnings("unchecked")
  static Map<Long, RemoteGrant> clientGrants(SecureRdmaClient c) throws Exception {
    return (Map<Long, RemoteGrant>) field(field(c, "control"), "grants");
  }

  /** The request id the client's next request takes (no keep-alive runs in these tests). */
  static int nextRequestId(SecureRdmaClient c) throws Exception {
    int id = ((AtomicInteger) field(field(c, "control"), "requestIds")).get();
    return (id == 0 ? 1 : id) & Integer.MAX_VALUE;
  }

  /** A client without keep-alive pings, whose session loss lands in {@code lost}. */
  static SecureRdmaClient client(
      ChannelRig rig, String peer, CompletableFuture<ChannelException> lost) {
    SecureRdmaClient c =
        rig.track(
            SecureRdmaClient.connect(rig.options("acme", peer).keepalive(Duration.ofMinutes(10))));
    c.onSessionLost(lost::complete);
    return c;
  }

  static ChannelException lost(CompletableFuture<ChannelException> lost) throws Exception {
    return lost.get(ChannelRig.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
  }

  static ChannelException failure(CompletionStage<?> stage) throws Exception {
    try {
      stage
          .toCompletableFuture()
          .get(ChannelRig.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      return (ChannelException) e.getCause();
    }
    throw new AssertionError("the stage completed");
  }

  static long expiry() {
    return System.currentTimeMillis() + 60_000;
  }

  @Test
  void shouldEndTheSessionOnAGrantItNeverAskedFor() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      SecureRdmaClient c = client(rig, "trainer-1", lost);
      ControlProxy p = hostProxy(rig.host);
      // a READ grant (with region key material) for request 77777, which the client never sent
      p.grant(
          77777,
          (7L << 8) | 1,
          "kvcache",
          Operations.READ,
          0,
          4096,
          expiry(),
          0,
          0,
          rig.acmeKv.regionKeyMaterial());
      ChannelException e = lost(lost);
      assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), e.getMessage());
      assertEquals("UNEXPECTED_TYPE", e.detail(), e.getMessage());
      assertTrue(e.getMessage().contains("answers no pending grant request"), e.getMessage());
      assertFalse(c.isOpen());
      assertTrue(clientGrants(c).isEmpty(), "the unsolicited grant was not kept");
    }
  }

  @Test
  void shouldEndTheSessionPastTheGrantsItMayHold() throws Exception {
    int max = (Integer) field(Class.forName("io.srdma.channel.ControlChannel"), "MAX_GRANTS");
    try (ChannelRig rig = new ChannelRig(dir)) {
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      SecureRdmaClient c = client(rig, "trainer-1", lost);
      ControlProxy p = hostProxy(rig.host);
      List<CompletionStage<RemoteGrant>> asked = new ArrayList<>();
      synchronized (p) { // the host's own answers wait: it honours its limit of 255
        int first = nextRequestId(c);
        for (int i = 0; i <= max; i++) {
          asked.add(
              c.requestGrant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1)));
        }
        for (int i = 0; i <= max; i++) {
          p.grant(
              first + i,
              ((long) (i + 1) << 8) | 1,
              "kvcache",
              Operations.WRITE,
              0,
              4096,
              expiry(),
              0,
              0,
              new byte[0]);
        }
      }
      ChannelException e = lost(lost);
      assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), e.getMessage());
      assertTrue(
          e.getMessage().contains("past the " + max + " grants a session may hold"),
          e.getMessage());
      assertEquals(
          ChannelException.Reason.PROTOCOL, failure(asked.get(max)).reason(), "the last request");
      RemoteGrant held = asked.get(0).toCompletableFuture().getNow(null);
      assertFalse(held.isValid(), "the session's grants ended with it");
      assertTrue(clientGrants(c).isEmpty());
    }
  }

  @Test
  void shouldEndTheSessionOnAGrantIdItAlreadyHolds() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      SecureRdmaClient c = client(rig, "trainer-1", lost);
      RemoteGrant held =
          c.grant(
              "kvcache", EnumSet.of(Access.READ, Access.WRITE), 0, 65536, Duration.ofMinutes(5));
      ControlProxy p = hostProxy(rig.host);
      CompletionStage<RemoteGrant> asked;
      synchronized (p) {
        int id = nextRequestId(c);
        asked = c.requestGrant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
        // the answer re-issues the id of the grant the application holds
        p.grant(id, held.id(), "kvcache", Operations.WRITE, 0, 4096, expiry(), 0, 0, new byte[0]);
      }
      ChannelException e = lost(lost);
      assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), e.getMessage());
      assertEquals("BAD_VALUE", e.detail(), e.getMessage());
      assertTrue(e.getMessage().contains("already holds"), e.getMessage());
      assertEquals(ChannelException.Reason.PROTOCOL, failure(asked).reason());
      assertFalse(held.isValid(), "the held grant ended with the session");
      assertEquals("SESSION_CLOSED", held.endedBecause());
      assertTrue(clientGrants(c).isEmpty());
    }
  }

  /** How a forged GRANT departs from the request (region kvcache, WRITE, [4096, +4096)). */
  record Forged(String what, String region, int operations, long offset, long length) {}

  @Test
  void shouldEndTheSessionOnAGrantOtherThanTheRequestAsked() throws Exception {
    List<Forged> cases =
        List.of(
            new Forged("another region", "checkpoints", Operations.WRITE, 4096, 4096),
            new Forged("more operations", "kvcache", Operations.ALL, 4096, 4096),
            new Forged("starts before", "kvcache", Operations.WRITE, 0, 4096),
            new Forged("ends after", "kvcache", Operations.WRITE, 4096, 8192));
    int n = 0;
    for (Forged forged : cases) {
      try (ChannelRig rig = new ChannelRig(dir.resolve("case-" + n++))) {
        CompletableFuture<ChannelException> lost = new CompletableFuture<>();
        SecureRdmaClient c = client(rig, "trainer-1", lost);
        ControlProxy p = hostProxy(rig.host);
        CompletionStage<RemoteGrant> asked;
        synchronized (p) {
          int id = nextRequestId(c);
          asked =
              c.requestGrant(
                  "kvcache", EnumSet.of(Access.WRITE), 4096, 4096, Duration.ofMinutes(1));
          p.grant(
              id,
              (5L << 8) | 1,
              forged.region(),
              forged.operations(),
              forged.offset(),
              forged.length(),
              expiry(),
              0,
              0,
              Operations.includesRead(forged.operations())
                  ? rig.acmeKv.regionKeyMaterial()
                  : new byte[0]);
        }
        ChannelException e = lost(lost);
        assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), forged.what());
        assertEquals("BAD_VALUE", e.detail(), forged.what() + ": " + e.getMessage());
        assertEquals(ChannelException.Reason.PROTOCOL, failure(asked).reason(), forged.what());
        assertTrue(clientGrants(c).isEmpty(), forged.what());
      }
    }
  }

  /**
   * A READ grant's region key of another length than the material's (1..128 bytes pass the frame
   * codec) is a malformed GRANT like material of the right length that does not parse: not a READ
   * grant silently holding no key, whose reads all fail NOT_PERMITTED.
   */
  @Test
  void shouldEndTheSessionOnAReadGrantWhoseRegionKeyIsMalformed() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      SecureRdmaClient c = client(rig, "trainer-1", lost);
      ControlProxy p = hostProxy(rig.host);
      CompletionStage<RemoteGrant> asked;
      synchronized (p) {
        int id = nextRequestId(c);
        asked = c.requestGrant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofMinutes(1));
        byte[] material = rig.acmeKv.regionKeyMaterial();
        p.grant(
            id,
            (6L << 8) | 1,
            "kvcache",
            Operations.READ,
            0,
            4096,
            expiry(),
            0,
            0,
            java.util.Arrays.copyOf(material, material.length - 1));
      }
      ChannelException e = lost(lost);
      assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), e.getMessage());
      assertEquals("BAD_VALUE", e.detail(), e.getMessage());
      assertEquals(ChannelException.Reason.PROTOCOL, failure(asked).reason());
      assertTrue(clientGrants(c).isEmpty());
    }
  }

  @Test
  void shouldEndTheSessionOnAPongAnsweringAGrantRequest() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      SecureRdmaClient c = client(rig, "trainer-1", lost);
      ControlProxy p = hostProxy(rig.host);
      CompletionStage<RemoteGrant> asked;
      synchronized (p) {
        int id = nextRequestId(c);
        asked = c.requestGrant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
        p.pong(id, 42);
      }
      ChannelException e = failure(asked);
      assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), e.getMessage());
      assertEquals("UNEXPECTED_TYPE", e.detail(), e.getMessage());
      assertTrue(e.getMessage().contains("PONG"), e.getMessage());
      assertFalse(e.getMessage().contains("ClassCastException"), e.getMessage());
      assertEquals(ChannelException.Reason.PROTOCOL, lost(lost).reason());
    }
  }

  @Test
  void shouldEndTheSessionOnAPongAnsweringARelease() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      SecureRdmaClient c = client(rig, "trainer-1", lost);
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
      ControlProxy p = hostProxy(rig.host);
      CompletionStage<Void> released;
      synchronized (p) {
        int id = nextRequestId(c);
        released = g.release();
        p.pong(id, 42); // not the REVOKE that confirms a release
      }
      ChannelException e = failure(released);
      assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), e.getMessage());
      assertEquals("UNEXPECTED_TYPE", e.detail(), e.getMessage());
      assertEquals(ChannelException.Reason.PROTOCOL, lost(lost).reason());
      assertFalse(g.isValid());
    }
  }

  @Test
  void shouldEndTheSessionOnAReleaseAnsweredForAnotherGrant() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      SecureRdmaClient c = client(rig, "trainer-1", lost);
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
      RemoteGrant other =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 4096, 4096, Duration.ofMinutes(1));
      ControlProxy p = hostProxy(rig.host);
      CompletionStage<Void> released;
      synchronized (p) {
        int id = nextRequestId(c);
        released = g.release();
        p.revoke(id, other.id(), io.srdma.channel.protocol.RevokeReason.RELEASED);
      }
      ChannelException e = failure(released);
      assertEquals(ChannelException.Reason.PROTOCOL, e.reason(), e.getMessage());
      assertEquals("BAD_VALUE", e.detail(), e.getMessage());
      assertEquals(ChannelException.Reason.PROTOCOL, lost(lost).reason()); // grants ended first
      assertEquals("SESSION_CLOSED", other.endedBecause(), "ended with the session, not released");
    }
  }

  @Test
  void shouldScheduleAtMostOneKeyWipePerGrantHoweverManyRegionKeysCome() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      SecureRdmaClient c = client(rig, "trainer-1", lost);
      CompletableFuture<String> revoked = new CompletableFuture<>();
      c.onRevoked((g, r) -> revoked.complete(g.id() + " " + r));
      RemoteGrant reader =
          c.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofMinutes(1));
      RemoteGrant marker =
          c.grant("kvcache", EnumSet.of(Access.WRITE), 4096, 4096, Duration.ofMinutes(1));
      java.util.concurrent.ScheduledThreadPoolExecutor timer =
          (java.util.concurrent.ScheduledThreadPoolExecutor) field(field(c, "control"), "timer");
      int before = timer.getQueue().size();
      // newer generations (each accepted, each replacing the previous wipe), then a flood of
      // REGION_KEYs of the generation the client already holds (each refused as not newer)
      for (int i = 0; i < 3; i++) {
        rig.acmeKv.rotateKey();
      }
      ControlProxy p = hostProxy(rig.host);
      byte[] held = rig.acmeKv.regionKeyMaterial();
      int generation = io.srdma.channel.record.RegionKeyMaterial.generation(held);
      for (int i = 0; i < 1000; i++) {
        p.regionKey(reader.id(), generation, held.clone());
      }
      // frames are handled in order: once the REVOKE after them is, so are they
      p.revoke(0, marker.id(), io.srdma.channel.protocol.RevokeReason.REVOKED);
      assertEquals(
          marker.id() + " REVOKED",
          revoked.get(ChannelRig.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS));
      assertTrue(c.isOpen());
      int added = timer.getQueue().size() - before;
      assertTrue(added <= 1, added + " tasks on the timer for one grant's key wipes");
    }
  }
}
