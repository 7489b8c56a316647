package io.srdma.bench.keys;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Role;
import io.srdma.keys.TlsBinding;
import io.srdma.keys.X25519KeyPair;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The CPU cost of the key negotiation alone, both parties in one thread, no network: two X25519 key
 * pairs, two agreements, two certificate-transcript bindings, two schedules, both confirmations
 * checked.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Benchmark)
public class KeyScheduleBenchmark {
  private final SecureRandom random = new SecureRandom();
  private final byte[] sessionId = {1, 2, 3, 4, 5, 6, 7, 8};
  private X509Certificate initiatorCert;
  private X509Certificate responderCert;

  /** Two certificates of one CA, for the transcript binding. */
  @Setup
  public void setUp() throws Exception {
    Path dir = Files.createTempDirectory("srdma-bench-ks");
    try {
      DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
      initiatorCert = ca.issuePeer(PeerIdentity.of("b", "i"), Duration.ofDays(1)).certificate();
      responderCert = ca.issuePeer(PeerIdentity.of("b", "r"), Duration.ofDays(1)).certificate();
    } finally {
      Schedules.delete(dir);
    }
  }

  /** Both parties' negotiation. */
  @Benchmark
  public int negotiateBothSides() {
    try (X25519KeyPair i = X25519KeyPair.generate(random);
        X25519KeyPair r = X25519KeyPair.generate(random)) {
      byte[] iPub = i.publicKey();
      byte[] rPub = r.publicKey();
      try (KeySchedule ki = schedule(Role.INITIATOR, i, rPub);
          KeySchedule kr = schedule(Role.RESPONDER, r, iPub)) {
        kr.current().verifyPeerConfirmation(ki.current().confirmation());
        ki.current().verifyPeerConfirmation(kr.current().confirmation());
        return ki.epoch() + kr.epoch();
      }
    }
  }

  private KeySchedule schedule(Role role, X25519KeyPair local, byte[] peer) {
    return Schedules.establish(
        role,
        local,
        peer,
        TlsBinding.certificateTranscript(initiatorCert, responderCert),
        sessionId);
  }
}
