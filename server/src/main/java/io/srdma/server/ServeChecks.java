package io.srdma.server;

import io.srdma.console.ConsoleConfig;
import io.srdma.host.RegionHost;
import io.srdma.keys.CertificateUsage;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.HighWaterMark;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Pem;
import io.srdma.keys.RevocationList;
import io.srdma.keys.TrustAnchorValidity;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import io.srdma.policy.Region;
import io.srdma.policy.Tenant;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.VerbsException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The second phase of {@code srdma serve}: everything the configuration names is loaded and checked
 * (certificates, key, CA, CRL, policy, regions against the policy, provider, audit directory, the
 * console's files) and nothing is started. Every error is collected as {@code file:line:column:
 * key: what}, as {@link ServeConfig} does for the file itself.
 */
final class ServeChecks {
  private static final Logger LOG = LoggerFactory.getLogger(ServeChecks.class);

  /** The file name of {@link #crlNumberFile}. */
  static final String CRL_NUMBER_FILE = "srdma-crl-number";

  /** The file name of {@link #policySerialFile}. */
  static final String POLICY_SERIAL_FILE = "srdma-policy-serial";

  private ServeChecks() {}

  /** What the checks produced: everything the host needs, nothing opened yet. */
  record Prepared(
      Credential credential,
      DeploymentTrust trust,
      Policy policy,
      String policyText,
      String hostIdentity,
      ConsoleConfig console,
      RevocationList revocations,
      HighWaterMark policySerials) {}

