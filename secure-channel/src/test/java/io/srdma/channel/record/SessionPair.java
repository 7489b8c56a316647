package io.srdma.channel.record;

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
 * Both ends of a real key schedule (X25519 + HKDF), as the control plane establishes it. Public for
 * the fuzz harnesses in {@code io.srdma.channel.record.fuzz}.
 */
public final class SessionPair implements AutoCloseable {
  private static X509Certificate certificate;

  /** The initiator's (client's) schedule. */
  public final KeySchedule initiator;

  /** The responder's (host's) schedule. */
  public final KeySchedule responder;

  /** A fresh pair: new X25519 keys and session id, one test CA per JVM. */
  public SessionPair() throws Exception {
    SecureRandom random = new SecureRandom();
    X509Certificate cert = certificate();
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

  private static synchronized X509Certificate certificate() throws Exception {
    if (certificate == null) {
      Path dir = Files.createTempDirectory("srdma-record-test");
      certificate = DeploymentCa.init(dir.resolve("ca"), null).certificate();
    }
    return certificate;
  }

  @Override
  public void close() {
    initiator.close();
    responder.close();
  }
}
