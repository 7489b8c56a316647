package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * Key files, PEM files and the CA directory's files swapped between their check and their open, as
 * whoever can write their directory can: a regular file replaced by a FIFO (whose open blocks until
 * its other end is opened: the CA commands or a host's start would hang) or by a link to another
 * file, after the check and before the open ({@link CheckedOpen#beforeOpen}). Each must end in a
 * {@link KeyExchangeException} {@code FILE_REPLACED} naming the file, well within a preemptive
 * timeout, with nothing read from or written to another file and no thread left blocked.
 */
class KeyFileOpenRaceTest {
  private static final Duration LIMIT = Duration.ofSeconds(20);

  @TempDir Path tmp;

  @AfterEach
  void clearHooks() {
    CheckedOpen.beforeOpen = null;
    CheckedOpen.afterOpen = null;
  }

  /** Runs {@code action} on the {@code nth} open (1-based) of {@code target} only. */
  private static Consumer<Path> on(Path target, int nth, ThrowingRunnable action) {
    AtomicInteger seen = new AtomicInteger();
    return p -> {
      if (p.equals(target) && seen.incrementAndGet() == nth) {
        try {
          action.run();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    };
  }

  @FunctionalInterface
  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  private static void mkfifo(Path p) throws Exception {
    Process proc = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
    assumeTrue(proc.waitFor(30, TimeUnit.SECONDS) && proc.exitValue() == 0, "needs mkfifo");
  }

  /** Moves {@code file} aside and puts a FIFO in its place. */
  private ThrowingRunnable fifoFor(Path file) {
    return () -> {
      Files.move(file, tmp.resolve("aside-" + file.getFileName()));
      mkfifo(file);
    };
  }

  private static KeyExchangeException replaced(Path named, Executable call) {
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> assertTimeoutPreemptively(LIMIT, call));
    assertEquals(KeyExchangeException.Reason.FILE_REPLACED, e.reason(), e.getMessage());
    assertTrue(e.getMessage().contains(named.toString()), e.getMessage());
    assertNoOpenThreadLeft();
    return e;
  }

  /** The thread of a given-up open ends once its FIFO is released. */
  private static void assertNoOpenThreadLeft() {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(CheckedOpen.THREAD_NAME) && t.isAlive())) {
      assertTrue(System.nanoTime() < deadline, "a " + CheckedOpen.THREAD_NAME + " thread is left");
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  private Path privateKey(String name) throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    // 700 whatever the umask: a group-writable directory would be refused before any open
    Path keys =
        Files.createDirectories(
            tmp.resolve("keys"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path file = keys.resolve(name);
    Pem.writePrivateKey(file, g.generateKeyPair().getPrivate(), null);
    return file;
  }

  @Test
  void shouldNotHangWhenAPrivateKeyBecomesAFifoBetweenCheckAndOpen() throws Exception {
    Path key = privateKey("host.key");
    CheckedOpen.beforeOpen = on(key, 1, fifoFor(key));
    KeyExchangeException e = replaced(key, () -> Pem.readPrivateKey(key, null));
    assertTrue(e.getMessage().contains("blocked"), e.getMessage());
  }

  @Test
  void shouldNotReadAnotherKeyLinkedInBetweenCheckAndOpen() throws Exception {
    // the key was judged (mode, owner, directory); a link swapped in after that would make the host
    // or the CA use a key of the attacker's choosing
    Path key = privateKey("host.key");
    Path theirs = privateKey("theirs.key");
    PrivateKey good = Pem.readPrivateKey(key, null);
    CheckedOpen.beforeOpen =
        on(
            key,
            1,
            () -> {
              Files.move(key, tmp.resolve("aside.key"));
              Files.createSymbolicLink(key, theirs);
            });
    replaced(key, () -> Pem.readPrivateKey(key, null));
    // a link judged as such (its target's checks) is still followed
    CheckedOpen.beforeOpen = null;
    Files.delete(key);
    Files.createSymbolicLink(key, tmp.resolve("aside.key"));
    assertArrayEquals(good.getEncoded(), Pem.readPrivateKey(key, null).getEncoded());
  }

  @Test
  void shouldNotHangOpeningTheCaWhenItsCertificateBecomesAFifo() throws Exception {
    Path dir = tmp.resolve("ca");
    DeploymentCa.init(dir, null);
    Path crt = dir.resolve(DeploymentCa.CA_CERTIFICATE);
    CheckedOpen.beforeOpen = on(crt, 1, fifoFor(crt));
    replaced(crt, () -> DeploymentCa.open(dir, null));
  }

  @Test
  void shouldNotHangRevokingWhenTheLockFileBecomesAFifo() throws Exception {
    Path dir = tmp.resolve("ca");
    DeploymentCa ca = DeploymentCa.init(dir, null);
    BigInteger serial =
        ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1))
            .certificate()
            .getSerialNumber();
    Path lock = dir.resolve(".lock");
    assertTrue(Files.isRegularFile(lock), "the issuance left the lock file");
    CheckedOpen.beforeOpen = on(lock, 1, fifoFor(lock));
    replaced(lock, () -> ca.revoke(serial));
  }

  @Test
  void shouldNotHangIssuingWhenTheIssuanceLogBecomesAFifo() throws Exception {
    Path dir = tmp.resolve("ca");
    DeploymentCa ca = DeploymentCa.init(dir, null);
    Path issued = dir.resolve(DeploymentCa.ISSUED);
    CheckedOpen.beforeOpen = on(issued, 1, fifoFor(issued));
    replaced(issued, () -> ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1)));
  }

  @Test
  void shouldNotAppendTheIssuanceToAFileLinkedInBetweenCheckAndOpen() throws Exception {
    Path dir = tmp.resolve("ca");
    DeploymentCa ca = DeploymentCa.init(dir, null);
    Path issued = dir.resolve(DeploymentCa.ISSUED);
    // another file of the CA's user, e.g. a shell's start-up file
    Path victim = Files.writeString(tmp.resolve("victim"), "untouched\n");
    CheckedOpen.beforeOpen =
        on(
            issued,
            1,
            () -> {
              Files.move(issued, tmp.resolve("aside-issued"));
              Files.createSymbolicLink(issued, victim);
            });
    replaced(issued, () -> ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1)));
    assertEquals("untouched\n", Files.readString(victim, StandardCharsets.UTF_8));
  }

  @Test
  void shouldNotHangReadingAHighWaterMarkThatBecomesAFifo() throws Exception {
    Path mark = tmp.resolve("crl.number");
    HighWaterMark.read(mark, "CRL number").advance(BigInteger.TEN, new byte[32]);
    CheckedOpen.beforeOpen = on(mark, 1, fifoFor(mark));
    replaced(mark, () -> HighWaterMark.read(mark, "CRL number"));
  }
}
