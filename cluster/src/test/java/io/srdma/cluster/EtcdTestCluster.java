package io.srdma.cluster;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.etcd.jetcd.ByteSequence;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Pem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real 3-member etcd cluster for tests, on free loopback ports, in a temporary directory: client
 * traffic over mutual TLS with certificates from a fresh deployment CA (server certificate for
 * 127.0.0.1 and localhost; client certificates issued by {@link #clientConfig}), peer traffic in
 * plain HTTP on loopback (test-only: a real deployment runs etcd's peer TLS as etcd documents).
 * Members are separate {@code etcd} processes that can be stopped and started again on their data
 * directories. Skips (JUnit assumption) naming Debian's {@code etcd-server} when the binary is
 * missing.
 */
public final class EtcdTestCluster implements AutoCloseable {
  /** Members of the cluster. */
  public static final int MEMBERS = 3;

  private static final Duration START_LIMIT = Duration.ofSeconds(30);

  private final Path dir;
  private final Path etcd;
  private final DeploymentCa ca;
  private final char[] caPass = "test-ca-passphrase".toCharArray();
  private final int[] clientPorts = new int[MEMBERS];
  private final int[] peerPorts = new int[MEMBERS];
  private final Process[] processes = new Process[MEMBERS];
  private final Path serverCert;
  private final Path serverKey;
  private int clients;

  private EtcdTestCluster(Path dir, Path etcd) throws IOException {
    this.dir = dir;
    this.etcd = etcd;
    this.ca = DeploymentCa.init(dir.resolve("ca"), caPass);
    Credential server = ca.issueServer(List.of("localhost", "127.0.0.1"), Duration.ofDays(1));
    serverCert = dir.resolve("etcd-server.crt");
    serverKey = dir.resolve("etcd-server.key");
    Files.writeString(serverCert, Pem.toPem(server.certificate()));
    Files.writeString(serverKey, Pem.toPem(server.privateKey(), null));
    for (int i = 0; i < MEMBERS; i++) {
      clientPorts[i] = freePort();
      peerPorts[i] = freePort();
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

  /** Starts all three members and waits until the cluster answers. */
  public static EtcdTestCluster start(Path dir) throws IOException {
    EtcdTestCluster c = new EtcdTestCluster(dir, binary());
    try {
      for (int i = 0; i < MEMBERS; i++) {
        c.startMember(i);
      }
      c.awaitHealthy(START_LIMIT);
      return c;
    } catch (RuntimeException | IOException e) {
      c.close();
      throw e;
    }
  }

  /** The passphrase of the CA's key (for {@code srdma cert revoke --ca-passphrase-file}). */
  public char[] caPassphrase() {
    return caPass.clone();
  }

  /** The deployment CA that issued etcd's and the clients' certificates. */
  public DeploymentCa ca() {
    return ca;
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
    String name = "c" + (++clients);
    Credential cred = ca.issuePeer(PeerIdentity.of("cluster", name), Duration.ofDays(1));
    Path cert = dir.resolve(name + ".crt");
    Path key = dir.resolve(name + ".key");
    try {
      Files.writeString(cert, Pem.toPem(cred.certificate()));
      Files.writeString(key, Pem.toPem(cred.privateKey(), null));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
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

  /** Waits until a read through a fresh client succeeds (a quorum is up). */
  public void awaitHealthy(Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    ClusterConfig probe = clientConfig("/srdma/probe", null);
    RuntimeException last = null;
    try (EtcdLink link = EtcdLink.open(probe)) {
      while (System.nanoTime() < deadline) {
        for (int i = 0; i < MEMBERS; i++) {
          if (processes[i] != null && !processes[i].isAlive()) {
            throw new IllegalStateException(
                "etcd member m" + i + " exited: " + tail(dir.resolve("m" + i + ".log")));
          }
        }
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
    return "http://127.0.0.1:" + peerPorts[i];
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
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
