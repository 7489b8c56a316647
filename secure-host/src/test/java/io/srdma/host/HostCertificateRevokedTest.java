package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeyExchangeException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Revocation reaches live sessions in both directions: when the host's own certificate is revoked,
 * every client's live session with it ends (the client re-checks the host's certificate against the
 * CRL it watches), so a host whose key is compromised stops receiving tenants' data.
 */
@Timeout(120)
class HostCertificateRevokedTest {
  @TempDir Path dir;

  @Test
  void aClientEndsItsSessionWhenTheHostsCertificateIsRevoked() throws Exception {
    AtomicReference<Credential> hostCredential = new AtomicReference<>();
    try (ChannelRig rig =
        new ChannelRig(
            dir,
            o -> {
              Credential c =
                  DeploymentCa.open(dir.resolve("ca"), null)
                      .issueHost("host-1", Duration.ofDays(1));
              hostCredential.set(c);
              o.credential(c);
            })) {
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      CompletableFuture<ChannelException> lost = new CompletableFuture<>();
      acme.onSessionLost(lost::complete);
      RemoteGrant g =
          acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
      g.writeBlocking(0, ChannelRig.bytes(100, 1));

      long revokedAt = System.nanoTime();
      assertTrue(rig.ca.revoke(hostCredential.get().certificate()));
      ChannelException cause =
          lost.get(ChannelRig.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS);
      Duration took = Duration.ofNanos(System.nanoTime() - revokedAt);
      assertTrue(
          took.compareTo(ChannelRig.scaled(Duration.ofMillis(1500))) < 0,
          "ended within a second or so of the revocation: " + took);
      assertEquals(ChannelException.Reason.AUTHENTICATION_FAILED, cause.reason());
      assertEquals(KeyExchangeException.Reason.CERTIFICATE_REVOKED.name(), cause.detail());
      assertFalse(acme.isOpen());
      ChannelException refused =
          assertThrows(
              ChannelException.class, () -> g.writeBlocking(0, ByteBuffer.wrap(new byte[8])));
      assertEquals(ChannelException.Reason.SESSION_CLOSED, refused.reason());
    }
  }
}
