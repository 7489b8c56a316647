package io.srdma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.cluster.ClusterConfig;
import io.srdma.cluster.EtcdLink;
import io.srdma.cluster.EtcdTestCluster;
import io.srdma.cluster.PolicyPublisher;
import io.srdma.cluster.RevocationPublisher;
import io.srdma.host.GrantInfo;
import io.srdma.host.RegionHost;
import io.srdma.host.SessionInfo;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 19's fleet test with real hosts: three {@code srdma serve} processes' worth of {@link
 * ServeCommand} (each a {@link RegionHost} joined to a real 3-member etcd through its {@code
 * cluster:} section), each with a live session and WRITE grant of the same tenant peer. A policy
 * pushed as {@code srdma policy push} does is in force on all three within 1 s; the peer's
 * certificate revoked as {@code srdma cert revoke --cluster} publishes it ends its session on every
 * host within 1 s (seen on the hosts' session lists), and each host then refuses the peer's new
 * handshake while still admitting another peer of the tenant.
 */
@Timeout(240)
class ServeClusterThreeHostsTest {
  private static final String PREFIX = "/srdma/fleet";
  private static final int HOSTS = 3;
  private static final Duration WITHIN = Duration.ofSeconds(1);
  private static final String TRAINER = "acme/trainer-1";

  @TempDir Path dir;

  /** One {@code srdma serve} running in this JVM. */
  private record Serve(
      String name,
      ServeCommand command,
      CompletableFuture<Integer> exit,
      StringWriter err,
      InetSocketAddress address,
      RegionHost host) {}

  private static String clusterYaml(ClusterConfig c, String host) {
    return "cluster:\n"
        + "  endpoints: ["
        + c.endpoints().stream().map(Object::toString).collect(Collectors.joining(", "))
        + "]\n"
        + "  ca-certificate: "
        + c.caCertificate()
        + "\n  certificate: "
        + c.certificate()
        + "\n  key: "
        + c.key()
        + "\n  prefix: "
        + PREFIX
        + "\n  server-name: localhost\n"
        + "  host: "
        + host
        + "\n";
  }

  private static void await(String what, Duration limit, java.util.function.BooleanSupplier c)
      throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!c.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(what + " did not happen within " + limit);
      }
      Thread.sleep(20);
    }
  }

  /**
   * Polls every host (every 5 ms, at most 10 s) until {@code done} holds on it, and returns each
   * host's time in ms since {@code t0} when it first held.
   */
  private static long[] whenEach(List<Serve> serves, long t0, Predicate<RegionHost> done)
      throws InterruptedException {
    long[] at = new long[serves.size()];
    java.util.Arrays.fill(at, -1);
    long deadline = t0 + TimeUnit.SECONDS.toNanos(10);
    int left = serves.size();
    while (left > 0 && System.nanoTime() < deadline) {
      for (int i = 0; i < serves.size(); i++) {
        if (at[i] < 0 && done.test(serves.get(i).host())) {
          at[i] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
          left--;
        }
      }
      Thread.sleep(5);
    }
    return at;
  }

  private static boolean hasSession(RegionHost host, String identity) {
    return host.sessions().stream().map(SessionInfo::identity).anyMatch(i -> i.endsWith(identity));
  }

  private Serve start(EtcdTestCluster etcd, int i, Path caCert, Path policy) throws Exception {
    String name = "host-" + i;
    Path d = dir.resolve(name);
    Files.createDirectories(d);
    DeploymentCa ca = etcd.ca();
    ca.issuePeer(PeerIdentity.of("host", name), Duration.ofDays(1))
        .writeTo(d.resolve("host.crt"), d.resolve("host.key"), null);
    Files.copy(ca.directory().resolve(DeploymentCa.CRL), d.resolve("host-crl.pem"));
    Path serveYaml = d.resolve("serve.yaml");
    Files.writeString(
        serveYaml,
        "version: 1\nlisten: 127.0.0.1:0\nprovider: soft\n"
            + "tls:\n  certificate: host.crt\n  key: host.key\n"
            + "  ca-certificate: "
            + caCert
            + "\n  crl: host-crl.pem\n"
            + "policy:\n  file: "
            + policy
            + "\naudit:\n  file: audit.log\n"
            + "limits:\n  shutdown-timeout: 15s\n"
            + "regions:\n  - tenant: acme\n    region: kvcache\n    size: 1MiB\n"
            + clusterYaml(etcd.clientConfig(PREFIX, name), name));
    ServeCommand command = new ServeCommand();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = new CommandLine(command);
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    CompletableFuture<Integer> exit = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> exit.complete(cl.execute("--config", serveYaml.toString())), "serve-" + name);
    t.setDaemon(true);
    t.start();
    await(
        "serve " + name + " ready",
        Duration.ofSeconds(30),
        () -> command.address() != null || exit.isDone());
    assertNotNull(command.address(), name + ": " + out + "\n" + err);
    return new Serve(name, command, exit, err, command.address(), command.regionHost());
  }

  private static ClientOptions client(Credential who, DeploymentCa ca, Serve to) {
    return new ClientOptions()
        .credential(who)
        .trust(
            DeploymentTrust.load(
                ca.directory().resolve(DeploymentCa.CA_CERTIFICATE),
                ca.directory().resolve(DeploymentCa.CRL)))
        .host(to.address())
        .hostName(to.name());
  }

  @Test
  void shouldApplyAPushAndEndARevokedPeersSessionsOnAllThreeHostsWithinOneSecond()
      throws Exception {
    try (EtcdTestCluster etcd = EtcdTestCluster.start(dir.resolve("etcd"))) {
      DeploymentCa ca = etcd.ca();
      Path caCert = dir.resolve("ca.crt");
      Files.copy(ca.directory().resolve(DeploymentCa.CA_CERTIFICATE), caCert);
      Credential trainer = ca.issuePeer(PeerIdentity.of("acme", "trainer-1"), Duration.ofDays(1));
      Credential other = ca.issuePeer(PeerIdentity.of("acme", "trainer-2"), Duration.ofDays(1));
      String sample;
      try (InputStream in = PolicyLoader.class.getResourceAsStream(PolicyLoader.SAMPLE_RESOURCE)) {
        sample = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      Path policy = dir.resolve("policy.yaml");
      Files.writeString(policy, sample);

      List<Serve> serves = new ArrayList<>();
      List<SecureRdmaClient> clients = new ArrayList<>();
      try (EtcdLink ops = EtcdLink.open(etcd.clientConfig(PREFIX, null))) {
        for (int i = 1; i <= HOSTS; i++) {
          serves.add(start(etcd, i, caCert, policy));
        }
        // the same peer, a live session and a WRITE grant on each host
        AtomicLong[] lost = new AtomicLong[HOSTS];
        for (int i = 0; i < HOSTS; i++) {
          SecureRdmaClient c = SecureRdmaClient.connect(client(trainer, ca, serves.get(i)));
          clients.add(c);
          AtomicLong l = new AtomicLong(-1);
          lost[i] = l;
          c.onSessionLost(e -> l.compareAndSet(-1, System.nanoTime()));
          c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 64 * 1024, Duration.ofMinutes(5));
        }
        for (Serve s : serves) {
          assertTrue(hasSession(s.host(), TRAINER), s.name() + ": " + s.host().sessions());
          assertEquals(1, s.host().grants().size(), s.name() + ": " + s.host().grants());
        }

        // a pushed policy (as `srdma policy push`): in force on all three within 1 s
        String pushedText = sample.replace("max-ttl: 15m", "max-ttl: 14m");
        assertTrue(!pushedText.equals(sample), "the sample policy changed: fix the edit");
        long t0 = System.nanoTime();
        PolicyPublisher.Pushed pushed =
            PolicyPublisher.push(
                ops,
                "pushed.yaml",
                pushedText.getBytes(StandardCharsets.UTF_8),
                new PolicyLoader(),
                OptionalLong.empty(),
                ca);
        long pushMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(pushed.changed());
        long[] applied = whenEach(serves, t0, h -> h.policy().sha256().equals(pushed.sha256()));
        System.out.printf(
            "ServeClusterThreeHostsTest: pushed policy in force after %s ms (publish took %d"
                + " ms)%n",
            java.util.Arrays.toString(applied), pushMs);
        for (int i = 0; i < HOSTS; i++) {
          assertTrue(
              applied[i] >= 0 && applied[i] <= WITHIN.toMillis(),
              serves.get(i).name() + " applied the push after " + applied[i] + " ms (-1: never)");
        }
        // the push did not touch acme's trainers: their grants and sessions live on
        for (Serve s : serves) {
          assertTrue(hasSession(s.host(), TRAINER), s.name());
          List<GrantInfo> g = s.host().grants();
          assertEquals(1, g.size(), s.name() + ": " + g);
          assertTrue(g.get(0).access().contains(Access.WRITE), s.name() + ": " + g);
        }

        // the peer's certificate revoked (as `srdma cert revoke --cluster`): its session ends on
        // every host within 1 s of the publish
        BigInteger serial = trainer.certificate().getSerialNumber();
        assertTrue(ca.revoke(serial));
        long[] terminatedBefore = new long[HOSTS];
        for (int i = 0; i < HOSTS; i++) {
          terminatedBefore[i] = serves.get(i).host().stats().sessionsTerminated();
        }
        long t1 = System.nanoTime();
        RevocationPublisher.Published published =
            RevocationPublisher.publish(ops, ca.crl(), List.of(serial), ca.certificate());
        long publishMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t1);
        assertTrue(published.changed());
        long[] ended = whenEach(serves, t1, h -> !hasSession(h, TRAINER));
        System.out.printf(
            "ServeClusterThreeHostsTest: revoked peer's sessions ended after %s ms (publish took"
                + " %d ms)%n",
            java.util.Arrays.toString(ended), publishMs);
        for (int i = 0; i < HOSTS; i++) {
          Serve s = serves.get(i);
          assertTrue(
              ended[i] >= 0 && ended[i] <= WITHIN.toMillis(),
              s.name()
                  + " ended the revoked peer's session after "
                  + ended[i]
                  + " ms (-1: never): "
                  + s.host().sessions());
          // the host ended it (not the client leaving), and its grant with it
          assertEquals(terminatedBefore[i] + 1, s.host().stats().sessionsTerminated(), s.name());
          assertTrue(s.host().grants().isEmpty(), s.name() + ": " + s.host().grants());
        }
        for (int i = 0; i < HOSTS; i++) {
          AtomicLong l = lost[i];
          await(
              "client of " + serves.get(i).name() + " sees its session lost",
              Duration.ofSeconds(10),
              () -> l.get() >= 0);
          assertTrue(!clients.get(i).isOpen(), serves.get(i).name());
        }

        // each host refuses the revoked peer's new handshake, and still admits another peer
        for (Serve s : serves) {
          long authFailures = s.host().stats().authFailures();
          try (SecureRdmaClient again = SecureRdmaClient.connect(client(trainer, ca, s))) {
            fail(s.name() + " admitted the revoked peer again: " + again.sessionId());
          } catch (ChannelException e) {
            assertTrue(
                e.reason() == ChannelException.Reason.CONNECT_FAILED
                    || e.reason() == ChannelException.Reason.AUTHENTICATION_FAILED,
                s.name() + ": " + e);
          }
          assertTrue(!hasSession(s.host(), TRAINER), s.name());
          await(
              s.name() + " counts the refused handshake",
              Duration.ofSeconds(5),
              () -> s.host().stats().authFailures() > authFailures);
          try (SecureRdmaClient ok = SecureRdmaClient.connect(client(other, ca, s))) {
            ok.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
            assertTrue(hasSession(s.host(), "acme/trainer-2"), s.name());
          }
        }
      } finally {
        for (SecureRdmaClient c : clients) {
          c.close();
        }
        for (Serve s : serves) {
          s.command().stop();
        }
        for (Serve s : serves) {
          assertEquals(0, s.exit().get(30, TimeUnit.SECONDS), s.name() + ": " + s.err());
        }
      }
    }
  }
}
