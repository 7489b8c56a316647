package io.srdma.cli;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.console.ConsoleServer;
import io.srdma.host.HostStats;
import io.srdma.host.HostedRegion;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.RevocationList;
import io.srdma.server.Addresses;
import io.srdma.server.DevDeployment;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
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
      "Creates a dev CA and certificates under --state-dir, loads the sample policy (tenants"
          + " acme and globex), starts a host on loopback, has clients of both tenants write and"
          + " read sealed data, then tries each attack and prints what happened. With --once it"
          + " exits 0 only when every outcome is the expected one; without, the host stays up"
          + " until Ctrl-C. Log lines go to srdma.log in the run's directory (--verbose shows"
          + " them here too)."
    },
    exitCodeListHeading = "%nExit status:%n",
    exitCodeList = {
      "0:every outcome as expected",
      "1:an unexpected outcome (rows marked FAIL) or a failure",
      "2:bad arguments (nothing was created)"
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

  @Option(
      names = "--console-port",
      defaultValue = "0",
      description =
          "Port of the HTTPS console (0: any free port, -1: no console; default: ${DEFAULT-VALUE}).")
  int consolePort;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  private final List<String[]> rows = new ArrayList<>();
  private boolean allExpected = true;

  /**
   * Checks the arguments before anything is created.
   *
   * @throws picocli.CommandLine.ParameterException naming the bad argument
   */
  private void checkArguments() {
    picocli.CommandLine cmd = spec.commandLine();
    if (consolePort < -1 || consolePort > 65_535) {
      throw new picocli.CommandLine.ParameterException(
          cmd, "--console-port: " + consolePort + " is no port (0 to 65535, or -1)");
    }
    try {
      io.srdma.verbs.RdmaProviders.select(provider);
    } catch (io.srdma.verbs.VerbsException e) {
      if (e.reason() == io.srdma.verbs.VerbsException.Reason.INVALID_ARGUMENT) {
        throw new picocli.CommandLine.ParameterException(
            cmd, "--provider: " + Addresses.explain(e));
      }
      throw e; // a known provider that cannot run here: a failure (exit 1), nothing created
    }
    if (Files.exists(stateDir) && !Files.isDirectory(stateDir)) {
      throw new picocli.CommandLine.ParameterException(
          cmd, "--state-dir: " + stateDir + " is not a directory");
    }
  }

  @Override
  public Integer call() throws Exception {
    checkArguments();
    PrintWriter out = spec.commandLine().getOut();
    try (Progress progress = new Progress(out, Progress.terminal())) {
      return run(out, progress);
    }
  }

  private int run(PrintWriter out, Progress progress) throws Exception {
    progress.phase("creating a dev CA, certificates and the policy under " + stateDir);
    Files.createDirectories(stateDir);
    Path run = Files.createTempDirectory(stateDir, "run-");
    try (CliLogging.LogFile logFile = CliLogging.toFile(run)) {
      return run(out, progress, run, logFile.file());
    }
  }

  private int run(PrintWriter out, Progress progress, Path run, Path logFile) throws Exception {
    try (DevDeployment dev = DevDeployment.create(run)) {
      progress.done();
      out.printf(
          "state: %s (dev CA, certificates, policy.yaml, audit.jsonl, audit.key; log %s)%n",
          run, logFile.getFileName());
      progress.phase("starting the host (provider " + provider + ")");
      RegionHost host = dev.startHost(provider, SESSIONS_PER_TENANT);
      HostedRegion acmeKv = host.registerRegion("acme", "kvcache", REGION_BYTES);
      HostedRegion globexFeatures = host.registerRegion("globex", "features", REGION_BYTES);
      AtomicLong acmeBytes = new AtomicLong();
      AtomicLong globexBytes = new AtomicLong();
      acmeKv.onRecord(r -> acmeBytes.addAndGet(r.payload().remaining()));
      globexFeatures.onRecord(r -> globexBytes.addAndGet(r.payload().remaining()));
      progress.done();
      out.printf(
          "host %s listening on %s (provider %s, grants scoped by %s)%n",
          dev.hostIdentity(),
          Addresses.format(host.address()),
          provider,
          host.scopedByRegion() ? "per-grant memory regions" : "type-2 memory windows");
      out.flush();

      Clients clients = new Clients(dev);
      ConsoleServer console = consolePort < 0 ? null : dev.startConsole(consolePort);
      if (console != null) {
        out.printf(
            "console: %s  (user admin, password %s; user auditor, password %s; the certificate is"
                + " from the dev CA %s)%n",
            console.url(),
            dev.adminPassword(),
            dev.auditorPassword(),
            run.resolve("ca").resolve(DeploymentCa.CA_CERTIFICATE));
        out.flush();
      }
      Path audit = dev.auditLog().file();
      try {
        progress.phase("moving sealed data for acme and globex");
        traffic(out, clients, acmeKv, acmeBytes, globexBytes);
        long globexSum = checksum(globexFeatures);
        progress.phase("trying the attacks");
        attacks(host, clients, run, dev.crl(), acmeKv, audit);
        progress.done();
        row(
            "globex's region after all attacks",
            "unchanged",
            checksum(globexFeatures) == globexSum ? "unchanged (CRC32C)" : "CHANGED",
            checksum(globexFeatures) == globexSum);
        printTable(out, host.stats());
        out.printf("audit log: %s (verify with: srdma audit verify %s)%n", audit, audit);
        out.println(
            allExpected
                ? "demo: every outcome as expected"
                : "demo: UNEXPECTED OUTCOMES (rows marked " + Style.mark("FAIL", 0) + ")");
        out.printf("log: %s%n", logFile);
        out.flush();
        if (!once) {
          out.println(
              "host stays up; acme/trainer-1 keeps writing 64 KiB every 200 ms (watch the console,"
                  + " revoke its grant there); Ctrl-C to stop");
          out.flush();
          CountDownLatch stop = new CountDownLatch(1);
          Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown, "srdma-demo-stop"));
          Thread traffic = new Thread(() -> keepWriting(clients, stop, out), "srdma-demo-traffic");
          traffic.setDaemon(true);
          traffic.start();
          stop.await();
          traffic.interrupt();
          traffic.join(5_000);
        }
      } finally {
        clients.close(); // then the deployment closes the console, the host and the audit log
      }
    }
    return allExpected ? 0 : 1;
  }

  private void traffic(
      PrintWriter out,
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

    byte[] model =
        "model weights v42, sealed by the host for acme's readers".getBytes(StandardCharsets.UTF_8);
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
    out.flush();
  }

  private void attacks(
      RegionHost host,
      Clients clients,
      Path run,
      RevocationList crl,
      HostedRegion acmeKv,
      Path audit)
      throws Exception {
    AttackSuite.Target target =
        new AttackSuite.Target(
            host.address(),
            clients.dev.hostIdentity(),
            clients.ca.trust(),
            clients.credential("acme", "trainer-2"),
            "kvcache",
            clients.credential("globex", "loader-1"),
            "features",
            clients.credential("acme", "dashboard"),
            provider,
            host::stats);
    AttackSuite suite =
        new AttackSuite(target, r -> row(r.what(), r.expected(), r.observed(), r.ok()));
    suite.proveTarget();
    suite.run(run);
    new DemoAttacks(
            suite,
            new DemoAttacks.Setup(
                host, clients.ca, crl, acmeKv, clients::credential, clients::options, audit))
        .run();
  }

  /**
   * Background traffic for the console: writes through a grant, asks for a new one when the grant
   * ends (revoked in the console, expired), and says so.
   */
  private void keepWriting(Clients clients, CountDownLatch stop, PrintWriter out) {
    SecureRdmaClient writer = clients.connect("acme", "trainer-1");
    ByteBuffer data = ByteBuffer.allocate(64 * 1024);
    RemoteGrant g = null;
    long offset = 0;
    while (stop.getCount() > 0 && !Thread.currentThread().isInterrupted()) {
      try {
        if (g == null || !g.isValid()) {
          if (g != null) {
            out.printf(
                "demo traffic: grant %d ended (%s); asking for a new one%n",
                g.id(), g.endedBecause());
            out.flush();
          }
          g = writer.grant("kvcache", EnumSet.of(Access.WRITE), 0, 2 << 20, Duration.ofMinutes(5));
        }
        g.writeBlocking(offset, data.clear());
        offset = (offset + 65_600) % ((2 << 20) - 65_600);
        Thread.sleep(200);
      } catch (ChannelException e) {
        out.printf("demo traffic: %s%n", e.getMessage());
        out.flush();
        if (!writer.isOpen()) {
          return;
        }
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void row(String what, String expected, String observed, boolean ok) {
    // what an attack observed may quote a Java message: shown without class names, host:port
    rows.add(
        new String[] {ok ? "ok" : "FAIL", what, expected, Addresses.withoutClassNames(observed)});
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
    String fmt = "%s  %-" + w2 + "s  %-" + w3 + "s  %s%n";
    out.println();
    out.printf(fmt, " ".repeat(w1), "what", "expected", "observed");
    out.printf(fmt, " ".repeat(w1), "-".repeat(w2), "-".repeat(w3), "-".repeat(8));
    for (String[] r : rows) {
      out.printf(fmt, Style.mark(r[0], w1), r[1], r[2], r[3]);
    }
    out.println();
    out.printf(
        "host: %d sessions opened, %d grants issued, %d denied, %d revoked, %d records opened, %d"
            + " rejected, %d remote access errors, %d auth failures, %d protocol errors, %d stale"
            + " notifications, %d sessions ended by the host, %d handshake deadlines, %d responder"
            + " refusals%n",
        stats.sessionsOpened(),
        stats.grantsIssued(),
        stats.denials(),
        stats.revocations(),
        stats.recordsOpened(),
        stats.recordsRejected(),
        stats.remoteAccessErrors(),
        stats.authFailures(),
        stats.protocolErrors(),
        stats.staleNotifications(),
        stats.sessionsTerminated(),
        stats.handshakeDeadlines(),
        stats.responderRefusals());
  }

  private static long checksum(HostedRegion r) {
    byte[] all = new byte[(int) r.size()];
    r.copy(0, all);
    CRC32C c = new CRC32C();
    c.update(all);
    return c.getValue();
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    AttackSuite.await(condition, what);
  }

  /** The demo's clients, closed together. */
  private final class Clients implements AutoCloseable {
    final DeploymentCa ca;
    private final DevDeployment dev;
    private final List<SecureRdmaClient> open = new ArrayList<>();

    Clients(DevDeployment dev) {
      this.ca = dev.ca();
      this.dev = dev;
    }

    Credential credential(String tenant, String peer) {
      return dev.credential(tenant, peer);
    }

    /** Options for a client of {@code who}, pinned to the demo host. */
    ClientOptions options(Credential who) {
      return dev.clientOptions(who, provider);
    }

    SecureRdmaClient connect(String tenant, String peer) {
      SecureRdmaClient c = SecureRdmaClient.connect(options(credential(tenant, peer)));
      open.add(c);
      return c;
    }

    @Override
    public void close() {
      for (SecureRdmaClient c : open) {
        c.close();
      }
    }
  }
}
