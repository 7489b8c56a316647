package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application that asks for a new grant from its revocation listener (the obvious answer to a
 * REVOKE) must get it: the listener must not run on the thread that reads the host's frames, or the
 * new GRANT is never read, the request's deadline passes and the session ends with TIMEOUT — so any
 * REVOKE the host sends, honest or not, would end such a client's session.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RevokeListenerReentryTest {
  @TempDir Path dir;

  @Test
  void shouldAnswerAGrantRequestedFromTheRevocationListener() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      RemoteGrant g = c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
      CompletableFuture<RemoteGrant> again = new CompletableFuture<>();
      c.onRevoked(
          (revoked, why) -> {
            try {
              again.complete(
                  c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1)));
            } catch (RuntimeException e) {
              again.completeExceptionally(e);
            }
          });
      assertTrue(rig.host.revoke(g.id(), "test-operator"));
      RemoteGrant next =
          again.get(ChannelRig.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
      assertTrue(next.isValid());
      assertTrue(c.isOpen(), "the session survived");
      assertEquals("REVOKED", g.endedBecause());
    }
  }

  /**
   * As above with as many clients as the client runtime has workers, all revoked at once: the
   * listeners must not take every worker while they wait for GRANTs only a worker can read.
   */
  @Test
  void shouldAnswerGrantsRequestedFromTheRevocationListenersOfEveryClientAtOnce() throws Exception {
    Field w = Class.forName("io.srdma.channel.ClientRuntime").getDeclaredField("WORKERS");
    w.setAccessible(true);
    int n = w.getInt(null);
    try (ChannelRig rig = new ChannelRig(dir)) {
      List<RemoteGrant> granted = new ArrayList<>();
      List<CompletableFuture<RemoteGrant>> again = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        SecureRdmaClient c = rig.client("acme", "trainer-" + i);
        granted.add(c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1)));
        CompletableFuture<RemoteGrant> f = new CompletableFuture<>();
        c.onRevoked(
            (revoked, why) -> {
              try {
                f.complete(
                    c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1)));
              } catch (RuntimeException e) {
                f.completeExceptionally(e);
              }
            });
        again.add(f);
      }
      for (RemoteGrant g : granted) {
        assertTrue(rig.host.revoke(g.id(), "test-operator"));
      }
      for (CompletableFuture<RemoteGrant> f : again) {
        RemoteGrant next =
            f.get(ChannelRig.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(next.isValid());
      }
    }
  }
}
