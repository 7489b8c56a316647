package io.srdma.server;

import io.srdma.channel.ClientOptions;
import io.srdma.console.ConsoleConfig;
import io.srdma.console.ConsoleServer;
import io.srdma.console.HostConsoleBackend;
import io.srdma.host.HostOptions;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.RevocationList;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditLogOptions;
import io.srdma.policy.AuditSigner;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.ConsoleUsers;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A whole deployment on one machine for {@code srdma demo}: a dev CA and certificates under a
 * directory, the sample policy (tenants acme and globex) with freshly generated console passwords,
 * a signed audit log, a host on loopback and, if asked, the admin console with a certificate of the
 * dev CA. Nothing here is for production: the CA key lies unprotected in the directory.
 *
 * <p>Three steps, so that a caller can report each: {@link #create} (CA, certificates, policy),
 * {@link #startHost}, {@link #startConsole}; {@link #close} closes in reverse.
 *
 * <p>Thread safety: set up and closed by one thread; {@link #credential} and {@link #clientOptions}
 * may be called from any thread once the host runs.
 *
 * <p>Buffers: none pass through this class.
 */
public final class DevDeployment implements AutoCloseable {
  /** The host's peer name under the host tenant. */
  public static final String HOST_NAME = "demo-host";

  private final Path directory;
  private final DeploymentCa ca;
  private final Credential hostCredential;
  private final char[] adminPassword;
  private final char[] auditorPassword;
  private final String policyText;
  private final Policy policy;
  private final RevocationList crl;
  private final Map<String, Credential> issued = new HashMap<>();
  private AuditLog auditLog;
  private RegionHost host;
  private ConsoleServer console;

  private DevDeployment(Path directory) throws IOException {
    this.directory = directory;
    this.ca = DeploymentCa.init(directory.resolve("ca"), null);
    this.hostCredential = issue(RegionHost.HOST_TENANT, HOST_NAME);
    this.adminPassword = password();
    this.auditorPassword = password();
    this.policyText = demoPolicy(adminPassword, auditorPassword);
    // holds the console users' password hashes: owner-only whatever the umask
    Files.writeString(
        Files.createFile(
            directory.resolve("policy.yaml"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))),
        policyText);
    this.policy = new PolicyLoader().parse(directory.resolve("policy.yaml").toString(), policyText);
    // the host watches the CA's crl.pem; the caller keeps the list (the demo shows a rolled-back
    // CRL refused)
    this.crl = RevocationList.watching(ca.directory().resolve(DeploymentCa.CRL), ca.certificate());
  }

  /**
   * Creates the dev CA, the host's certificate and the policy (policy.yaml, owner-only) under
   * {@code directory}, which must exist and be empty.
   */
  public static DevDeployment create(Path directory) throws IOException {
    return new DevDeployment(directory);
  }

  /**
   * Opens the audit log (audit.jsonl, checkpoints signed by the host key) and starts the host on
   * loopback.
   */
  public RegionHost startHost(String provider, int maxSessionsPerTenant) {
    auditLog =
        AuditLog.open(
            new AuditLogOptions(directory.resolve("audit.jsonl"))
                .signer(AuditSigner.of(hostCredential.certificate(), hostCredential.privateKey())));
    host =
        RegionHost.start(
            new HostOptions()
                .credential(hostCredential)
                .trust(DeploymentTrust.of(ca.certificate(), crl))
                .policy(policy)
                .audit(new AuditTrail(auditLog))
                .maxSessionsPerTenant(maxSessionsPerTenant)
                .provider(provider));
    return host;
  }

  /**
   * Starts the admin console on 127.0.0.1 ({@code port} 0: any free port) over the running host,
   * with a one-day certificate of the dev CA.
   */
  public ConsoleServer startConsole(int port) {
    console =
        ConsoleServer.start(
            new ConsoleConfig()
                .host("127.0.0.1")
                .port(port)
                .tls(
                    ca.issueServer(List.of("localhost", "127.0.0.1"), Duration.ofDays(1)),
                    List.of(ca.certificate())),
            new HostConsoleBackend(host, policyText, auditLog.file()),
            new ConsoleUsers(host::policy),
            new AuditTrail(auditLog));
    return console;
  }

  /** The directory everything is under. */
  public Path directory() {
    return directory;
  }

  /** The dev CA. */
  public DeploymentCa ca() {
    return ca;
  }

  /** The host's identity, {@code srdma://<host tenant>/demo-host}. */
  public PeerIdentity hostIdentity() {
    return PeerIdentity.of(RegionHost.HOST_TENANT, HOST_NAME);
  }

  /** The CA's revocation list the host checks. */
  public RevocationList crl() {
    return crl;
  }

  /** The audit log once the host started, else null. */
  public AuditLog auditLog() {
    return auditLog;
  }

  /** The host once started, else null. */
  public RegionHost host() {
    return host;
  }

  /** The console's generated password of user admin (shown once to the person running it). */
  public String adminPassword() {
    return new String(adminPassword);
  }

  /** The console's generated password of user auditor. */
  public String auditorPassword() {
    return new String(auditorPassword);
  }

  /**
   * A one-day certificate of the dev CA for {@code tenant/peer}, written beside the others as
   * {@code tenant.peer.crt} and {@code .key}; the same one for the same peer.
   */
  public synchronized Credential credential(String tenant, String peer) {
    return issued.computeIfAbsent(tenant + "/" + peer, k -> issue(tenant, peer));
  }

  /** Options for a client of {@code who}, pinned to the dev host. */
  public ClientOptions clientOptions(Credential who, String provider) {
    return new ClientOptions()
        .credential(who)
        .trust(ca.trust())
        .host(host.address())
        .hostIdentity(hostIdentity())
        .provider(provider);
  }

  /** Closes the console, the host and the audit log, in that order. */
  @Override
  public void close() {
    try {
      if (console != null) {
        console.close();
      }
    } finally {
      try {
        if (host != null) {
          host.close();
        }
      } finally {
        if (auditLog != null) {
          auditLog.close();
        }
      }
    }
  }

  private Credential issue(String tenant, String peer) {
    Credential c = ca.issuePeer(PeerIdentity.of(tenant, peer), Duration.ofDays(1));
    c.writeTo(
        directory.resolve(tenant + "." + peer + ".crt"),
        directory.resolve(tenant + "." + peer + ".key"),
        null);
    return c;
  }

  /** 18 random characters a person can type: letters and digits without look-alikes. */
  private static char[] password() {
    String alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    SecureRandom r = new SecureRandom();
    char[] p = new char[18];
    for (int i = 0; i < p.length; i++) {
      p[i] = alphabet.charAt(r.nextInt(alphabet.length()));
    }
    return p;
  }

  /**
   * The sample policy with freshly generated console passwords (bcrypt) instead of the demo ones.
   */
  private static String demoPolicy(char[] admin, char[] auditor) throws IOException {
    String text;
    try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    String[] lines = text.split("\n", -1);
    String user = null;
    StringBuilder b = new StringBuilder();
    for (String line : lines) {
      String t = line.trim();
      if (t.equals("admin:") || t.equals("auditor:")) {
        user = t.substring(0, t.length() - 1);
      }
      if (t.startsWith("password-hash:") && user != null) {
        // hashPassword wipes the array it is given
        String hash =
            ConsoleUsers.hashPassword(("admin".equals(user) ? admin : auditor).clone(), true);
        line =
            line.substring(0, line.indexOf("password-hash:")) + "password-hash: \"" + hash + "\"";
        user = null;
      }
      b.append(line).append('\n');
    }
    b.setLength(b.length() - 1);
    return b.toString()
        .replace(
            "These two are for the demo only (passwords admin-demo / auditor-demo): replace them.",
            "Generated by srdma demo for this run (printed once at start).");
  }
}
