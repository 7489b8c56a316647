package io.srdma.cluster;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.etcd.jetcd.ByteSequence;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Pem;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A real 3-member etcd cluster for tests, on free loopback ports, in a temporary directory: client
 * traffic over mutual TLS with certificates from a fresh deployment CA (server certificate for
 * 127.0.0.1 and localhost; client certificates issued by {@link #clientConfig}), peer traffic over
 * mutual TLS too ({@code --peer-client-cert-auth}, one member certificate with serverAuth and
 * clientAuth signed by the same CA, {@link #peerCertificate}). Members are separate {@code etcd}
 * processes that can be stopped and started again on their data directories. Ports are picked free,
 * which races with other processes: a first start whose member cannot bind its port is retried on
 * fresh ports ({@value #START_ATTEMPTS} attempts in all). Skips (JUnit assumption) naming Debian's
 * {@code etcd-server} when the binary is missing.
 */
public final class EtcdTestCluster implements AutoCloseable {
  /** Members of the cluster. */
  public static final int MEMBERS = 3;

  private static final Duration START_LIMIT = Duration.ofSeconds(30);

  /** First starts tried, each on fresh ports, when a member finds its port taken. */
  static final int START_ATTEMPTS = 4;

  /** The CN of the rig's own client certificate: etcd's root user once auth is enabled. */
  public static final String ROOT = "root";

  /**
   * With {@code -Dsrdma.cluster.rbac=true} every rig runs with etcd auth on and {@link
   * ClusterRbac}'s roles: {@link #clientConfig} gives a host a certificate with CN = its name and
   * the host role of the prefix, a console/CLI (no host) the operators' CN {@value #OPERATOR} and
   * role.
   */
  public static final boolean RBAC = Boolean.getBoolean("srdma.cluster.rbac");

  /** The operators' CN in {@link #RBAC} mode. */
  public static final String OPERATOR = "operator";

  private final Path dir;
  private final Path etcd;
  private final DeploymentCa ca;
  private final char[] caPass = "test-ca-passphrase".toCharArray();
  private final int[] clientPorts = new int[MEMBERS];
  private final int[] peerPorts = new int[MEMBERS];
  private final Process[] processes = new Process[MEMBERS];
  private final Path serverCert;
  private final Path serverKey;
  private final Path peerCert;
  private final Path peerKey;
  private int clients;
  private int attempts;
  private final java.util.Map<String, EtcdLink> rootLinks = new java.util.HashMap<>();

  private EtcdTestCluster(Path dir, Path etcd) throws IOException {
    this.dir = dir;
    this.etcd = etcd;
    this.ca = DeploymentCa.init(dir.resolve("ca"), caPass);
    Credential server = ca.issueServer(List.of("localhost", "127.0.0.1"), Duration.ofDays(1));
    serverCert = dir.resolve("etcd-server.crt");
    serverKey = dir.resolve("etcd-server.key");
    server.writeTo(serverCert, serverKey, null); // the key 600, as srdma cert issue writes it
    Credential peer = peerCertificate(dir.resolve("ca"), caPass);
    peerCert = dir.resolve("etcd-peer.crt");
    peerKey = dir.resolve("etcd-peer.key");
    peer.writeTo(peerCert, peerKey, null);
    pickPorts();
  }

  private void pickPorts() throws IOException {
    int[] ports = distinctFreePorts(2 * MEMBERS);
    for (int i = 0; i < MEMBERS; i++) {
      clientPorts[i] = ports[2 * i];
      peerPorts[i] = ports[2 * i + 1];
    }
  }

  /**
   * {@code n} distinct free loopback ports: every probe socket stays bound until all are picked, so
   * the kernel cannot hand one ephemeral port out twice (it did: m0 and m2 once got the same peer
   * port, and etcd refused the "duplicate url").
   */
  static int[] distinctFreePorts(int n) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    try {
      int[] ports = new int[n];
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        held.add(s);
        ports[i] = s.getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
  }

  /**
   * A member certificate for etcd's peer TLS: both serverAuth and clientAuth (each member dials the
   * others and is dialled), for 127.0.0.1 and localhost, signed by the CA in {@code caDir}. The
   * deployment CA's own profiles are single-purpose, so the rig builds it here.
   */
  static Credential peerCertificate(Path caDir, char[] caPass) {
    try {
      X509Certificate caCert = Pem.readCertificate(caDir.resolve(DeploymentCa.CA_CERTIFICATE));
      PrivateKey caKey = Pem.readPrivateKey(caDir.resolve(DeploymentCa.CA_KEY), caPass);
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      KeyPair keys = g.generateKeyPair();
      Instant now = Instant.now();
      X509v3CertificateBuilder b =
          new JcaX509v3CertificateBuilder(
                  caCert,
                  BigInteger.valueOf(now.toEpochMilli()),
                  Date.from(now.minusSeconds(60)),
                  Date.from(now.plus(Duration.ofDays(1))),
                  new X500Name("CN=etcd-member"),
                  keys.getPublic())
              .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
              .addExtension(
                  Extension.keyUsage,
                  true,
                  new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment))
              .addExtension(
                  Extension.extendedKeyUsage,
                  false,
                  new ExtendedKeyUsage(
                      new KeyPurposeId[] {
                        KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth
                      }))
              .addExtension(
                  Extension.subjectAlternativeName,
                  false,
                  new GeneralNames(
                      new GeneralName[] {
                        new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                        new GeneralName(GeneralName.dNSName, "localhost")
                      }));
      ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(caKey);
      X509Certificate cert = new JcaX509CertificateConverter().getCertificate(b.build(signer));
      return Credential.of(cert, keys.getPrivate());
    } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
      throw new IllegalStateException("cannot build the etcd member certificate", e);
    }
  }

  /** The etcd binary, or a skipped test naming the package. */
  public static Path binary() {
    for (String d : (System.getenv().getOrDefault("PATH", "") + ":/usr/bin:/usr/sbin").split(":")) {
      if (!d.isEmpty()) {
        Path p = Path.of(d, "etcd");
        if (Files.isExecutable(p)) {
          return p;
        }
      }
    }
    assumeTrue(
        false,
        "etcd not found: install Debian's etcd-server package (apt-get install etcd-server);"
            + " .ci/run does");
    return null;
  }

  /**
   * Starts all three members and waits until the cluster answers. A member that exits because its
   * port was taken meanwhile (another process won the race for a "free" port) has the whole first
   * start retried on fresh ports, at most {@value #START_ATTEMPTS} times.
   */
  public static EtcdTestCluster start(Path dir) throws IOException {
    return start(dir, -1);
  }

  /** As {@link #start(Path)}, the first attempt giving member m0 {@code clientPort} (if > 0). */
  static EtcdTestCluster start(Path dir, int clientPort) throws IOException {
    EtcdTestCluster c = new EtcdTestCluster(dir, binary());
    if (clientPort > 0) {
      c.clientPorts[0] = clientPort;
    }
    try {
      for (int attempt = 1; ; attempt++) {
        c.attempts = attempt;
        try {
          for (int i = 0; i < MEMBERS; i++) {
            c.startMember(i);
          }
          c.awaitHealthy(START_LIMIT);
          c.checkAllAlive();
          if (RBAC) {
            ClusterRbac.apply(c.rootLink("/srdma/probe"), OPERATOR, List.of(), true);
          }
          return c;
        } catch (PortTaken e) {
          if (attempt >= START_ATTEMPTS) {
            throw new IllegalStateException(
                "etcd could not start: a port was taken by another process in each of "
                    + START_ATTEMPTS
                    + " attempts on fresh ports; last: "
                    + e.getMessage(),
                e);
          }
          c.close();
          c.resetForRetry();
          c.pickPorts();
        }
      }
    } catch (RuntimeException | IOException e) {
      c.close();
      throw e;
    }
  }

  /** A member exited because its port was in use. */
  static final class PortTaken extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    PortTaken(String message) {
      super(message);
    }
  }

  private void resetForRetry() throws IOException {
    for (int i = 0; i < MEMBERS; i++) {
      Path data = dir.resolve("m" + i);
      if (Files.isDirectory(data)) {
        try (var walk = Files.walk(data)) {
          for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
            Files.delete(p);
          }
        }
      }
      Path log = dir.resolve("m" + i + ".log");
      if (Files.exists(log)) {
        Files.move(
            log,
            dir.resolve("m" + i + ".log.failed-" + System.nanoTime()),
            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      }
    }
  }

  private void checkAllAlive() {
    for (int i = 0; i < MEMBERS; i++) {
      if (processes[i] != null && !processes[i].isAlive()) {
        throw exited(i);
      }
    }
  }

  private IllegalStateException exited(int i) {
    String log = tail(dir.resolve("m" + i + ".log"));
    String what =
        "etcd member m"
            + i
            + " (client port "
            + clientPorts[i]
            + ", peer port "
            + peerPorts[i]
            + ") exited: "
            + log;
    return log.contains("address already in use")
        ? new PortTaken(what)
        : new IllegalStateException(what);
  }

  /** The passphrase of the CA's key (for {@code srdma cert revoke --ca-passphrase-file}). */
  public char[] caPassphrase() {
    return caPass.clone();
  }

  /** The deployment CA that issued etcd's and the clients' certificates. */
  public DeploymentCa ca() {
    return ca;
  }

  /** How many first starts it took (more than 1 when a port was taken). */
  int attempts() {
    return attempts;
  }

  /** The peer port of member {@code i}. */
  int peerPort(int i) {
    return peerPorts[i];
  }

  /** The client URL of every member. */
  public List<URI> endpoints() {
    List<URI> out = new ArrayList<>();
    for (int p : clientPorts) {
      out.add(URI.create("https://127.0.0.1:" + p));
    }
    return out;
  }

  /**
   * A configuration with a fresh client certificate ({@code srdma://cluster/NAME}, clientAuth).
   *
   * @param prefix the deployment prefix
   * @param host the host name, or null for a console/CLI
   */
  public ClusterConfig clientConfig(String prefix, String host) {
    return clientConfig(prefix, host, endpoints());
  }

  /** As {@link #clientConfig(String, String)}, reaching only the given members' endpoints. */
  public ClusterConfig clientConfig(String prefix, String host, List<URI> endpoints) {
    if (RBAC) {
      ClusterRbac.apply(
          rootLink(prefix),
          OPERATOR,
          host == null ? List.of() : List.of(new ClusterRbac.HostUser(host, host)),
          false);
      return clientConfigAs(host == null ? OPERATOR : host, prefix, host, endpoints);
    }
    return clientConfigAs("c" + (clients + 1), prefix, host, endpoints);
  }

  /** A client as etcd's root user for a prefix (kept open until {@link #close}). */
  synchronized EtcdLink rootLink(String prefix) {
    return rootLinks.computeIfAbsent(
        prefix, p -> EtcdLink.open(clientConfigAs(ROOT, p, null, endpoints())));
  }

  /**
   * As {@link #clientConfig(String, String)}, with a certificate whose CN (the etcd user once auth
   * is enabled) is {@code cn}.
   */
  public ClusterConfig clientConfigAs(String cn, String prefix, String host) {
    return clientConfigAs(cn, prefix, host, endpoints());
  }

  private ClusterConfig clientConfigAs(String cn, String prefix, String host, List<URI> endpoints) {
    String name = "c" + (++clients);
    Credential cred = ca.issuePeer(PeerIdentity.of("cluster", cn), Duration.ofDays(1));
    Path cert = dir.resolve(name + ".crt");
    Path key = dir.resolve(name + ".key");
    cred.writeTo(cert, key, null); // the key 600: a looser one is refused (Pem.readPrivateKey)
    return ClusterConfig.builder()
        .endpoints(endpoints)
        .caCertificate(ca.directory().resolve(DeploymentCa.CA_CERTIFICATE))
        .certificate(cert)
        .key(key)
        .prefix(prefix)
        .host(host)
        .serverName("localhost")
        .requestTimeout(Duration.ofSeconds(2))
        .build();
  }

  /** Starts member {@code i} (again, on its data directory if it ran before). */
  public void startMember(int i) throws IOException {
    if (processes[i] != null && processes[i].isAlive()) {
      return;
    }
    Path data = dir.resolve("m" + i);
    boolean existing = Files.isDirectory(data);
    StringBuilder initial = new StringBuilder();
    for (int j = 0; j < MEMBERS; j++) {
      initial.append(j == 0 ? "" : ",").append("m").append(j).append("=").append(peerUrl(j));
    }
    List<String> cmd =
        List.of(
            etcd.toString(),
            "--name",
            "m" + i,
            "--data-dir",
            data.toString(),
            "--listen-client-urls",
            "https://127.0.0.1:" + clientPorts[i],
            "--advertise-client-urls",
            "https://127.0.0.1:" + clientPorts[i],
            "--listen-peer-urls",
            peerUrl(i),
            "--initial-advertise-peer-urls",
            peerUrl(i),
            "--initial-cluster",
            initial.toString(),
            "--initial-cluster-state",
            existing ? "existing" : "new",
            "--initial-cluster-token",
            "srdma-test",
            "--cert-file",
            serverCert.toString(),
            "--key-file",
            serverKey.toString(),
            "--trusted-ca-file",
            ca.directory().resolve(DeploymentCa.CA_CERTIFICATE).toString(),
            "--client-cert-auth",
            "--peer-cert-file",
            peerCert.toString(),
            "--peer-key-file",
            peerKey.toString(),
            "--peer-trusted-ca-file",
            ca.directory().resolve(DeploymentCa.CA_CERTIFICATE).toString(),
            "--peer-client-cert-auth",
            "--heartbeat-interval",
            "50",
            "--election-timeout",
            "500",
            "--logger",
            "zap");
    Path log = dir.resolve("m" + i + ".log");
    processes[i] =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
  }

  /** Stops member {@code i} (SIGKILL: as a crash), waiting until it is gone. */
  public void stopMember(int i) {
    Process p = processes[i];
    if (p == null) {
      return;
    }
    p.destroyForcibly();
    try {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("etcd member m" + i + " did not stop");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    processes[i] = null;
  }

  /** The resident memory of member {@code i} in KiB (Linux /proc), or -1. */
  public long memberRssKib(int i) {
    Process p = processes[i];
    if (p == null) {
      return -1;
    }
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }

  /** Stops every member. */
  public void stopAll() {
    for (int i = 0; i < MEMBERS; i++) {
      stopMember(i);
    }
  }

  /** Starts every stopped member and waits until the cluster answers. */
  public void startAll() throws IOException {
    for (int i = 0; i < MEMBERS; i++) {
      startMember(i);
    }
    awaitHealthy(START_LIMIT);
  }

  /**
   * Waits until a read through a fresh client succeeds (a quorum is up). The client is etcd's
   * {@value #ROOT} user, so this works with auth enabled too.
   */
  public void awaitHealthy(Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    ClusterConfig probe = clientConfigAs(ROOT, "/srdma/probe", null);
    RuntimeException last = null;
    try (EtcdLink link = EtcdLink.open(probe)) {
      while (System.nanoTime() < deadline) {
        checkAllAlive();
        try {
          link.await(
              link.client().getKVClient().get(ByteSequence.from("/probe", StandardCharsets.UTF_8)),
              "probe");
          return;
        } catch (ClusterException e) {
          last = e;
        }
      }
    }
    throw new IllegalStateException(
        "etcd did not become healthy within " + limit + ": " + tail(dir.resolve("m0.log")), last);
  }

  private String peerUrl(int i) {
    return "https://127.0.0.1:" + peerPorts[i];
  }

  private static String tail(Path log) {
    try {
      String s = Files.readString(log, StandardCharsets.UTF_8);
      return s.substring(Math.max(0, s.length() - 2000));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      rootLinks.values().forEach(EtcdLink::close);
      rootLinks.clear();
    }
    for (int i = 0; i < MEMBERS; i++) {
      Process p = processes[i];
      if (p != null) {
        p.destroyForcibly();
      }
    }
    for (int i = 0; i < MEMBERS; i++) {
      Process p = processes[i];
      if (p != null) {
        try {
          p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        processes[i] = null;
      }
    }
  }
}
