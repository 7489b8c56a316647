package io.srdma.keys;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** A deployment CA in a temporary directory, and certificates of every kind the tests need. */
final class TestPki {
  final Path dir;
  final DeploymentCa ca;

  private TestPki(Path dir, DeploymentCa ca) {
    this.dir = dir;
    this.ca = ca;
  }

  static TestPki create(Path dir) {
    return new TestPki(dir, DeploymentCa.init(dir, null));
  }

  Credential peer(String tenant, String peer) {
    return ca.issuePeer(PeerIdentity.of(tenant, peer), Duration.ofDays(1));
  }

  Credential expired(String tenant, String peer) {
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    return ca.issuePeer(
        PeerIdentity.of(tenant, peer), now.minus(Duration.ofDays(10)), now.minusSeconds(60));
  }

  Credential notYetValid(String tenant, String peer) {
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    return ca.issuePeer(
        PeerIdentity.of(tenant, peer), now.plus(Duration.ofDays(1)), now.plus(Duration.ofDays(2)));
  }

  Credential revoked(String tenant, String peer) {
    Credential c = peer(tenant, peer);
    ca.revoke(c.certificate());
    return c;
  }

  Credential consoleServer(String host) {
    return ca.issueServer(host, Duration.ofDays(1));
  }

  DeploymentTrust trust() {
    return ca.trust();
  }

  MutualTls server(Credential c) {
    return MutualTls.server(c, trust());
  }

  MutualTls client(Credential c) {
    return MutualTls.client(c, trust());
  }
}
