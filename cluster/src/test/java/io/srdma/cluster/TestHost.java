package io.srdma.cluster;

import io.srdma.keys.CertificateUsage;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.HighWaterMark;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.RevocationList;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyWatcher;
import io.srdma.policy.ReloadResult;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The parts of a region host the cluster drives, without the data plane: the grant authority its
 * policy is installed in (as {@code srdma serve}'s reload listener does), and the deployment trust
 * whose revocation list its handshakes and session watchdog check.
 */
final class TestHost implements AutoCloseable {
  final String name;
  final GrantAuthority authority;
  final RevocationList revocations;
  final DeploymentTrust trust;
  final List<ReloadResult> reloads = new CopyOnWriteArrayList<>();
  final List<PolicyException> refused = new CopyOnWriteArrayList<>();
  final ClusterNode node;

  TestHost(String name, ClusterConfig config, Policy initial, DeploymentCa ca, Path crlFile) {
    this(name, config, initial, ca, crlFile, null);
  }

  /** A host that keeps its highest policy serial in {@code serials} (null: memory only). */
  TestHost(
      String name,
      ClusterConfig config,
      Policy initial,
      DeploymentCa ca,
      Path crlFile,
      HighWaterMark serials) {
    this.name = name;
    this.authority = new GrantAuthority(initial);
    this.revocations = RevocationList.of(ca.crl(), ca.certificate());
    this.trust = DeploymentTrust.of(ca.certificate(), revocations);
    this.node =
        ClusterNode.start(
            new ClusterNode.Options()
                .config(config)
                .host(name)
                .policy(
                    authority,
                    new PolicyWatcher.Listener() {
                      @Override
                      public void reloaded(ReloadResult result) {
                        reloads.add(result);
                      }

                      @Override
                      public void rejected(PolicyException error) {
                        refused.add(error);
                      }
                    },
                    ca.certificate())
                .policySerials(serials)
                .revocations(revocations, crlFile));
  }

  String policyHash() {
    return authority.policy().sha256();
  }

  /** Whether a handshake (or the session watchdog's re-check) would refuse this certificate. */
  boolean refuses(X509Certificate cert) {
    try {
      trust.verify(new X509Certificate[] {cert}, CertificateUsage.TLS_CLIENT);
      return false;
    } catch (KeyExchangeException e) {
      return e.reason() == KeyExchangeException.Reason.CERTIFICATE_REVOKED;
    }
  }

  @Override
  public void close() {
    node.close();
  }
}
