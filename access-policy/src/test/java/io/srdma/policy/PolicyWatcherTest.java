package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class PolicyWatcherTest {
  private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
  private final PolicyWatcher.Listener listener =
      new PolicyWatcher.Listener() {
        @Override
        public void reloaded(ReloadResult result) {
          events.add(result);
        }

        @Override
        public void rejected(PolicyException error) {
          events.add(error);
        }
      };

  @Test
  @Timeout(60)
  void shouldReloadWhenTheFileChangesAndKeepThePolicyWhenItIsBroken(@TempDir Path dir)
      throws Exception {
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, PolicyLoaderTest.MINIMAL);
    PolicyLoader loader = new PolicyLoader();
    GrantAuthority authority = new GrantAuthority(loader.load(file));
    assertTrue(
        authority
            .issue(
                "g1",
                "srdma://acme/w-1",
                "acme",
                "kv",
                EnumSet.of(Operation.WRITE),
                0,
                1024,
                Duration.ofSeconds(1))
            .allowed());
    PolicyWatcher watcher = PolicyWatcher.start(file, loader, authority, listener);
    try {
      assertTrue(
          Thread.getAllStackTraces().keySet().stream()
              .anyMatch(t -> t.getName().equals(PolicyWatcher.THREAD_NAME) && t.isDaemon()));
      replace(dir, file, PolicyLoaderTest.MINIMAL.replace("1KiB", "512B"));
      Object e = events.poll(20, TimeUnit.SECONDS);
      ReloadResult r = assertInstanceOf(ReloadResult.class, e);
      assertEquals(1, r.forbidden().size());
      assertEquals(DecisionReason.TOO_LARGE, r.forbidden().get(0).reason());
      Policy inForce = authority.policy();
      assertSame(r.current(), inForce);

      replace(dir, file, PolicyLoaderTest.MINIMAL.replace("1KiB", "lots"));
      Object rejected = events.poll(20, TimeUnit.SECONDS);
      assertInstanceOf(PolicyRejectedException.class, rejected);
      assertSame(inForce, authority.policy());
    } finally {
      watcher.close();
    }
    // close() joins the watcher thread (bounded): it must be gone by now
    assertFalse(
        Thread.getAllStackTraces().keySet().stream()
            .anyMatch(t -> t.getName().equals(PolicyWatcher.THREAD_NAME) && t.isAlive()));
  }

  @Test
  void shouldReloadOnRequestAndSkipAnUnchangedFile(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("policy.yaml");
    Files.writeString(file, PolicyLoaderTest.MINIMAL);
    PolicyLoader loader = new PolicyLoader();
    GrantAuthority authority = new GrantAuthority(loader.load(file));
    try (PolicyWatcher w = PolicyWatcher.manual(file, loader, authority, listener)) {
      ReloadResult same = w.reload();
      assertSame(same.previous(), same.current());
      assertTrue(events.isEmpty());
      Files.writeString(file, PolicyLoaderTest.MINIMAL.replace("5s", "6s"));
      ReloadResult changed = w.reload();
      assertEquals(
          Duration.ofSeconds(6),
          changed.current().tenants().get("acme").roles().get("writer").maxTtl());
      Files.writeString(file, "version: 1\ntenants: [oops]\n");
      PolicyRejectedException e = assertThrows(PolicyRejectedException.class, w::reload);
      assertEquals(
          file + ":2:10: tenants must be a mapping, found a list", e.errors().get(0).toString());
      assertSame(changed.current(), authority.policy());
    }
  }

  @Test
  @Timeout(60)
  void shouldSurviveAHostileFileAuditItAndApplyTheNextValidOne(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("policy.yaml");
    Path auditFile = dir.resolve("audit.log");
    Files.writeString(file, PolicyLoaderTest.MINIMAL);
    PolicyLoader loader = new PolicyLoader();
    GrantAuthority authority = new GrantAuthority(loader.load(file));
    Policy before = authority.policy();
    try (AuditLog log = AuditLog.open(auditFile)) {
      AuditTrail trail = new AuditTrail(log);
      PolicyWatcher.Listener audited =
          new PolicyWatcher.Listener() {
            @Override
            public void reloaded(ReloadResult result) {
              trail.reloaded(result, AuditTrail.SYSTEM);
              events.add(result);
            }

            @Override
            public void rejected(PolicyException error) {
              trail.reloadRejected(error, AuditTrail.SYSTEM);
              events.add(error);
            }
          };
      try (PolicyWatcher watcher = PolicyWatcher.start(file, loader, authority, audited)) {
        // 3 KB that used to overflow the stack and kill this thread
        replace(dir, file, "version: 1\ntenants:\n  acme: " + "[".repeat(1500) + "\n");
        PolicyRejectedException e =
            assertInstanceOf(PolicyRejectedException.class, events.poll(20, TimeUnit.SECONDS));
        assertTrue(e.limitExceeded());
        assertSame(before, authority.policy());
        replace(dir, file, PolicyLoaderTest.MINIMAL.replace("5s", "7s"));
        ReloadResult r = assertInstanceOf(ReloadResult.class, events.poll(20, TimeUnit.SECONDS));
        assertSame(r.current(), authority.policy());
        assertEquals(
            Duration.ofSeconds(7),
            authority.policy().tenants().get("acme").roles().get("writer").maxTtl());
        assertTrue(
            Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals(PolicyWatcher.THREAD_NAME) && t.isAlive()));
        assertNotNull(watcher);
      }
    }
    String audit = Files.readString(auditFile);
    assertTrue(audit.contains("nested more than"), audit);
    assertTrue(audit.indexOf("nested more than") < audit.lastIndexOf("reload"), audit);
  }

  // write-then-rename, as careful editors and config tools do
  private static void replace(Path dir, Path file, String text) throws Exception {
    Path tmp = Files.createTempFile(dir, "policy", ".tmp");
    Files.writeString(tmp, text);
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
