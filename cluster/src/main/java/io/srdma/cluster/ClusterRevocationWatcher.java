package io.srdma.cluster;

import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.RevocationList;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509CRL;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A host's follower of the deployment's revocation list in etcd. Each new list goes through {@link
 * RevocationList#update} (CA signature, CRL number never backwards): from then on handshakes of a
 * revoked peer are refused, and the host's session watchdog, which re-verifies every live session's
 * certificate against the same list, ends its sessions within its sweep (600 ms). The list is also
 * written over the host's CRL file (atomically), so a restart while etcd is away starts with it.
 */
final class ClusterRevocationWatcher {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterRevocationWatcher.class);

  private final EtcdLink link;
  private final RevocationList revocations;
  private final Path crlFile;
  private final BiConsumer<BigInteger, Integer> applied;

  ClusterRevocationWatcher(
      EtcdLink link,
      RevocationList revocations,
      Path crlFile,
      BiConsumer<BigInteger, Integer> applied) {
    this.link = link;
    this.revocations = revocations;
    this.crlFile = crlFile;
    this.applied = applied;
  }

  KeyWatch follower(java.util.concurrent.Executor apply) {
    return new KeyWatch(
        link, link.keys().crl(), "the deployment revocation list", this::apply, apply);
  }

  private void apply(byte[] pem, long revision) {
    X509CRL crl;
    try {
      crl = Crls.decode(pem);
    } catch (ClusterException e) {
      LOG.error("revocation list at etcd revision {} is malformed; ignored", revision);
      return;
    }
    BigInteger before = revocations.number();
    try {
      revocations.update(crl);
    } catch (KeyExchangeException e) {
      if (e.reason() == KeyExchangeException.Reason.CRL_ROLLBACK) {
        LOG.debug("revocation list at etcd revision {} is not newer: {}", revision, e.getMessage());
      } else {
        LOG.error(
            "revocation list at etcd revision {} refused (the list in force stays): {}",
            revision,
            e.getMessage());
      }
      return;
    }
    BigInteger number = revocations.number();
    if (number == null || number.equals(before)) {
      return;
    }
    int revoked = crl.getRevokedCertificates() == null ? 0 : crl.getRevokedCertificates().size();
    LOG.info(
        "revocation list number {} from etcd in force: {} revoked (was number {})",
        number,
        revoked,
        before);
    if (crlFile != null) {
      writeFile(pem);
    }
    if (applied != null) {
      applied.accept(number, revoked);
    }
  }

  private void writeFile(byte[] pem) {
    Path tmp = crlFile.resolveSibling(crlFile.getFileName() + ".cluster-tmp");
    try {
      Files.write(tmp, pem);
      Files.move(tmp, crlFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      LOG.warn(
          "revocation list from etcd is in force but could not be written to {}: {} (a restart"
              + " before etcd answers would start with the older file)",
          crlFile,
          e.toString());
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException ignored) {
        // nothing more to do
      }
    }
  }
}