  static Prepared prepare(ServeConfig c) throws ServeConfig.ConfigException {
    List<String> errors = new ArrayList<>();
    // TLS material
    char[] pass = null;
    if (c.keyPassphraseFile != null) {
      try {
        pass = Passphrases.read(c.keyPassphraseFile);
      } catch (KeyExchangeException e) {
        errors.add(c.where("tls.key-passphrase-file") + ": " + message(e));
      }
    }
    X509Certificate cert = null;
    PrivateKey key = null;
    X509CRL crl = null;
    try {
      cert = readCertificate(c.certificate, c.where("tls.certificate"), errors);
      if (readable(c.key, c.where("tls.key"), errors)) {
        try {
          key = Pem.readPrivateKey(c.key, pass);
        } catch (KeyExchangeException e) {
          errors.add(c.where("tls.key") + ": " + c.key + ": " + message(e));
        }
      }
    } finally {
      Passphrases.wipe(pass);
    }
    X509Certificate ca = readCertificate(c.caCertificate, c.where("tls.ca-certificate"), errors);
    if (readable(c.crl, c.where("tls.crl"), errors)) {
      try {
        crl = Pem.readCrl(c.crl);
      } catch (KeyExchangeException e) {
        errors.add(c.where("tls.crl") + ": " + c.crl + ": " + message(e));
      }
    }
    String hostIdentity = null;
    if (cert != null) {
      try {
        PeerIdentity id = PeerIdentity.fromCertificate(cert);
        hostIdentity = id.toUri();
        if (!RegionHost.HOST_TENANT.equals(id.tenant())) {
          errors.add(
              c.where("tls.certificate")
                  + ": "
                  + c.certificate
                  + " names "
                  + id
                  + "; a host needs an identity srdma://"
                  + RegionHost.HOST_TENANT
                  + "/<name> (srdma cert issue --tenant "
                  + RegionHost.HOST_TENANT
                  + " --peer NAME)");
        }
      } catch (KeyExchangeException e) {
        errors.add(c.where("tls.certificate") + ": " + c.certificate + ": " + message(e));
      }
    }
    if (cert != null && key != null && !matches(cert, key)) {
      errors.add(c.where("tls.key") + ": " + c.key + " is not the key of " + c.certificate);
    }
    if (ca != null && crl != null) {
      try {
        RevocationList list = RevocationList.of(crl, ca);
        if (cert != null) {
          DeploymentTrust.of(ca, list)
              .verify(new X509Certificate[] {cert}, CertificateUsage.TLS_SERVER);
        }
      } catch (KeyExchangeException e) {
        String at =
            e.reason() == KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN
                    || e.reason() == KeyExchangeException.Reason.CRL_ROLLBACK
                    || e.reason() == KeyExchangeException.Reason.IO_ERROR
                    || e.reason() == KeyExchangeException.Reason.FILE_REPLACED
                ? c.where("tls.crl") + ": " + c.crl
                : e.reason() == KeyExchangeException.Reason.CA_EXPIRED
                        || e.reason() == KeyExchangeException.Reason.CA_NOT_YET_VALID
                    ? c.where("tls.ca-certificate") + ": " + c.caCertificate
                    : c.where("tls.certificate") + ": " + c.certificate;
        errors.add(at + ": " + message(e) + " (checked against " + c.caCertificate + ")");
      }
    }
    // policy and regions
    Policy policy = null;
    String policyText = null;
    if (readable(c.policyFile, c.where("policy.file"), errors)) {
      try {
        byte[] bytes = readPolicy(c.policyFile);
        policy = new PolicyLoader().parse(c.policyFile.toString(), bytes);
        policyText = new String(bytes, StandardCharsets.UTF_8);
      } catch (PolicyRejectedException e) {
        errors.add(
            c.where("policy.file")
                + ": "
                + c.policyFile
                + " is not a valid policy ("
                + e.errors().size()
                + " errors):");
        e.errors().forEach(pe -> errors.add("  " + pe));
      } catch (PolicyException e) {
        errors.add(c.where("policy.file") + ": " + Addresses.explain(e));
      }
    }
    if (policy != null) {
      for (ServeConfig.RegionSpec r : c.regions) {
        Tenant t = policy.tenants().get(r.tenant());
        Region pr = t == null ? null : t.regions().get(r.region());
        long max = pr == null ? 0 : Math.min(pr.size(), Integer.MAX_VALUE - 8);
        if (t == null) {
          errors.add(c.where(r.at()) + ": the policy has no tenant '" + r.tenant() + "'");
        } else if (pr == null) {
          errors.add(
              c.where(r.at())
                  + ": the policy's tenant '"
                  + r.tenant()
                  + "' has no region '"
                  + r.region()
                  + "' (it has "
                  + String.join(", ", t.regions().keySet())
                  + ")");
        } else if (r.size() > max) {
          errors.add(
              c.where(r.at())
                  + ": size "
                  + r.size()
                  + " of "
                  + r.tenant()
                  + "/"
                  + r.region()
                  + " exceeds "
                  + max
                  + " bytes (the policy's size"
                  + (pr.size() > max ? ", capped at 2 GiB - 8 per region" : "")
                  + ")");
        }
      }
    }
    // audit log: its directory must exist and be writable; the file is opened at start
    Path auditDir = c.auditFile.toAbsolutePath().getParent();
    if (auditDir == null || !Files.isDirectory(auditDir)) {
      errors.add(c.where("audit.file") + ": directory " + auditDir + " does not exist");
    } else if (!Files.isWritable(auditDir)) {
      errors.add(c.where("audit.file") + ": directory " + auditDir + " is not writable");
    } else if (Files.isDirectory(c.auditFile)) {
      errors.add(c.where("audit.file") + ": " + c.auditFile + " is a directory");
    }
    // provider and device
    try {
      RdmaProviders.firstDevice(c.provider);
    } catch (VerbsException e) {
      errors.add(c.where("provider") + ": " + c.provider + ": " + Addresses.explain(e));
    }
    try {
      deviceOptions(c).conclude();
    } catch (VerbsException e) {
      errors.add(c.where("device") + ": " + Addresses.explain(e));
    }
    ConsoleConfig console = c.console ? ConsoleChecks.prepare(c, errors) : null;
    if (console != null && policy != null && policy.consoleUsers().isEmpty()) {
      LOG.warn(
          "the console runs but the policy {} has no console users: nobody can log in",
          c.policyFile);
    }
    if (!errors.isEmpty()) {
      throw new ServeConfig.ConfigException(errors);
    }
    TrustAnchorValidity.expiryWarning(ca, Instant.now())
        .ifPresent(w -> LOG.warn("{}: {}", c.where("tls.ca-certificate"), w));
    // everything else is good: only now is the CRL-number file read and written. The highest CRL
    // number accepted survives restarts, so a list put back while the host was down is refused.
    DeploymentTrust trust;
    RevocationList watched;
    try {
      watched = RevocationList.watching(c.crl, ca, crlNumberFile(c));
      watched.reload();
      trust = DeploymentTrust.of(ca, watched);
    } catch (KeyExchangeException e) {
      throw new ServeConfig.ConfigException(
          List.of(
              c.where("tls.crl")
                  + ": "
                  + c.crl
                  + ": "
                  + message(e)
                  + " (highest number accepted so far: "
                  + crlNumberFile(c)
                  + ")"));
    }
    // a clustered host keeps the highest pushed policy serial it applied the same way
    HighWaterMark policySerials = null;
    if (c.cluster != null) {
      try {
        policySerials = HighWaterMark.read(policySerialFile(c), "policy serial");
      } catch (KeyExchangeException e) {
        throw new ServeConfig.ConfigException(List.of(c.where("cluster") + ": " + message(e)));
      }
    }
    return new Prepared(
        Credential.of(cert, key),
        trust,
        policy,
        policyText,
        hostIdentity,
        console,
        watched,
        policySerials);
  }

