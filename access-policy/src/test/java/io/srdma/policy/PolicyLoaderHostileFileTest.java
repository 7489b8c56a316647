package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A policy path ({@code srdma policy check}, the host's start and every reload) that holds a FIFO
 * or a directory, or a file swapped for a FIFO or for another file between its check and its open,
 * is one {@link PolicyRejectedException} naming the file and what was there, within the open's
 * bound (a FIFO must not hang a reload); a reload refused so leaves the policy in force deciding.
 * An honest policy reached through links (as Kubernetes mounts a ConfigMap) still loads.
 */
class PolicyLoaderHostileFileTest {
  /** Far above the open's 10 s bound: only a hang reaches it. */
  private static final Duration BOUND = Duration.ofSeconds(60);

  @TempDir Path dir;

  @AfterEach
  void noHook() {
    PolicyLoader.beforeOpen = null;
  }

  private static void mkfifo(Path p) throws Exception {
    Process proc = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
    assumeTrue(proc.waitFor(30, TimeUnit.SECONDS) && proc.exitValue() == 0, "needs mkfifo");
  }

  private static PolicyRejectedException refusal(Path file) {
    PolicyRejectedException e =
        assertTimeoutPreemptively(
            BOUND,
            () -> assertThrows(PolicyRejectedException.class, () -> new PolicyLoader().load(file)));
    assertTrue(e.limitExceeded(), "a hostile file, not a mistake in the text");
    assertEquals(1, e.errors().size(), e.errors().toString());
    return e;
  }

  /** Once, after the check of {@code f}: {@code swap} replaces what is there. */
  private static AtomicBoolean swapAfterCheck(Path f, ThrowingConsumer swap) {
    AtomicBoolean swapped = new AtomicBoolean();
    Consumer<Path> hook =
        p -> {
          if (p.equals(f) && swapped.compareAndSet(false, true)) {
            try {
              swap.accept(p);
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }
        };
    PolicyLoader.beforeOpen = hook;
    return swapped;
  }

  private interface ThrowingConsumer {
    void accept(Path p) throws Exception;
  }

  private static void assertSwapRefused(Path f, PolicyRejectedException e) {
    String m = e.errors().get(0).toString();
    assertTrue(m.startsWith(f + ":1:1: "), m);
    assertTrue(
        m.contains("its open blocked") || m.contains("changed between its check and its open"), m);
  }

  @Test
  void aFifoAtThePolicyPathIsRefusedNamingIt() throws Exception {
    Path f = dir.resolve("policy.yaml");
    mkfifo(f);
    assertEquals(
        f + ":1:1: not a regular file (a FIFO, a socket or a device); refused",
        refusal(f).errors().get(0).toString());
  }

  @Test
  void aDirectoryAtThePolicyPathIsRefusedNamingIt() throws Exception {
    Path f = Files.createDirectory(dir.resolve("policy.yaml"));
    assertEquals(
        f + ":1:1: not a regular file (a directory); refused",
        refusal(f).errors().get(0).toString());
  }

  @Test
  void aFifoSwappedInAfterTheCheckIsRefusedNotWaitedOn() throws Exception {
    Path f = Files.writeString(dir.resolve("policy.yaml"), PolicyLoaderTest.MINIMAL);
    AtomicBoolean swapped =
        swapAfterCheck(
            f,
            p -> {
              Files.delete(p);
              mkfifo(p);
            });
    PolicyRejectedException e = refusal(f);
    assertTrue(swapped.get(), "the hook ran");
    assertSwapRefused(f, e);
  }

  @Test
  void anotherFileSwappedInAfterTheCheckIsRefusedUnused() throws Exception {
    Path f = Files.writeString(dir.resolve("policy.yaml"), PolicyLoaderTest.MINIMAL);
    Path other =
        Files.writeString(dir.resolve("other.yaml"), PolicyLoaderTest.MINIMAL.replace("5s", "9s"));
    AtomicBoolean swapped =
        swapAfterCheck(f, p -> Files.move(other, p, StandardCopyOption.REPLACE_EXISTING));
    PolicyRejectedException e = refusal(f);
    assertTrue(swapped.get(), "the hook ran");
    assertEquals(
        f
            + ":1:1: changed between its check and its open (another file than the one checked):"
            + " put there by someone who can write its directory; refused unused",
        e.errors().get(0).toString());
  }

  @Test
  void aReloadAgainstAFifoIsRefusedAndThePolicyInForceStillDecides() throws Exception {
    Path f = Files.writeString(dir.resolve("policy.yaml"), PolicyLoaderTest.MINIMAL);
    PolicyLoader loader = new PolicyLoader();
    GrantAuthority authority = new GrantAuthority(loader.load(f));
    Policy before = authority.policy();
    BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    PolicyWatcher.Listener listener =
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
    try (PolicyWatcher w = PolicyWatcher.manual(f, loader, authority, listener)) {
      // the edit a reload is for, then a FIFO put in its place between the check and the open
      Files.writeString(
          f, PolicyLoaderTest.MINIMAL.replace("kv: {size: 4KiB}", "kv: {size: 8KiB}"));
      AtomicBoolean swapped =
          swapAfterCheck(
              f.toAbsolutePath(),
              p -> {
                Files.delete(p);
                mkfifo(p);
              });
      PolicyRejectedException e =
          assertTimeoutPreemptively(
              BOUND, () -> assertThrows(PolicyRejectedException.class, w::reload));
      assertTrue(swapped.get(), "the hook ran");
      assertSwapRefused(f.toAbsolutePath(), e);
      // the listener (srdma serve audits it) was told, and nothing of the reload was applied
      assertSame(e, events.poll(0, TimeUnit.SECONDS));
      assertTrue(events.isEmpty(), events.toString());
      assertSame(before, authority.policy());
      Decision d =
          authority.decide(
              "srdma://acme/w-1",
              "acme",
              "kv",
              EnumSet.of(Operation.WRITE),
              0,
              1024,
              Duration.ofSeconds(1));
      assertTrue(d.allowed(), d.explain());
      assertEquals(4096, authority.policy().tenants().get("acme").regions().get("kv").size());
    }
  }

  @Test
  void anHonestPolicyReachedThroughLinksLoads() throws Exception {
    // Kubernetes' ConfigMap layout: policy.yaml -> ..data/policy.yaml, ..data -> ..2026_12_06/
    Path real = Files.createDirectory(dir.resolve("..2026_12_06"));
    Files.writeString(real.resolve("policy.yaml"), PolicyLoaderTest.MINIMAL);
    Files.createSymbolicLink(dir.resolve("..data"), real.getFileName());
    Path f = Files.createSymbolicLink(dir.resolve("policy.yaml"), Path.of("..data", "policy.yaml"));
    Policy p = assertTimeoutPreemptively(BOUND, () -> new PolicyLoader().load(f));
    assertEquals(f.toString(), p.source());
    assertEquals(List.of("acme"), List.copyOf(p.tenants().keySet()));
    // and a reload through the same links installs the edited target
    Files.writeString(real.resolve("policy.yaml"), PolicyLoaderTest.MINIMAL.replace("5s", "6s"));
    GrantAuthority authority = new GrantAuthority(p);
    PolicyWatcher.Listener none =
        new PolicyWatcher.Listener() {
          @Override
          public void reloaded(ReloadResult result) {}

          @Override
          public void rejected(PolicyException error) {
            throw new AssertionError(error);
          }
        };
    try (PolicyWatcher w = PolicyWatcher.manual(f, new PolicyLoader(), authority, none)) {
      ReloadResult r = assertTimeoutPreemptively(BOUND, w::reload);
      assertSame(r.current(), authority.policy());
      assertEquals(
          Duration.ofSeconds(6),
          authority.policy().tenants().get("acme").roles().get("writer").maxTtl());
    }
  }
}
