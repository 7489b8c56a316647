package io.srdma.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Audit files swapped between their check and their open, as whoever can write the log directory
 * can: a regular file replaced by a FIFO (whose open for reading blocks until a writer comes), by a
 * link, or by another file, after the check and before the open ({@link AuditFileOpen#beforeOpen}),
 * or replaced and put back around the open ({@link AuditFileOpen#afterOpen}). Each must end in an
 * {@link AuditFileRefusedException} naming the file, well within a preemptive timeout, with nothing
 * written where it should not be and no thread left blocked.
 */
class AuditOpenRaceTest {
  private static final Duration LIMIT = Duration.ofSeconds(20);

  @TempDir Path dir;
  private AuditFixture fx;
  private Path w;

  @BeforeEach
  void setUp() throws Exception {
    fx = new AuditFixture(dir);
    w = Files.createDirectory(dir.resolve("w")).resolve("audit.log");
  }

  @AfterEach
  void clearHooks() {
    AuditFileOpen.beforeOpen = null;
    AuditFileOpen.afterOpen = null;
  }

  /** Runs {@code action} on the {@code nth} open (1-based) of {@code target} only. */
  private static Consumer<Path> on(Path target, int nth, Runnable action) {
    AtomicInteger seen = new AtomicInteger();
    return p -> {
      if (p.equals(target) && seen.incrementAndGet() == nth) {
        action.run();
      }
    };
  }

  private static Runnable fifoFor(Path file, Path aside) {
    return () -> {
      try {
        Files.move(file, aside);
        AuditHostileFilesTest.mkfifo(file);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    };
  }

  private static Runnable putBack(Path file, Path aside) {
    return () -> {
      try {
        Files.move(aside, file, StandardCopyOption.REPLACE_EXISTING);
      } catch (java.io.IOException e) {
        throw new UncheckedIOException(e);
      }
    };
  }

  private static AuditFileRefusedException refused(Executable call) {
    AuditFileRefusedException e =
        assertThrows(AuditFileRefusedException.class, () -> assertTimeoutPreemptively(LIMIT, call));
    assertNoOpenThreadLeft();
    return e;
  }

  /** The thread of a given-up open ends once its FIFO is released. */
  private static void assertNoOpenThreadLeft() {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals("srdma-audit-open") && t.isAlive())) {
      assertTrue(System.nanoTime() < deadline, "an srdma-audit-open thread is still blocked");
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  @Test
  void shouldNotHangWhenTheActiveLogBecomesAFifoBetweenCheckAndOpen() throws Exception {
    fx.write(w, 4, 3);
    AuditFileOpen.beforeOpen = on(w, 1, fifoFor(w, dir.resolve("aside")));
    AuditFileRefusedException e = refused(() -> AuditLog.open(fx.options(w, 4)).close());
    assertEquals(w, e.file());
    assertEquals(AuditFileRefusedException.Reason.BLOCKED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains(w.toString()), e.getMessage());
  }

  @Test
  void shouldNotHangWhenTheNewestRotatedFileBecomesAFifoBetweenCheckAndOpen() throws Exception {
    fx.write(w, 4, 3);
    Path segment = AuditLog.segmentName(w, 1);
    Files.move(w, segment);
    AuditFileOpen.beforeOpen = on(segment, 1, fifoFor(segment, dir.resolve("aside")));
    AuditFileRefusedException e = refused(() -> AuditLog.open(fx.options(w, 4)).close());
    assertEquals(segment, e.file());
    assertEquals(AuditFileRefusedException.Reason.BLOCKED, e.reason(), e.getMessage());
    assertFalse(Files.exists(w), "no new file started after the refusal");
  }

  @Test
  void shouldNotHangWhenVerifyMeetsAFifoSwappedInBetweenCheckAndOpen() throws Exception {
    fx.write(w, 4, 3);
    AuditFileOpen.beforeOpen = on(w, 1, fifoFor(w, dir.resolve("aside")));
    AuditFileRefusedException e = refused(() -> fx.verifier().verify(List.of(w), null, false));
    assertEquals(w, e.file());
    assertEquals(AuditFileRefusedException.Reason.BLOCKED, e.reason(), e.getMessage());
  }

  @Test
  void shouldNotHangWhenTheKeyBecomesAFifoBetweenCheckAndOpen() throws Exception {
    Path key = AuditKey.defaultFile(w);
    AuditKey.loadOrCreate(key).close();
    AuditFileOpen.beforeOpen = on(key, 1, fifoFor(key, dir.resolve("aside")));
    AuditFileRefusedException e = refused(() -> AuditKey.load(key).close());
    assertEquals(key, e.file());
    assertEquals(AuditFileRefusedException.Reason.BLOCKED, e.reason(), e.getMessage());
  }

  @Test
  void shouldNotReadAKeyLinkedInBetweenCheckAndOpen() throws Exception {
    // the key was judged (owner, mode, directory); a link swapped in after that would make the
    // log continue under a key of the attacker's choosing
    Path key = AuditKey.defaultFile(w);
    AuditKey.loadOrCreate(key).close();
    Path theirs = Files.createDirectory(dir.resolve("theirs")).resolve("their.key");
    AuditKey.loadOrCreate(theirs).close();
    AuditFileOpen.beforeOpen =
        on(
            key,
            1,
            () -> {
              try {
                Files.delete(key);
                Files.createSymbolicLink(key, theirs);
              } catch (java.io.IOException x) {
                throw new UncheckedIOException(x);
              }
            });
    AuditFileRefusedException e = refused(() -> AuditKey.load(key).close());
    assertEquals(key, e.file());
    assertEquals(AuditFileRefusedException.Reason.REPLACED, e.reason(), e.getMessage());
  }

  @Test
  void shouldNotAppendToAFileLinkedInBetweenCheckAndOpen() throws Exception {
    // an empty active file is continued (a crash before its genesis); a hard link to another file
    // of the same owner swapped in before its open would get the genesis line instead
    Files.createFile(w, PosixFilePermissions.asFileAttribute(AuditFiles.OWNER_ONLY));
    Path precious = dir.resolve("w").resolve("precious.txt");
    Files.writeString(precious, "keep me\n");
    AuditFileOpen.beforeOpen =
        on(
            w,
            1,
            () -> {
              try {
                Files.delete(w);
                Files.createLink(w, precious);
              } catch (java.io.IOException x) {
                throw new UncheckedIOException(x);
              }
            });
    AuditFileRefusedException e = refused(() -> AuditLog.open(fx.options(w, 4)).close());
    assertEquals(w, e.file());
    assertEquals(AuditFileRefusedException.Reason.REPLACED, e.reason(), e.getMessage());
    assertEquals("keep me\n", Files.readString(precious));
  }

  @Test
  void shouldNotAppendToASymbolicLinkSwappedInBetweenCheckAndOpen() throws Exception {
    Files.createFile(w, PosixFilePermissions.asFileAttribute(AuditFiles.OWNER_ONLY));
    Path precious = dir.resolve("w").resolve("precious.txt");
    Files.writeString(precious, "keep me\n");
    AuditFileOpen.beforeOpen =
        on(
            w,
            1,
            () -> {
              try {
                Files.delete(w);
                Files.createSymbolicLink(w, precious);
              } catch (java.io.IOException x) {
                throw new UncheckedIOException(x);
              }
            });
    AuditFileRefusedException e = refused(() -> AuditLog.open(fx.options(w, 4)).close());
    assertEquals(w, e.file());
    assertEquals(AuditFileRefusedException.Reason.REPLACED, e.reason(), e.getMessage());
    assertEquals("keep me\n", Files.readString(precious));
  }

  @Test
  void shouldRefuseALockFileSwappedForAFifoAndPutBackAroundItsOpen() throws Exception {
    // the path looks right before and after; what was opened is the FIFO, which the pid (and
    // nothing of the lock) would go to
    Path lock = AuditLog.lockFile(w);
    AuditLog.open(fx.options(w, 4)).close();
    Path aside = dir.resolve("aside");
    AuditFileOpen.beforeOpen = on(lock, 1, fifoFor(lock, aside));
    AuditFileOpen.afterOpen = on(lock, 1, putBack(lock, aside));
    AuditFileRefusedException e = refused(() -> AuditLog.open(fx.options(w, 4)).close());
    assertEquals(lock, e.file());
    assertEquals(AuditFileRefusedException.Reason.REPLACED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains("FIFO"), e.getMessage());
  }
}
