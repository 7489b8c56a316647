package io.srdma.channel.record.fuzz;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;

/**
 * Both ends of a real key schedule (X25519 + HKDF), made once per JVM for the fuzz harnesses (the
 * same steps as {@code io.srdma.channel.record.SessionPair}, which is package-private there).
 */
final class FuzzSession {
  final KeySchedule initiator;
  final KeySchedule responder;

  FuzzSession() throws Exception {
    SecureRandom random = new SecureRandom();
    Path dir = Files.createTempDirectory("srdma-record-fuzz");
    X509Certificate cert = DeploymentCa.init(dir.resolve("ca"), null).certificate();
    byte[] sessionId = new byte[16];
    random.nextBytes(sessionId);
    try (X25519KeyPair a = X25519KeyPair.generate(random);
        X25519KeyPair b = X25519KeyPair.generate(random);
        TlsBinding bindA = TlsBinding.certificateTranscript(cert, cert);
        TlsBinding bindB = TlsBinding.certificateTranscript(cert, cert)) {
      byte[] publicA = a.publicKey();
      byte[] publicB = b.publicKey();
      initiator = build(Role.INITIATOR, a, publicB, bindA, sessionId);
      responder = build(Role.RESPONDER, b, publicA, bindB, sessionId);
    }
  }

  private static KeySchedule build(
      Role role, X25519KeyPair own, byte[] peer, TlsBinding binding, byte[] sessionId) {
    return KeySchedule.builder()
        .role(role)
        .localKey(own)
        .peerPublicKey(peer)
        .binding(binding)
        .sessionId(sessionId)
        .initiatorQpn(0x111111)
        .responderQpn(0x222222)
        .establish();
  }
}
