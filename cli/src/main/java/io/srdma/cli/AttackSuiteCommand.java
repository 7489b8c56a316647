package io.srdma.cli;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
import io.srdma.server.Addresses;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code srdma attack-suite --target HOST:PORT}: the attacks of DESIGN.md §7 that a network peer
 * can try, against a running host, one line per attack.
 */
@Command(
    name = "attack-suite",
    mixinStandardHelpOptions = true,
    description = {
      "Tries the attacks a network peer can make against a running host, one line each.",
      "",
      "Needs the deployment's CA, a peer of one tenant allowed to WRITE --region (the attacker),",
      "a peer of another tenant allowed a grant on --victim-region, and optionally a peer of the",
      "attacker's tenant whose role may not write (--narrow). Record attacks and a notification",
      "naming a released grant's slot are sent; their verdict (REPLAYED, AUTH_FAILED, TRUNCATED,",
      "stale slot) is the host's, in its audit log. The idle-connections row floods from",
      "127.0.0.2, so it runs only against a host on 127.0.0.1 (skip otherwise).",
      "",
      "Before any attack it proves that a live srdma host answers at --target (mutual TLS with",
      "the deployment's CA and a session for --attacker); an attack whose set-up fails is FAIL.",
      "Exit 0 when every outcome seen from here is the expected one, 1 otherwise, 2 on bad",
      "options or when no srdma host answers at --target."
    })
public final class AttackSuiteCommand implements Callable<Integer> {
  @Option(names = "--target", required = true, description = "The host's control plane, HOST:PORT.")
  String target;

  @Option(
      names = "--host-name",
      paramLabel = "NAME",
      description =
          "The host's name: its certificate must name srdma://host/NAME. Without it any host of"
              + " the deployment is accepted (development only; a warning on every connect).")
  String hostName;

  @Option(names = "--ca", required = true, description = "The deployment's CA certificate (PEM).")
  Path ca;

  @Option(
      names = "--crl",
      description =
          "The deployment's CRL (PEM) to check the host's certificate against (default: crl.pem"
              + " beside --ca).")
  Path crl;

  @Option(
      names = "--attacker",
      required = true,
      paramLabel = "CERT,KEY",
      split = ",",
      description = "Certificate and key of a peer allowed to WRITE --region.")
  Path[] attacker;

  @Option(names = "--region", required = true, description = "A region of the attacker's tenant.")
  String region;

  @Option(
      names = "--victim",
      required = true,
      paramLabel = "CERT,KEY",
      split = ",",
      description = "Certificate and key of a peer of another tenant.")
  Path[] victim;

  @Option(
      names = "--victim-region",
      required = true,
      description = "A region of the victim's tenant it may WRITE.")
  String victimRegion;

  @Option(
      names = "--narrow",
      paramLabel = "CERT,KEY",
      split = ",",
      description = "Certificate and key of a peer of the attacker's tenant that may not write.")
  Path[] narrow;

  @Option(
      names = "--provider",
      defaultValue = "soft",
      description = "RDMA provider: soft, ibv or auto (default: ${DEFAULT-VALUE}).")
  String provider;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    InetSocketAddress address = address(target);
    AttackSuite.Target t;
    try {
      DeploymentTrust trust =
          DeploymentTrust.load(readable("--ca", ca), readable("--crl", crlFile()));
      t =
          new AttackSuite.Target(
              address,
              hostIdentity(),
              trust,
              credential("--attacker", attacker),
              region,
              credential("--victim", victim),
              victimRegion,
              narrow == null ? null : credential("--narrow", narrow),
              provider,
              null);
    } catch (KeyExchangeException e) {
      spec.commandLine().getErr().println("srdma attack-suite: " + Addresses.explain(e));
      return 2;
    }
    PrintWriter out = spec.commandLine().getOut();
    AttackSuite suite =
        new AttackSuite(
            t,
            r -> {
              out.printf(
                  "%s %s: expected %s, got %s%n",
                  Style.mark(r.mark(), 4),
                  r.what(),
                  r.expected(),
                  Addresses.withoutClassNames(r.observed()));
              out.flush();
            });
    try {
      suite.proveTarget();
    } catch (AttackSuite.TargetUnavailableException e) {
      spec.commandLine().getErr().println("srdma attack-suite: " + Addresses.explain(e));
      return 2;
    }
    Path scratch = Files.createTempDirectory("srdma-attack-suite");
    boolean ok;
    try {
      ok = suite.run(scratch);
    } finally {
      deleteTree(scratch);
    }
    out.println(
        ok ? "attack-suite: every outcome as expected" : "attack-suite: UNEXPECTED OUTCOMES");
    return ok ? 0 : 1;
  }

  private Path crlFile() {
    if (crl != null) {
      return crl;
    }
    Path beside = ca.toAbsolutePath().resolveSibling(DeploymentCa.CRL);
    if (!Files.isRegularFile(beside)) {
      throw new ParameterException(
          spec.commandLine(),
          "no CRL: give --crl, or put the deployment's "
              + DeploymentCa.CRL
              + " beside --ca ("
              + beside
              + " does not exist); the host's certificate is checked against it");
    }
    return beside;
  }

  private Path readable(String option, Path file) {
    if (!Files.isReadable(file)) {
      throw new ParameterException(
          spec.commandLine(),
          option + " " + file + ": " + (Files.exists(file) ? "permission denied" : "no such file"));
    }
    return file;
  }

  private static void deleteTree(Path root) throws java.io.IOException {
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private Credential credential(String option, Path[] pair) {
    if (pair.length != 2) {
      throw new ParameterException(spec.commandLine(), option + " takes CERT,KEY");
    }
    return Credential.load(readable(option, pair[0]), readable(option, pair[1]), null);
  }

  private PeerIdentity hostIdentity() {
    if (hostName == null) {
      return null;
    }
    try {
      return PeerIdentity.host(hostName);
    } catch (KeyExchangeException e) {
      throw new ParameterException(spec.commandLine(), "--host-name: " + Addresses.explain(e));
    }
  }

  private InetSocketAddress address(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    try {
      if (colon > 0) {
        int port = Integer.parseInt(hostPort.substring(colon + 1));
        if (port > 0 && port < 65536) {
          return new InetSocketAddress(hostPort.substring(0, colon), port);
        }
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new ParameterException(
        spec.commandLine(), "--target must be HOST:PORT with a port 1..65535, got " + hostPort);
  }
}
