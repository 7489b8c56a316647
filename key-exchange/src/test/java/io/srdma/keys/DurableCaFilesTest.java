package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CA's files are written durably: {@code ca.crt} (renew), {@code crl.pem} (revoke) and the CRL
 * number file were replaced by a temporary file renamed over them with nothing flushed to disk, so
 * a crash soon after could leave an empty or partial {@code ca.crt} (the rename may reach the disk
 * before the content); new files (keys, certificates) and issuance records were not flushed either.
 * Now each file is flushed before it is renamed into place or closed, and its directory after.
 * Watched through {@link SecureFiles#afterForce}: what was flushed, in which order, and what {@code
 * ca.crt} held at that moment. (No crash is simulated.)
 */
class DurableCaFilesTest {
  @TempDir Path dir;

  private final List<Path> flushed = new CopyOnWriteArrayList<>();
  private final List<String> caCrtAtFlush = new CopyOnWriteArrayList<>();
  private Path caDir;

  @BeforeEach
  void watch() {
    caDir = dir.resolve("ca");
    SecureFiles.afterForce =
        p -> {
          flushed.add(p);
          Path crt = caDir.resolve(DeploymentCa.CA_CERTIFICATE);
          try {
            caCrtAtFlush.add(
                Files.exists(crt) ? Files.readString(crt, StandardCharsets.US_ASCII) : "");
          } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
          }
        };
  }

  @AfterEach
  void unwatch() {
    SecureFiles.afterForce = p -> {};
  }

  private List<String> names() {
    List<String> n = new ArrayList<>();
    for (Path p : flushed) {
      n.add(p.toAbsolutePath().equals(caDir.toAbsolutePath()) ? "<dir>" : name(p));
    }
    return n;
  }

  /** A temporary file's name without its random part. */
  private static String name(Path p) {
    String n = p.getFileName().toString();
    return n.startsWith(".") && n.endsWith(".tmp") ? n.replaceAll("[0-9]+\\.tmp$", "*.tmp") : n;
  }

  @Test
  void shouldFlushTheRenewedCaCertificateBeforeTheRenameAndTheDirectoryAfter() throws Exception {
    DeploymentCa ca = DeploymentCa.init(caDir, null);
    String before = Files.readString(caDir.resolve(DeploymentCa.CA_CERTIFICATE));
    flushed.clear();
    caCrtAtFlush.clear();

    DeploymentCa renewed = ca.renew(Duration.ofDays(30));

    String after = Files.readString(caDir.resolve(DeploymentCa.CA_CERTIFICATE));
    assertEquals(Pem.toPem(renewed.certificate()), after);
    assertEquals(List.of(".ca.crt*.tmp", "<dir>"), names(), "the new file, then its directory");
    assertEquals(before, caCrtAtFlush.get(0), "flushed before it was renamed over ca.crt");
    assertEquals(after, caCrtAtFlush.get(1), "the directory flushed after the rename");
  }

  @Test
  void shouldFlushTheCrlAndTheIssuanceRecord() throws Exception {
    DeploymentCa ca = DeploymentCa.init(caDir, null);
    flushed.clear();
    Credential c = ca.issuePeer(PeerIdentity.of("acme", "trainer-1"), Duration.ofDays(1));
    assertEquals(List.of(DeploymentCa.ISSUED), names(), "issued.txt flushed after the append");
    flushed.clear();

    assertTrue(ca.revoke(c.certificate()));

    assertEquals(List.of(".crl.pem*.tmp", "<dir>"), names());
  }

  @Test
  void shouldFlushEveryNewFileAndItsDirectory() throws Exception {
    DeploymentCa ca = DeploymentCa.init(caDir, null);
    List<String> init = names();
    for (String f :
        List.of(
            DeploymentCa.CA_KEY,
            DeploymentCa.CA_CERTIFICATE,
            DeploymentCa.ISSUED,
            DeploymentCa.CRL)) {
      int i = init.indexOf(f);
      assertTrue(i >= 0, f + " flushed: " + init);
      assertEquals("<dir>", init.get(i + 1), f + "'s directory flushed after it: " + init);
    }
    flushed.clear();
    Credential c = ca.issuePeer(PeerIdentity.of("acme", "trainer-1"), Duration.ofDays(1));
    c.writeTo(caDir.resolve("peer.crt"), caDir.resolve("peer.key"), null);
    List<String> written = names();
    assertEquals(
        List.of(DeploymentCa.ISSUED, "peer.key", "<dir>", "peer.crt", "<dir>"),
        written,
        "certificate and key flushed with their directory");
  }
}
