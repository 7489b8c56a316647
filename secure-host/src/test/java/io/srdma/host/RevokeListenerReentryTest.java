package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
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
}
