package io.srdma.cli;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Pem;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code srdma cert}: issue, revoke and inspect certificates of the deployment CA. */
@Command(
    name = "cert",
    mixinStandardHelpOptions = true,
    description = "Issue, revoke and inspect certificates of the deployment CA.",
    subcommands = {CertCommand.Issue.class, CertCommand.Revoke.class, CertCommand.Show.class})
public final class CertCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /**
   * {@code --dns NAME... --ip ADDR... --host HOST...}: a console certificate's SANs. A mixin, not
   * an argument group, so a mistake is one plain line rather than picocli's group syntax.
   */
  static final class ConsoleNames {
    @Option(
        names = "--dns",
        paramLabel = "NAME",
        split = ",",
        description =
            "A console (HTTPS) server certificate valid for this DNS name; repeat it (or give"
                + " NAME,NAME) for every name the console is reached by.")
    List<String> dns = new ArrayList<>();

    @Option(
        names = "--ip",
        paramLabel = "ADDR",
        split = ",",
        description =
            "A console certificate valid for this IPv4 or IPv6 address (e.g. 127.0.0.1, ::1);"
                + " repeatable.")
    List<String> ip = new ArrayList<>();

    @Option(
        names = "--host",
        paramLabel = "HOST",
        split = ",",
        description =
            "A DNS name or an IP address, told apart by its form (as --dns or --ip);"
                + " repeatable.")
    List<String> host = new ArrayList<>();

    /** Whether any console name was given. */
    boolean given() {
      return !dns.isEmpty() || !ip.isEmpty() || !host.isEmpty();
    }

    /**
     * Every name checked and normalised, DNS names first, then addresses, each once.
     *
     * @throws KeyExchangeException BAD_NAME naming the option and the bad value
     */
    List<String> checked() {
      List<String> names = new ArrayList<>();
      List<String> addresses = new ArrayList<>();
      for (String h : host) {
        String c = check("--host", h, DeploymentCa::checkHost);
        (DeploymentCa.isIpAddress(c) ? addresses : names).add(c);
      }
      for (String d : dns) {
        names.add(check("--dns", d, DeploymentCa::checkDnsName));
      }
      for (String a : ip) {
        addresses.add(check("--ip", a, DeploymentCa::checkIpAddress));
      }
      List<String> all = new ArrayList<>(new LinkedHashSet<>(names));
      for (String a : new LinkedHashSet<>(addresses)) {
        all.add(a);
      }
      if (all.isEmpty()) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.BAD_NAME, "give at least one --dns, --ip or --host");
      }
      if (all.size() > MAX_NAMES) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.BAD_NAME,
            "at most " + MAX_NAMES + " names and addresses per certificate, got " + all.size());
      }
      return all;
    }

    private static String check(
        String option, String value, java.util.function.UnaryOperator<String> checker) {
      try {
        return checker.apply(value);
      } catch (KeyExchangeException e) {
        String m = e.getMessage();
        String prefix = e.reason() + ": ";
        throw new KeyExchangeException(
            e.reason(), option + ": " + (m.startsWith(prefix) ? m.substring(prefix.length()) : m));
      }
    }
  }

  /** The most SAN entries one console certificate gets: far over any real console's names. */
  static final int MAX_NAMES = 100;

  /**
   * The file name stem of a console certificate: its first DNS name, or its first address with an
   * IPv6 address's colons as '_' ({@code ::1} becomes {@code __1}), so no ':' reaches a path.
   */
  static String fileStem(String firstName) {
    return firstName.replace(':', '_');
  }

  /** {@code srdma cert issue}. */
  @Command(
      name = "issue",
      mixinStandardHelpOptions = true,
      description = {
        "Issue a peer certificate with identity srdma://TENANT/PEER, or a console (HTTPS)"
            + " certificate for every --dns name and --ip address (IPv4 or IPv6) the console is"
            + " reached by, with a fresh P-256 key.",
        "TENANT 'host' makes a region host's certificate (extended key usage serverAuth only;"
            + " tenants pin it with ClientOptions.hostIdentity); any other tenant a tenant peer's"
            + " (clientAuth only). Neither can act in the other's role.",
        "Writes OUT/TENANT.PEER.crt and OUT/TENANT.PEER.key (owner-only), for a console"
            + " OUT/NAME.crt and OUT/NAME.key after its first DNS name (else its first address,"
            + " ':' written '_'); never overwrites.",
        "Example: srdma cert issue --ca ca --dns console.example.org --dns localhost"
            + " --ip 127.0.0.1 --ip ::1 --out certs"
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {"0:issued", "1:failed (no CA, file exists...)", "2:bad arguments"})
  static final class Issue implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--ca", required = true, paramLabel = "DIR", description = "CA directory.")
    Path ca;

    @Option(
        names = "--tenant",
        paramLabel = "TENANT",
        description = "A peer certificate: tenant name, 1-63 of a-z, 0-9, '-' (with --peer).")
    String tenant;

    @Option(
        names = "--peer",
        paramLabel = "PEER",
        description = "A peer certificate: peer name within the tenant, 1-63 of a-z, 0-9, '-'.")
    String peer;

    @CommandLine.Mixin ConsoleNames console = new ConsoleNames();

    @Option(
        names = "--days",
        defaultValue = "90",
        paramLabel = "N",
        description =
            "Validity in days (default ${DEFAULT-VALUE}), 1 to 3650 and never past the CA's own"
                + " end: a certificate that would outlive its CA is refused, naming both dates"
                + " (peers refuse every certificate once the CA has ended).")
    int days;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "Output directory.")
    Path out;

    @Option(
        names = "--ca-passphrase-file",
        paramLabel = "FILE",
        description = "The passphrase of ca.key, first line of FILE.")
    Path caPassphraseFile;

    @Option(
        names = "--key-passphrase-file",
        paramLabel = "FILE",
        description = "Encrypt the new private key (PKCS#8) with the first line of FILE.")
    Path keyPassphraseFile;

    @Override
    public Integer call() {
      return KeyCommands.run(
          spec,
          () -> {
            if (days < 1 || days > 3650) {
              throw new KeyExchangeException(
                  KeyExchangeException.Reason.BAD_ARGUMENT, "--days must be 1 to 3650");
            }
            // validate names before touching the CA or the file system
            boolean peerWanted = tenant != null || peer != null;
            boolean consoleWanted = console.given();
            if (peerWanted == consoleWanted) {
              throw new KeyExchangeException(
                  KeyExchangeException.Reason.BAD_ARGUMENT,
                  (peerWanted ? "give either" : "say who the certificate is for:")
                      + " --tenant T --peer P (a peer or host certificate) or --dns NAME / --ip"
                      + " ADDR (a console certificate)"
                      + (peerWanted ? ", not both" : ""));
            }
            if (peerWanted && (tenant == null || peer == null)) {
              throw new KeyExchangeException(
                  KeyExchangeException.Reason.BAD_ARGUMENT,
                  (tenant == null ? "--peer needs --tenant" : "--tenant needs --peer"));
            }
            PeerIdentity identity = peerWanted ? PeerIdentity.of(tenant, peer) : null;
            List<String> hosts = identity == null ? console.checked() : null;
            String base =
                identity == null
                    ? fileStem(hosts.get(0))
                    : identity.tenant() + "." + identity.peer();
            char[] caPass = KeyCommands.readPassphrase(caPassphraseFile);
            char[] keyPass = KeyCommands.readPassphrase(keyPassphraseFile);
            try {
              DeploymentCa authority = DeploymentCa.open(ca, caPass);
              Duration validity = Duration.ofDays(days);
              // before the output directory is made: a refused certificate leaves nothing behind
              authority.checkIssuable(validity);
              Path crt = out.resolve(base + ".crt");
              Path key = out.resolve(base + ".key");
              for (Path p : new Path[] {crt, key}) {
                // a dangling link too: checked before the CA records an issuance
                if (Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                  throw new KeyExchangeException(
                      KeyExchangeException.Reason.FILE_EXISTS,
                      p + " already exists; not overwriting it");
                }
              }
              createOutputDirectory(out);
              Credential c =
                  identity == null
                      ? authority.issueServer(hosts, validity)
                      : authority.issuePeer(identity, validity);
              c.writeTo(crt, key, keyPass);
              PrintWriter o = spec.commandLine().getOut();
              X509Certificate cert = c.certificate();
              o.printf(
                  "issued %s, serial %s, valid until %s%n",
                  identity == null
                      ? "console certificate for " + String.join(", ", hosts)
                      : (identity.isHost() ? "host certificate " : "peer certificate ") + identity,
                  cert.getSerialNumber().toString(16),
                  cert.getNotAfter().toInstant());
              o.printf("  %s%n", crt);
              o.printf(
                  "  %s  (owner-only%s)%n", key, keyPass == null ? "" : ", passphrase-encrypted");
              o.flush();
              return 0;
            } finally {
              KeyCommands.wipe(caPass);
              KeyCommands.wipe(keyPass);
            }
          });
    }

    private static void createOutputDirectory(Path dir) {
      try {
        if (!Files.isDirectory(dir)) {
          if (dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.createDirectories(
                dir,
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
          } else {
            Files.createDirectories(dir);
          }
        }
      } catch (IOException e) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.IO_ERROR,
            "cannot create " + dir + ": " + e.getMessage(),
            e);
      }
    }
  }

  /** {@code srdma cert revoke --ca DIR SERIAL|FILE}. */
  @Command(
      name = "revoke",
      mixinStandardHelpOptions = true,
      description = {
        "Revoke a certificate by serial number (hex, as shown by 'cert show') or by its PEM"
            + " file, and publish the new crl.pem. A running host ends the revoked peer's live"
            + " sessions within 1 s; every peer refuses it from its next handshake."
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {
        "0:revoked (or already revoked)",
        "1:failed (no CA, foreign certificate...)",
        "2:bad or unknown serial"
      })
  static final class Revoke implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--ca", required = true, paramLabel = "DIR", description = "CA directory.")
    Path ca;

    @Option(
        names = "--ca-passphrase-file",
        paramLabel = "FILE",
        description = "The passphrase of ca.key, first line of FILE.")
    Path caPassphraseFile;

    @Parameters(paramLabel = "SERIAL|FILE", description = "Serial number in hex, or a PEM file.")
    String target;

    @Option(
        names = "--cluster",
        paramLabel = "CONFIG",
        description =
            "Also publish the new revocation list to the deployment's etcd (a YAML file with its"
                + " 'cluster:' section, docs/cluster.md): every host of the cluster refuses the"
                + " peer within 1 s.")
    Path cluster;

    @Override
    public Integer call() {
      return KeyCommands.run(
          spec,
          () -> {
            char[] caPass = KeyCommands.readPassphrase(caPassphraseFile);
            try {
              DeploymentCa authority = DeploymentCa.open(ca, caPass);
              Path file = Path.of(target);
              boolean newly;
              BigInteger serial;
              if (Files.exists(file) && !Files.isRegularFile(file)) {
                // a pipe or a device is never opened (no endless read); nor taken for a serial
                throw new KeyExchangeException(
                    KeyExchangeException.Reason.BAD_ARGUMENT,
                    file + " is not a regular file (give a serial number or a PEM file)");
              }
              if (Files.isRegularFile(file)) {
                X509Certificate cert = Pem.readCertificate(file);
                serial = cert.getSerialNumber();
                newly = authority.revoke(cert);
              } else {
                serial = DeploymentCa.parseSerial(target);
                newly = authority.revoke(serial);
              }
              spec.commandLine()
                  .getOut()
                  .printf(
                      newly
                          ? "revoked serial %s; published %s%n"
                          : "serial %s was already revoked (%s unchanged)%n",
                      serial.toString(16),
                      ca.resolve(DeploymentCa.CRL));
              spec.commandLine().getOut().flush();
              if (cluster != null) {
                return ClusterPolicyCommands.publishRevocation(
                    cluster,
                    authority.crl(),
                    authority.certificate(),
                    List.of(serial),
                    spec.commandLine().getOut(),
                    spec.commandLine().getErr());
              }
              return 0;
            } finally {
              KeyCommands.wipe(caPass);
            }
          });
    }
  }

  /** {@code srdma cert show FILE}. */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = {
        "Show a certificate: identity, serial, validity, key, usage, fingerprint; with --ca also"
            + " whether this CA issued it and whether it is revoked."
      })
  static final class Show implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--ca",
        paramLabel = "DIR",
        description = "Check against this CA's ca.crt and crl.pem (no key needed).")
    Path ca;

    @Parameters(paramLabel = "FILE", description = "A PEM certificate.")
    Path file;

    @Override
    public Integer call() {
      return KeyCommands.run(
          spec,
          () -> {
            X509Certificate cert = Pem.readCertificate(file);
            PrintWriter o = spec.commandLine().getOut();
            o.printf("file:      %s%n", file);
            o.printf("subject:   %s%n", cert.getSubjectX500Principal().getName());
            o.printf("identity:  %s%n", identity(cert));
            o.printf("serial:    %s%n", cert.getSerialNumber().toString(16));
            o.printf("issuer:    %s%n", cert.getIssuerX500Principal().getName());
            o.printf("not before %s%n", cert.getNotBefore().toInstant());
            o.printf("not after  %s%n", cert.getNotAfter().toInstant());
            o.printf("key:       %s%n", key(cert));
            o.printf("usage:     %s%n", usage(cert));
            o.printf(
                "sha256:    %s%n",
                HexFormat.ofDelimiter(":").withUpperCase().formatHex(KeyCommands.sha256(cert)));
            o.printf("status:    %s%n", status(cert));
            o.flush();
            return 0;
          });
    }

    private String status(X509Certificate cert) {
      List<String> notes = new ArrayList<>();
      Instant now = Instant.now();
      if (now.isBefore(cert.getNotBefore().toInstant())) {
        notes.add("not yet valid");
      } else if (now.isAfter(cert.getNotAfter().toInstant())) {
        notes.add("expired");
      }
      if (ca != null) {
        X509Certificate caCert = Pem.readCertificate(ca.resolve(DeploymentCa.CA_CERTIFICATE));
        try {
          cert.verify(caCert.getPublicKey());
        } catch (GeneralSecurityException e) {
          notes.add("NOT issued by the CA in " + ca);
          return String.join(", ", notes);
        }
        X509CRL crl = Pem.readCrl(ca.resolve(DeploymentCa.CRL));
        if (crl.isRevoked(cert)) {
          notes.add("revoked");
        }
      }
      if (notes.isEmpty()) {
        return ca == null ? "within its validity (pass --ca DIR to check revocation)" : "valid";
      }
      return String.join(", ", notes);
    }

    private static String identity(X509Certificate cert) {
      try {
        return PeerIdentity.fromCertificate(cert).toUri();
      } catch (KeyExchangeException e) {
        try {
          List<String> names = new ArrayList<>();
          if (cert.getSubjectAlternativeNames() != null) {
            for (List<?> n : cert.getSubjectAlternativeNames()) {
              names.add(altName(n));
            }
          }
          return names.isEmpty() ? "(none)" : "(no peer identity) host " + String.join(", ", names);
        } catch (CertificateParsingException p) {
          return "(unreadable)";
        }
      }
    }

    /** {@code DNS:name}, {@code IP:::1} (RFC 5952 form), or the JDK's text for other types. */
    private static String altName(List<?> entry) {
      String value = String.valueOf(entry.get(1));
      Object type = entry.get(0);
      if (Integer.valueOf(2).equals(type)) {
        return "DNS:" + value;
      }
      if (Integer.valueOf(7).equals(type)) {
        try {
          return "IP:" + DeploymentCa.checkHost(value);
        } catch (KeyExchangeException e) {
          return "IP:" + value;
        }
      }
      return value;
    }

    private static String key(X509Certificate cert) {
      if (cert.getPublicKey() instanceof ECPublicKey) {
        int bits = ((ECPublicKey) cert.getPublicKey()).getParams().getOrder().bitLength();
        return "EC " + (bits == 256 ? "P-256" : bits + " bits") + ", " + cert.getSigAlgName();
      }
      return cert.getPublicKey().getAlgorithm() + ", " + cert.getSigAlgName();
    }

    private static String usage(X509Certificate cert) {
      List<String> u = new ArrayList<>();
      if (cert.getBasicConstraints() >= 0) {
        u.add("CA");
      }
      boolean[] ku = cert.getKeyUsage();
      String[] kuNames = {
        "digitalSignature",
        "nonRepudiation",
        "keyEncipherment",
        "dataEncipherment",
        "keyAgreement",
        "keyCertSign",
        "cRLSign",
        "encipherOnly",
        "decipherOnly"
      };
      if (ku != null) {
        for (int i = 0; i < ku.length && i < kuNames.length; i++) {
          if (ku[i]) {
            u.add(kuNames[i]);
          }
        }
      }
      try {
        List<String> eku = cert.getExtendedKeyUsage();
        if (eku != null) {
          for (String oid : eku) {
            u.add(
                "1.3.6.1.5.5.7.3.1".equals(oid)
                    ? "serverAuth"
                    : "1.3.6.1.5.5.7.3.2".equals(oid) ? "clientAuth" : oid);
          }
        }
      } catch (CertificateParsingException e) {
        u.add("(unreadable extended key usage)");
      }
      return String.join(", ", u);
    }
  }
}
