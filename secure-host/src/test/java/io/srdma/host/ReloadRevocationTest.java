package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.policy.AuditException;
import io.srdma.policy.AuditLog;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.ReloadResult;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reload revokes every live grant the new policy forbids, also when it races the grant's issue or
 * the audit log has failed: no grant the policy in force forbids stays usable.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReloadRevocationTest {
  @TempDir Path dir;
  ChannelRig rig;

  @AfterEach
  void stop() {
    if (rig != null) {
      rig.close();
    }
  }

  /**
   * The policy has decided and recorded the grant, the host is binding its window (not yet in the
   * host's tables, where a reload looks for what to revoke) when the reload forbids it: the request
   * is refused, nothing is left live in the host or the policy, nothing lands.
   */
  @Test
  void shouldRefuseAGrantThatAReloadForbadeWhileItsWindowWasBeingBound() throws Exception {
    rig = new ChannelRig(dir);
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    HostSession session = rig.session(acme);
    SessionSendQueue sendQueue = session.sendQueue;
    GrantAuthority authority = (GrantAuthority) field(RegionHost.class, "authority", rig.host);
    Policy strict = samplePolicyWith("max-bytes-per-grant: 16MiB", "max-bytes-per-grant: 1KiB");

    CompletableFuture<RemoteGrant> pending = new CompletableFuture<>();
    ReloadResult r;
    // the session's send queue lock held: the request is decided and recorded by the policy, then
    // waits in scope() for its BIND, as behind a slow device
    sendQueue.lock();
    try {
      Thread t =
          new Thread(
              () -> {
                try {
                  pending.complete(
                      acme.grant(
                          "kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(5)));
                } catch (Throwable e) {
                  pending.completeExceptionally(e);
                }
              },
              "test-grant-request");
      t.setDaemon(true);
      t.start();
      ChannelRig.await(() -> authority.liveGrants().size() == 1, "decided by the policy");
      r = rig.host.reloadPolicy(strict, "operator");
    } finally {
      sendQueue.unlock();
    }
    assertEquals(1, r.forbidden().size(), "the reload found the 4 KiB grant forbidden");
    long before = ChannelRig.checksum(rig.acmeKv);

    ExecutionException e =
        assertThrows(ExecutionException.class, () -> pending.get(20, TimeUnit.SECONDS));
    ChannelException denied = assertInstanceOf(ChannelException.class, e.getCause());
    assertEquals(ChannelException.Reason.GRANT_DENIED, denied.reason());
    assertEquals("NOT_PERMITTED", denied.detail());
    assertTrue(
        denied.getMessage().contains("reloaded"), "names the reload: " + denied.getMessage());
    assertTrue(rig.host.grants().isEmpty(), "the host lists no grant");
    assertTrue(authority.liveGrants().isEmpty(), "the policy holds no live grant");
    assertFalse(authority.forbidden(r.forbidden().get(0).grant().id()).isPresent());
    assertEquals(before, ChannelRig.checksum(rig.acmeKv), "nothing landed");

    // the session is still usable under the new policy
    RemoteGrant small =
        acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 1024, Duration.ofMinutes(1));
    small.writeBlocking(0, ChannelRig.bytes(512, 7)); // a record of 512 B + overhead
    ChannelRig.await(() -> ChannelRig.checksum(rig.acmeKv) != before, "the allowed write landed");
  }

  /**
   * The audit log has failed (a full disk): the reload's line cannot be written. The new policy is
   * in force, so what it forbids is revoked anyway and the failure is reported after.
   */
  @Test
  void shouldRevokeWhatAReloadForbidsWhenTheAuditLogHasFailed() throws Exception {
    rig = new ChannelRig(dir);
    SecureRdmaClient acme = rig.client("acme", "trainer-1");
    RemoteGrant g = acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(5));
    g.writeBlocking(0, ChannelRig.bytes(2048, 3));
    Policy strict = samplePolicyWith("max-bytes-per-grant: 16MiB", "max-bytes-per-grant: 1KiB");
    Field failed = AuditLog.class.getDeclaredField("failed");
    failed.setAccessible(true);
    failed.set(rig.auditLog, true); // what a failed append leaves: every later one is refused
    try {
      assertThrows(AuditException.class, () -> rig.host.reloadPolicy(strict, "operator"));
      assertEquals(strict.sha256(), rig.host.policy().sha256(), "the new policy is in force");
      assertTrue(rig.host.grants().isEmpty(), "the grant it forbids was revoked");
      long before = ChannelRig.checksum(rig.acmeKv);
      assertThrows(ChannelException.class, () -> g.writeBlocking(0, ChannelRig.bytes(2048, 9)));
      assertEquals(before, ChannelRig.checksum(rig.acmeKv), "nothing landed after the reload");
    } finally {
      failed.set(rig.auditLog, false);
    }
  }

  private Policy samplePolicyWith(String from, String to) throws Exception {
    String sample;
    try (var in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertTrue(sample.contains(from), "the sample policy has " + from);
    return new PolicyLoader()
        .parse("strict.yaml", sample.replace(from, to).getBytes(StandardCharsets.UTF_8));
  }

  private static Object field(Class<?> type, String name, Object of) throws Exception {
    Field f = type.getDeclaredField(name);
    f.setAccessible(true);
    return f.get(of);
  }
}
