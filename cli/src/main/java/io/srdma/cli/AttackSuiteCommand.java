package io.srdma.cli;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.PeerIdentity;
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
      "attacker's tenant whose role may not write (--narrow). Record attacks are sent; their",
      "verdict (REPLAYED, AUTH_FAILED, TRUNCATED) is the host's, in its audit log. Exit 0 when",
      "every outcome seen from here is the expected one, 1 otherwise, 2 on bad options."
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

  @Option(names = "--crl", description = "The deployment's CRL (PEM), if any.")
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
    DeploymentTrust trust = DeploymentTrust.load(ca, crl);
    AttackSuite.Target t =
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
    PrintWriter out = spec.commandLine().getOut();
    Path scratch = Files.createTempDirectory("srdma-attack-suite");
    boolean ok =
        new AttackSuite(
                t,
                r -> {
                  out.printf(
                      "%-4s %s: expected %s, got %s%n",
                      r.ok() ? "ok" : "FAIL", r.what(), r.expected(), r.observed());
                  out.flush();
                })
            .run(scratch);
    out.println(
        ok ? "attack-suite: every outcome as expected" : "attack-suite: UNEXPECTED OUTCOMES");
    return ok ? 0 : 1;
  }

  private Credential credential(String option, Path[] pair) {
    if (pair.length != 2) {
      throw new ParameterException(spec.commandLine(), option + " takes CERT,KEY");
    }
    return Credential.load(pair[0], pair[1], null);
  }

  private PeerIdentity hostIdentity() {
    if (hostName == null) {
      return null;
    }
    try {
      return PeerIdentity.host(hostName);
    } catch (KeyExchangeException e) {
      throw new ParameterException(spec.commandLine(), "--host-name: " + e.getMessage());
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
