package io.srdma.cli;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.HostOptions;
import io.srdma.channel.HostStats;
import io.srdma.channel.HostedRegion;
import io.srdma.channel.RegionHost;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyLoader;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code srdma demo}: the whole product on one machine. A dev CA and certificates under a state
 * directory, the sample policy (tenants acme and globex), a host on loopback, clients of both
 * tenants moving sealed data, then the attacks of DESIGN.md §7 at this layer, each in a table row.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Runs secure-rdma end to end on this machine and tries the attacks it stops.",
      "",
      "Creates a dev CA and certificates under --state-dir, loads the sample policy (tenants",
      "acme and globex), starts a host on loopback, has clients of both tenants write and read",
      "sealed data, then tries each attack and prints what happened. With --once it exits 0",
      "only when every outcome is the expected one; without, the host stays up until Ctrl-C."
    })
public final class DemoCommand implements Callable<Integer> {
  private static final int REGION_BYTES = 4 << 20;
  private static final int SESSIONS_PER_TENANT = 16;

  @Option(
      names = "--state-dir",
      defaultValue = "srdma-demo",
      description = "Where CA, certificates, policy and audit log go (default: ${DEFAULT-VALUE}).")
  Path stateDir;

  @Option(names = "--once", description = "Run the scenario, print the table and exit.")
  boolean once;