  /** The policy file's bytes, read within the loader's bounds ({@link PolicyLoader#read}). */
  private static byte[] readPolicy(Path file) {
    return new PolicyLoader().read(file);
  }

  static X509Certificate readCertificate(Path file, String where, List<String> errors) {
    if (!readable(file, where, errors)) {
      return null;
    }
    try {
      return Pem.readCertificate(file);
    } catch (KeyExchangeException e) {
      errors.add(where + ": " + file + ": " + message(e));
      return null;
    }
  }

  static boolean readable(Path file, String where, List<String> errors) {
    if (file == null) {
      return false;
    }
    if (!Files.isRegularFile(file)) {
      errors.add(where + ": " + file + " does not exist (or is not a file)");
      return false;
    }
    if (!Files.isReadable(file)) {
      errors.add(where + ": " + file + " is not readable");
      return false;
    }
    return true;
  }

  /** Whether {@code key} signs what the certificate's public key verifies. */
  static boolean matches(X509Certificate cert, PrivateKey key) {
    try {
      String alg =
          "EC".equals(key.getAlgorithm()) ? "SHA256withECDSA" : "SHA256with" + key.getAlgorithm();
      byte[] probe = new byte[32];
      new SecureRandom().nextBytes(probe);
      Signature s = Signature.getInstance(alg);
      s.initSign(key);
      s.update(probe);
      byte[] sig = s.sign();
      Signature v = Signature.getInstance(alg);
      v.initVerify(cert.getPublicKey());
      v.update(probe);
      return v.verify(sig);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  static String message(KeyExchangeException e) {
    return Addresses.explain(e);
  }

  static DeviceOptions deviceOptions(ServeConfig c) {
    return new DeviceOptions()
        .bindAddress(c.bindAddress)
        .bindPort(c.bindPort)
        .portNumber(c.ibvPort)
        .gidIndex(c.gidIndex)
        .responderCpus(c.responderCpus);
  }

  /**
   * Where the host keeps the highest CRL number it accepted: beside the audit log, in a directory
   * the host must be able to write and others must not.
   */
  static Path crlNumberFile(ServeConfig c) {
    return c.auditFile.toAbsolutePath().resolveSibling(CRL_NUMBER_FILE);
  }

  /**
   * Where a clustered host keeps the highest pushed policy serial it applied (and that policy's
   * hash), beside the CRL-number file.
   */
  static Path policySerialFile(ServeConfig c) {
    return c.auditFile.toAbsolutePath().resolveSibling(POLICY_SERIAL_FILE);
  }
}
