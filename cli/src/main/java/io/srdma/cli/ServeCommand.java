package io.srdma.cli;

import io.srdma.channel.record.AeadSelection;
import io.srdma.host.RegionHost;
import io.srdma.policy.Printable;
import io.srdma.server.Addresses;
import io.srdma.server.SecureRdmaServer;
import io.srdma.server.ServeConfig;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code srdma serve --config FILE}: runs a {@link SecureRdmaServer} until SIGINT or SIGTERM.
 *
 * <p>The server starts nothing on a bad configuration: the file is read and checked as a whole
 * ({@link ServeConfig}), then everything it names ({@link SecureRdmaServer#prepare}); errors of
 * either exit 2 with every error as {@code file:line:column: key: what}. A failure to start (port
 * in use, device error) exits 1 after the server undid what was started. This class only parses the
 * options, calls the server and prints.
 */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = {
      "Run a region host: mutual-TLS control plane, grants under the access policy, sealed"
          + " records, audit log. Runs until SIGINT/SIGTERM (see docs/serve.md).",
      "Prints one line 'srdma serve: listening on HOST:PORT ...' when ready (and, with a console"
          + " section, 'srdma serve: console on https://HOST:PORT ...')."
    },
    exitCodeListHeading = "%nExit status:%n",
    exitCodeList = {
      "0:stopped cleanly (143/130 when the JVM ends on SIGTERM/SIGINT)",
      "1:could not start (port in use, device error, audit log unusable)",
      "2:bad configuration; nothing was started"
    })
final class ServeCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--config",
      required = true,
      paramLabel = "FILE",
      description = "The serve configuration (YAML, docs/serve.md).")
  Path config;

  @Option(
      names = "--aead",
      paramLabel = "MODE",
      description =
          "AES-256-GCM of the data path: auto, jdk, accp, openssl, gcrypt or ipsec-mb; overrides"
              + " the"
              + " configuration's aead"
              + " (default: aead, else the srdma.aead property, else SRDMA_AEAD, else auto).")
  String aead;

  /** The file name of the highest accepted CRL number beside the audit log. */
  static final String CRL_NUMBER_FILE = SecureRdmaServer.CRL_NUMBER_FILE;

  /** The file name of the highest applied cluster policy serial beside the audit log. */
  static final String POLICY_SERIAL_FILE = SecureRdmaServer.POLICY_SERIAL_FILE;

  private final CountDownLatch stopRequested = new CountDownLatch(1);
  private volatile SecureRdmaServer server;
  private volatile InetSocketAddress address;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (aead != null) {
      // a usage error like any other bad option: exit 2 before anything is read or written
      try {
        AeadSelection.Mode.parse(aead, "--aead");
      } catch (RuntimeException e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), Printable.escape(e.getMessage()));
      }
    }
    ServeConfig c;
    SecureRdmaServer s;
    try {
      c = ServeConfig.read(config);
      s = SecureRdmaServer.prepare(c);
    } catch (ServeConfig.ConfigException e) {
      for (String line : e.errors()) {
        err.println(line);
      }
      err.printf(
          "srdma serve: %d error%s in %s; nothing was started%n",
          e.errors().size(),
          e.errors().size() == 1 ? "" : "s",
          Printable.escape(config.toString()));
      err.flush();
      return KeyCommands.EXIT_USAGE;
    }
    // log lines go to srdma.log beside the audit log (the terminal shows them with --verbose)
    try (CliLogging.LogFile logFile =
        CliLogging.toFile(c.auditFile().toAbsolutePath().getParent())) {
      return serve(c, s, out, err, logFile.file());
    }
  }

  private int serve(
      ServeConfig c, SecureRdmaServer s, PrintWriter out, PrintWriter err, Path logFile) {
    try {
      AeadSelection.select(aeadMode(c));
      s.start();
    } catch (RuntimeException e) {
      // start undid what it had started
      err.println("srdma serve: could not start: " + Addresses.explain(e));
      err.printf("srdma serve: details in %s%n", logFile);
      err.flush();
      return KeyCommands.EXIT_FAILED;
    }
    server = s;
    Thread hook = new Thread(() -> shutdown(c.shutdownTimeout()), "srdma-serve-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    address = s.address();
    out.printf(
        "srdma serve: listening on %s (host %s, provider %s, grants scoped by %s, %d region%s,"
            + " policy %s sha256 %s%s, audit %s)%n",
        format(address),
        s.hostIdentity(),
        c.provider(),
        s.host().scopedByRegion() ? "per-grant memory regions" : "type-2 memory windows",
        c.regionCount(),
        c.regionCount() == 1 ? "" : "s",
        c.policyFile(),
        s.policy().sha256().substring(0, 12),
        c.watchPolicy() ? ", watched" : "",
        c.auditFile());
    if (s.consoleUrl() != null) {
      int users = s.policy().consoleUsers().size();
      out.printf(
          "srdma serve: console on %s (%d console user%s of the policy, certificate %s, metrics"
              + " token %s)%n",
          s.consoleUrl(),
          users,
          users == 1 ? "" : "s",
          c.consoleCertificateChain(),
          c.consoleMetricsTokenFile() == null ? "none: /metrics needs a login" : "set");
    }
    out.printf("srdma serve: log %s%n", logFile);
    out.flush();
    try {
      stopRequested.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    shutdown(c.shutdownTimeout());
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down: the hook is running or ran
    }
    out.println("srdma serve: stopped");
    out.flush();
    return 0;
  }

  /** Asks a running serve to stop (as SIGTERM does); {@link #call} then returns 0. */
  void stop() {
    stopRequested.countDown();
  }

  /** The control-plane address once ready, else null. */
  InetSocketAddress address() {
    return address;
  }

  /** The running host once ready, else null (tests look at its sessions and policy). */
  RegionHost regionHost() {
    SecureRdmaServer s = server;
    return s == null ? null : s.host();
  }

  /** Waits until the host is closed (or the wait is over); false if it never ran. */
  boolean awaitStopped(Duration d) {
    SecureRdmaServer s = server;
    return s != null && s.awaitClosed(d);
  }

  /**
   * Closes the server, at most {@code limit} long (see {@link SecureRdmaServer#close(Duration)}).
   * Idempotent; callable from the shutdown hook.
   */
  private void shutdown(Duration limit) {
    stopRequested.countDown();
    SecureRdmaServer s = server;
    if (s != null) {
      s.close(limit);
    }
  }

  private static String format(InetSocketAddress a) {
    return Addresses.format(new InetSocketAddress(a.getAddress().getHostAddress(), a.getPort()));
  }

  /** The data-path AEAD mode: --aead, else the configuration's aead, else property/env/auto. */
  private AeadSelection.Mode aeadMode(ServeConfig c) {
    String m = aead != null ? aead : c.aead();
    return m != null
        ? AeadSelection.Mode.parse(m, aead != null ? "--aead" : "aead")
        : AeadSelection.requestedMode();
  }
}