  @Option(
      names = "--provider",
      defaultValue = "soft",
      description = "RDMA provider: soft, ibv or auto (default: ${DEFAULT-VALUE}).")
  String provider;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  private final List<String[]> rows = new ArrayList<>();
  private boolean allExpected = true;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    Files.createDirectories(stateDir);
    Path run = Files.createTempDirectory(stateDir, "run-");
    DeploymentCa ca = DeploymentCa.init(run.resolve("ca"), null);
    Credential hostCredential = issue(ca, run, RegionHost.HOST_TENANT, "demo-host");
    Policy policy = new PolicyLoader().loadSample();
    Files.writeString(run.resolve("policy.yaml"), policy.source());
    out.printf("state: %s (dev CA, certificates, policy.yaml, audit.jsonl)%n", run);
    try (AuditLog log = AuditLog.open(run.resolve("audit.jsonl"));
        RegionHost host =
            RegionHost.start(
                new HostOptions()
                    .credential(hostCredential)
                    .trust(ca.trust())
                    .policy(policy)
                    .audit(new AuditTrail(log))
                    .maxSessionsPerTenant(SESSIONS_PER_TENANT)
                    .provider(provider))) {
      HostedRegion acmeKv = host.registerRegion("acme", "kvcache", REGION_BYTES);
      HostedRegion globexFeatures = host.registerRegion("globex", "features", REGION_BYTES);
      AtomicLong acmeBytes = new AtomicLong();
      AtomicLong globexBytes = new AtomicLong();
      acmeKv.onRecord(r -> acmeBytes.addAndGet(r.payload().remaining()));
      globexFeatures.onRecord(r -> globexBytes.addAndGet(r.payload().remaining()));
      out.printf(
          "host %s listening on %s (provider %s, grants scoped by %s)%n",
          PeerIdentity.of(RegionHost.HOST_TENANT, "demo-host"),
          host.address(),
          provider,
          host.scopedByRegion() ? "per-grant memory regions" : "type-2 memory windows");
      out.flush();

      Clients clients = new Clients(ca, run, host);
      try {
        traffic(out, host, clients, acmeKv, acmeBytes, globexBytes);
        long globexSum = checksum(globexFeatures);
        attacks(host, clients, ca, run, acmeKv);
        row(
            "globex's region after all attacks",
            "unchanged",
            checksum(globexFeatures) == globexSum ? "unchanged (CRC32C)" : "CHANGED",
            checksum(globexFeatures) == globexSum);
        printTable(out, host.stats());
        out.printf("audit log: %s (verify with: srdma audit verify %s)%n", log.file(), log.file());
        out.println(
            allExpected
                ? "demo: every outcome as expected"
                : "demo: UNEXPECTED OUTCOMES (rows marked FAIL)");
        out.flush();
        if (!once) {
          out.println("host stays up; Ctrl-C to stop");
          out.flush();
          CountDownLatch stop = new CountDownLatch(1);
          Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown, "srdma-demo-stop"));
          stop.await();
        }
      } finally {
        clients.close();
      }
    }
    return allExpected ? 0 : 1;
  }

  private void traffic(
      PrintWriter out,
      RegionHost host,
      Clients clients,
      HostedRegion acmeKv,
      AtomicLong acmeBytes,
      AtomicLong globexBytes)
      throws Exception {
    SecureRdmaClient trainer = clients.connect("acme", "trainer-1");
    RemoteGrant write =
        trainer.grant("kvcache", EnumSet.of(Access.WRITE), 0, 2 << 20, Duration.ofMinutes(5));
    byte[] data = new byte[1 << 20];
    new SecureRandom().nextBytes(data);
    write.writeBlocking(0, ByteBuffer.wrap(data));
    await(() -> acmeBytes.get() == data.length, "acme's megabyte opened");
    row(
        "acme/trainer-1 writes 1 MiB (sealed, 16 records)",
        "host opens all of it",
        acmeBytes.get() + " bytes opened",
        acmeBytes.get() == data.length);

    SecureRdmaClient loader = clients.connect("globex", "loader-1");
    RemoteGrant features =
        loader.grant(
            "features", EnumSet.of(Access.READ, Access.WRITE), 0, 1 << 20, Duration.ofMinutes(5));
    features.writeBlocking(0, ByteBuffer.wrap(data, 0, 100_000));
    await(() -> globexBytes.get() == 100_000, "globex's record opened");
    row(
        "globex/loader-1 writes 100 kB into its region",
        "host opens it",
        globexBytes.get() + " bytes opened",
        globexBytes.get() == 100_000);

    byte[] model = "model weights v42, sealed by the host for acme's readers".getBytes();
    long sealed = acmeKv.seal(3 << 20, ByteBuffer.wrap(model));
    SecureRdmaClient dashboard = clients.connect("acme", "dashboard");
    RemoteGrant read =
        dashboard.grant("kvcache", EnumSet.of(Access.READ), 3 << 20, 4096, Duration.ofSeconds(30));
    ByteBuffer got = read.readBlocking(0, (int) sealed);
    row(
        "acme/dashboard READs a record the host sealed",
        "opens with the region key",
        got.equals(ByteBuffer.wrap(model)) ? "plaintext matches" : "MISMATCH",
        got.equals(ByteBuffer.wrap(model)));
    clients.features = features;
    clients.trainerWrite = write;
    out.flush();
  }

  private void attacks(
      RegionHost host, Clients clients, DeploymentCa ca, Path run, HostedRegion acmeKv)
      throws Exception {
    DeploymentCa foreign = DeploymentCa.init(run.resolve("foreign-ca"), null);
    try {
      MutualTls.client(
              foreign.issuePeer(PeerIdentity.of("acme", "mallory"), Duration.ofDays(1)),
              foreign.trust())
          .connect(host.address(), Duration.ofSeconds(5));
      row("peer with a foreign CA's certificate", "TLS refused", "CONNECTED", false);
    } catch (KeyExchangeException e) {
      row("peer with a foreign CA's certificate", "TLS refused", e.reason().name(), true);
    }

    SecureRdmaClient guesser = clients.connect("acme", "trainer-2");
    RemoteGrant own =
        guesser.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    int guess = AttackProbe.rkey(own) ^ (1 + new SecureRandom().nextInt(Integer.MAX_VALUE));
    String s =
        AttackProbe.write(
            guesser,
            AttackProbe.remoteAddress(own),
            guess,
            new byte[8],
            8,
            AttackProbe.immediate(own, 0));
    row("guessed rkey (ReDMArk)", "REM_ACCESS_ERR", s, "REM_ACCESS_ERR".equals(s));

    SecureRdmaClient crosser = clients.connect("acme", "trainer-3");
    s =
        AttackProbe.write(
            crosser,
            AttackProbe.remoteAddress(clients.features),
            AttackProbe.rkey(clients.features),
            new byte[64],
            64,
            AttackProbe.immediate(clients.features, 0));
    row(
        "acme uses globex's rkey and address",
        "REM_ACCESS_ERR (PD check)",
        s,
        "REM_ACCESS_ERR".equals(s));

    SecureRdmaClient bounds = clients.connect("acme", "trainer-4");
    RemoteGrant small =
        bounds.grant("kvcache", EnumSet.of(Access.WRITE), 8192, 4096, Duration.ofMinutes(1));
    expectFailure(
        "write 1 byte past the grant (writer's check)",
        ChannelException.Reason.OUT_OF_BOUNDS,
        () -> small.writeBlocking(4096 - 36, ByteBuffer.wrap(new byte[1])));
    expectFailure(
        "write at an overflowing offset",
        ChannelException.Reason.OUT_OF_BOUNDS,
        () -> small.writeBlocking(Long.MAX_VALUE - 2, ByteBuffer.wrap(new byte[8])));
    expectFailure(
        "READ with a write-only grant (writer's check)",
        ChannelException.Reason.NOT_PERMITTED,
        () -> small.readBlocking(0, 100));
    s =
        AttackProbe.write(
            bounds,
            AttackProbe.remoteAddress(small) + 4096,
            AttackProbe.rkey(small),
            new byte[1],
            1,
            0);
    row(
        "write 1 byte past the grant, checks skipped",
        "REM_ACCESS_ERR (window bounds)",
        s,
        "REM_ACCESS_ERR".equals(s));

    SecureRdmaClient reader = clients.connect("acme", "trainer-5");
    RemoteGrant wo =
        reader.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    s = AttackProbe.read(reader, AttackProbe.remoteAddress(wo), AttackProbe.rkey(wo), 64);
    row(
        "READ with a write-only grant, checks skipped",
        "REM_ACCESS_ERR",
        s,
        "REM_ACCESS_ERR".equals(s));

    SecureRdmaClient dashboard = clients.connect("acme", "dashboard-2");
    expectDenied(
        "peer without a policy entry asks for a grant",
        () -> dashboard.grant("kvcache", EnumSet.of(Access.READ), 0, 4096, Duration.ofSeconds(10)));
    SecureRdmaClient observer = clients.connect("acme", "dashboard");
    expectDenied(
        "observer role asks to WRITE",
        () -> observer.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofSeconds(10)));

    SecureRdmaClient revokee = clients.connect("acme", "trainer-6");
    RemoteGrant doomed =
        revokee.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
    host.revoke(doomed.id(), "demo-operator");
    await(() -> !doomed.isValid(), "revocation pushed");
    expectFailure(
        "write through a revoked grant",
        ChannelException.Reason.REVOKED,
        () -> doomed.writeBlocking(0, ByteBuffer.wrap(new byte[8])));
    s =
        AttackProbe.write(
            revokee,
            AttackProbe.remoteAddress(doomed),
            AttackProbe.rkey(doomed),
            new byte[8],
            8,
            0);
    row("revoked rkey, checks skipped", "REM_ACCESS_ERR", s, "REM_ACCESS_ERR".equals(s));

    SecureRdmaClient replayer = clients.connect("acme", "trainer-7");
    RemoteGrant g =
        replayer.grant("kvcache", EnumSet.of(Access.WRITE), 1 << 20, 65536, Duration.ofMinutes(1));
    g.writeBlocking(0, ByteBuffer.wrap(new byte[100]));
    byte[] record = new byte[100 + 36];
    await(() -> host.stats().recordsOpened() > 0, "record");
    Thread.sleep(50);
    acmeKv.copy(1 << 20, record);
    recordAttack(
        host,
        "replay a record already delivered",
        "REPLAYED",
        () ->
            AttackProbe.write(
                replayer,
                AttackProbe.remoteAddress(g),
                AttackProbe.rkey(g),
                record,
                record.length,
                AttackProbe.immediate(g, 0)));
    byte[] moved = AttackProbe.sealRecord(replayer, g, 4096, new byte[100]);
    recordAttack(
        host,
        "relocate a record to another offset",
        "AUTH_FAILED",
        () ->
            AttackProbe.write(
                replayer,
                AttackProbe.remoteAddress(g) + 8192,
                AttackProbe.rkey(g),
                moved,
                moved.length,
                AttackProbe.immediate(g, 8192)));
    byte[] cut = AttackProbe.sealRecord(replayer, g, 12288, new byte[100]);
    recordAttack(
        host,
        "truncate a record",
        "TRUNCATED",
        () ->
            AttackProbe.write(
                replayer,
                AttackProbe.remoteAddress(g) + 12288,
                AttackProbe.rkey(g),
                cut,
                cut.length / 2,
                AttackProbe.immediate(g, 12288)));
    byte[] flipped = AttackProbe.sealRecord(replayer, g, 16384, new byte[100]);
    flipped[40] ^= 1;
    recordAttack(
        host,
        "flip one ciphertext bit",
        "AUTH_FAILED",
        () ->
            AttackProbe.write(
                replayer,
                AttackProbe.remoteAddress(g) + 16384,
                AttackProbe.rkey(g),
                flipped,
                flipped.length,
                AttackProbe.immediate(g, 16384)));

    int flooded = 0;
    ChannelException refusal = null;
    List<SecureRdmaClient> flood = new ArrayList<>();
    try {
      for (int i = 0; i <= SESSIONS_PER_TENANT && refusal == null; i++) {
        try {
          flood.add(clients.connectUntracked("globex", "inference-" + i));
          flooded++;
        } catch (ChannelException e) {
          refusal = e;
        }
      }
    } finally {
      for (SecureRdmaClient c : flood) {
        c.close();
      }
    }
    row(
        "globex opens sessions beyond its quota (" + SESSIONS_PER_TENANT + ")",
        "QUOTA_EXCEEDED",
        (refusal == null ? "none refused" : refusal.reason().name()) + " after " + flooded,
        refusal != null && refusal.reason() == ChannelException.Reason.QUOTA_EXCEEDED);

    long before = host.stats().protocolErrors();
    try {
      var peer =
          MutualTls.client(clients.credential("acme", "trainer-8"), ca.trust())
              .connect(host.address(), Duration.ofSeconds(5));
      try (var socket = peer.socket()) {
        OutputStream o = socket.getOutputStream();
        o.write("GET / HTTP/1.1\r\n\r\n".getBytes());
        o.flush();
        socket.setSoTimeout(5000);
        InputStream in = socket.getInputStream();
        while (in.read(new byte[1024]) > 0) {
          // drain the ERROR frame until the host closes
        }
      }
    } catch (java.io.IOException e) {
      // the host closed the connection: expected
    }
    await(() -> host.stats().protocolErrors() > before, "protocol error counted");
    row(
        "malformed control frame",
        "session ended, ERROR + audit",
        "protocol errors: " + host.stats().protocolErrors(),
        host.stats().protocolErrors() > before);
  }

  private void recordAttack(
      RegionHost host, String what, String expected, java.util.function.Supplier<String> attack)
      throws InterruptedException {
    long before = host.stats().recordsRejected();
    String status = attack.get();
    boolean rejected = true;
    try {
      await(() -> host.stats().recordsRejected() > before, what);
    } catch (IllegalStateException e) {
      rejected = false;
    }
    row(
        what,
        "host rejects: " + expected,
        "write " + status + ", host " + (rejected ? "rejected it (audited)" : "ACCEPTED it"),
        rejected && "SUCCESS".equals(status));
  }

  private void expectFailure(String what, ChannelException.Reason expected, Runnable r) {
    try {
      r.run();
      row(what, expected.name(), "SUCCEEDED", false);
    } catch (ChannelException e) {
      row(what, expected.name(), e.reason().name(), e.reason() == expected);
    }
  }

  private void expectDenied(String what, Runnable r) {
    try {
      r.run();
      row(what, "GRANT_DENIED", "GRANTED", false);
    } catch (ChannelException e) {
      row(
          what,
          "GRANT_DENIED",
          e.reason() + " " + e.detail(),
          e.reason() == ChannelException.Reason.GRANT_DENIED);
    }
  }

  private void row(String what, String expected, String observed, boolean ok) {
    rows.add(new String[] {ok ? "ok" : "FAIL", what, expected, observed});
    allExpected &= ok;
  }

  private void printTable(PrintWriter out, HostStats stats) {
    int w1 = 4;
    int w2 = 0;
    int w3 = 0;
    for (String[] r : rows) {
      w2 = Math.max(w2, r[1].length());
      w3 = Math.max(w3, r[2].length());
    }
    String fmt = "%-" + w1 + "s  %-" + w2 + "s  %-" + w3 + "s  %s%n";
    out.println();
    out.printf(fmt, "", "what", "expected", "observed");
    out.printf(fmt, "", "-".repeat(w2), "-".repeat(w3), "-".repeat(8));
    for (String[] r : rows) {
      out.printf(fmt, r[0], r[1], r[2], r[3]);
    }
    out.println();
    out.printf(
        "host: %d sessions opened, %d grants issued, %d denied, %d revoked, %d records opened, %d"
            + " rejected, %d remote access errors, %d auth failures, %d protocol errors%n",
        stats.sessionsOpened(),
        stats.grantsIssued(),
        stats.denials(),
        stats.revocations(),
        stats.recordsOpened(),
        stats.recordsRejected(),
        stats.remoteAccessErrors(),
        stats.authFailures(),
        stats.protocolErrors());
  }

  private static long checksum(HostedRegion r) {
    byte[] all = new byte[(int) r.size()];
    r.copy(0, all);
    CRC32C c = new CRC32C();
    c.update(all);
    return c.getValue();
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not within 10 s: " + what);
      }
      Thread.sleep(5);
    }
  }

  private static Credential issue(DeploymentCa ca, Path run, String tenant, String peer) {
    Credential c = ca.issuePeer(PeerIdentity.of(tenant, peer), Duration.ofDays(1));
    c.writeTo(
        run.resolve(tenant + "." + peer + ".crt"), run.resolve(tenant + "." + peer + ".key"), null);
    return c;
  }

  /** The demo's clients, closed together. */
  private final class Clients implements AutoCloseable {
    private final DeploymentCa ca;
    private final Path run;
    private final RegionHost host;
    private final List<SecureRdmaClient> open = new ArrayList<>();
    RemoteGrant features;
    RemoteGrant trainerWrite;

    Clients(DeploymentCa ca, Path run, RegionHost host) {
      this.ca = ca;
      this.run = run;
      this.host = host;
    }

    private final java.util.Map<String, Credential> issued = new java.util.HashMap<>();

    Credential credential(String tenant, String peer) {
      return issued.computeIfAbsent(tenant + "/" + peer, k -> issue(ca, run, tenant, peer));
    }

    SecureRdmaClient connect(String tenant, String peer) {
      SecureRdmaClient c = connectUntracked(tenant, peer);
      open.add(c);
      return c;
    }

    SecureRdmaClient connectUntracked(String tenant, String peer) {
      return SecureRdmaClient.connect(
          new ClientOptions()
              .credential(credential(tenant, peer))
              .trust(ca.trust())
              .host(host.address())
              .provider(provider));
    }

    @Override
    public void close() {
      for (SecureRdmaClient c : open) {
        c.close();
      }
    }
  }
}
