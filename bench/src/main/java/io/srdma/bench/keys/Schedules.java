package io.srdma.bench.keys;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.util.Comparator;
import java.util.stream.Stream;

/** Key schedules for benchmarks: one side's, or both ends of a session, without a network. */
public final class Schedules {
  private Schedules() {}

  /** One side's schedule, as the control plane derives it (QP numbers fixed). */
  public static KeySchedule establish(
      Role role, X25519KeyPair local, byte[] peer, TlsBinding binding, byte[] sessionId) {
    return KeySchedule.builder()
        .role(role)
        .localKey(local)
        .peerPublicKey(peer)
        .binding(binding)
        .sessionId(sessionId)
        .initiatorQpn(0x111111)
        .responderQpn(0x222222)
        .establish();
  }

  /**
   * Both ends of one session: fresh X25519 key pairs, bound to a throwaway CA's certificate.
   *
   * @return {initiator, responder}
   */
  public static KeySchedule[] pair(SecureRandom random) throws Exception {
    X509Certificate cert = throwawayCaCertificate();
    byte[] sessionId = new byte[16];
    random.nextBytes(sessionId);
    try (X25519KeyPair a = X25519KeyPair.generate(random);
        X25519KeyPair b = X25519KeyPair.generate(random);
        TlsBinding bindA = TlsBinding.certificateTranscript(cert, cert);
        TlsBinding bindB = TlsBinding.certificateTranscript(cert, cert)) {
      byte[] publicA = a.publicKey(); // establish() closes the local key pair
      byte[] publicB = b.publicKey();
      return new KeySchedule[] {
        establish(Role.INITIATOR, a, publicB, bindA, sessionId),
        establish(Role.RESPONDER, b, publicA, bindB, sessionId)
      };
    }
  }

  /** A CA's certificate, its files deleted at once. */
  static X509Certificate throwawayCaCertificate() throws Exception {
    Path dir = Files.createTempDirectory("srdma-bench-ca");
    try {
      return DeploymentCa.init(dir.resolve("ca"), null).certificate();
    } finally {
      delete(dir);
    }
  }

  /** Deletes a directory tree. */
  static void delete(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
