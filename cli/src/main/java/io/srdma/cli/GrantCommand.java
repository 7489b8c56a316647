package io.srdma.cli;

import io.srdma.cluster.ClusterGrant;
import io.srdma.cluster.GrantDirectory;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code srdma grant}: the live grants of a clustered deployment (docs/cluster.md). */
@Command(
    name = "grant",
    mixinStandardHelpOptions = true,
    description = "List and revoke the live grants of a clustered deployment (docs/cluster.md).",
    subcommands = {GrantCommand.ListGrants.class, GrantCommand.Revoke.class})
public final class GrantCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /** {@code srdma grant list --cluster CONFIG}. */
  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "Every live grant of every host of the deployment (one etcd range read).")
  static final class ListGrants implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--cluster",
        required = true,
        paramLabel = "CONFIG",
        description = "A YAML file with the deployment's 'cluster:' section (e.g. serve.yaml).")
    Path cluster;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      return ClusterPolicyCommands.withLink(
          cluster,
          spec.commandLine().getErr(),
          link -> {
            List<ClusterGrant> all = GrantDirectory.list(link);
            out.printf(
                "%-16s %-8s %-28s %-16s %-22s %-11s %s%n",
                "HOST", "ID", "PEER", "REGION", "RANGE", "OPS", "EXPIRES");
            for (ClusterGrant g : all) {
              out.printf(
                  "%-16s %-8d %-28s %-16s %-22s %-11s %s%n",
                  g.host(),
                  g.grantId(),
                  g.peer(),
                  g.tenant() + "/" + g.region(),
                  "[" + g.offset() + ", +" + g.length() + ")",
                  g.ops(),
                  g.expiresAt());
            }
            out.printf("%d live grant(s)%n", all.size());
            out.flush();
            return 0;
          });
    }
  }

  /** {@code srdma grant revoke --cluster CONFIG HOST ID}. */
  @Command(
      name = "revoke",
      mixinStandardHelpOptions = true,
      description = {
        "Revoke a live grant on any host of the deployment: its etcd key is deleted and the host"
            + " that issued it revokes it within 1 s (window invalidated, holder told, audited)."
            + " Under etcd RBAC, CONFIG's certificate must be the operators'."
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {
        "0:revoked",
        "1:no such live grant is listed, or etcd refused the delete (RBAC: CONFIG's certificate"
            + " is not the operators')",
        "2:bad cluster configuration",
        "5:etcd did not answer"
      })
  static final class Revoke implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--cluster",
        required = true,
        paramLabel = "CONFIG",
        description = "A YAML file with the deployment's 'cluster:' section (e.g. serve.yaml).")
    Path cluster;

    @Parameters(index = "0", paramLabel = "HOST", description = "The host that issued it.")
    String host;

    @Parameters(index = "1", paramLabel = "ID", description = "The grant id, as 'grant list'.")
    long id;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      return ClusterPolicyCommands.withLink(
          cluster,
          err,
          link -> {
            if (!GrantDirectory.revoke(link, host, id)) {
              err.printf("no live grant %d of host %s is listed%n", id, host);
              err.flush();
              return 1;
            }
            out.printf("grant %d of %s revoked: its host revokes it within 1 s%n", id, host);
            out.flush();
            return 0;
          });
    }
  }
}
