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
 *
 * <p>A list refused for what it is (malformed, not the CA's, an older or different list of the same
 * number) is refused for good. One that could not be applied for a local, passing reason (its CRL
 * number or the CRL file could not be written: disk full, read-only) is retried by the {@link
 * KeyWatch} at later probes (backing off from 250 ms to 30 s) until it is in force; applying the
 * same list again is harmless (an equal number with the same content is no rollback).
 */
final class ClusterRevocationWatcher {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterRevocationWatcher.class);

  private final EtcdLink link;
  private final RevocationList revocations;
  private final Path crlFile;
  private final BiConsumer<BigInteger, Integer> applied;
  // guarded by this: a number put in force whose file write or callback did not complete
  private BigInteger unsettled;

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

  private synchronized KeyWatch.Outcome apply(byte[] pem, long revision) {
    X509CRL crl;
    try {
      crl = Crls.decode(pem);
    } catch (ClusterException e) {
      LOG.error("revocation list at etcd revision {} is malformed; ignored", revision);
      return KeyWatch.Outcome.REFUSED;
    }
    BigInteger before = revocations.number();
    try {
      // the same list again (a retry) passes: an equal number with the same content is no rollback
      revocations.update(crl);
    } catch (KeyExchangeException e) {
      switch (e.reason()) {
        case CRL_ROLLBACK -> {
          LOG.debug(
              "revocation list at etcd revision {} is not newer: {}", revision, e.getMessage());
          return KeyWatch.Outcome.REFUSED;
        }
        case REVOCATION_STATUS_UNKNOWN -> {
          // not the CA's, badly signed, no CRL number: the list itself is wrong
          LOG.error(
              "revocation list at etcd revision {} refused (the list in force stays): {}",
              revision,
              e.getMessage());
          return KeyWatch.Outcome.REFUSED;
        }
        default ->
            // IO_ERROR: its number could not be kept (disk full, read-only); anything else is not
            // known to be the list's fault either
            throw new KeyWatch.RetryLater("the list is not in force: " + e.getMessage(), e);
      }
    }
    BigInteger number = revocations.number();
    if (number == null || (number.equals(before) && !number.equals(unsettled))) {
      return KeyWatch.Outcome.APPLIED;
    }
    int revoked = crl.getRevokedCertificates() == null ? 0 : crl.getRevokedCertificates().size();
    if (!number.equals(before)) {
      LOG.info(
          "revocation list number {} from etcd in force: {} revoked (was number {})",
          number,
          revoked,
          before);
    }
    // until the file is written and the callback has run, handing the same list over again does
    // both again
    unsettled = number;
    if (crlFile != null) {
      writeFile(pem);
    }
    if (applied != null) {
      applied.accept(number, revoked);
    }
    unsettled = null;
    return KeyWatch.Outcome.APPLIED;
  }

  private void writeFile(byte[] pem) {
    Path tmp = crlFile.resolveSibling(crlFile.getFileName() + ".cluster-tmp");
    try {
      Files.write(tmp, pem);
      Files.move(tmp, crlFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      try {
        Files.deleteIfExists(tmp);
      } catch (IOException ignored) {
        // nothing more to do
      }
      throw new KeyWatch.RetryLater(
          "the list is in force but could not be written to "
              + crlFile
              + ": "
              + e
              + " (a restart before it is would start with the older file)",
          e);
    }
  }
}
