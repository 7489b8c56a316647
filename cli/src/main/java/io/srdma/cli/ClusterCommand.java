package io.srdma.cli;

import io.srdma.cluster.ClusterException;
import io.srdma.cluster.ClusterRbac;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code srdma cluster}: setting up a clustered deployment's etcd (docs/cluster.md). */
@Command(
    name = "cluster",
    mixinStandardHelpOptions = true,
    description = "Set up etcd access control for a clustered deployment (docs/cluster.md).",
    subcommands = {ClusterCommand.Rbac.class})
public final class ClusterCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /** {@code srdma cluster rbac --cluster CONFIG --operator CN --hosts H[=CN],...}. */
  @Command(
      name = "rbac",
      mixinStandardHelpOptions = true,
      description = {
        "Create or update the etcd roles and users of the deployment's prefix: each host's user"
            + " (its etcd certificate's CN) reads the prefix and writes only its own keys; the"
            + " operator's user reads and writes the whole prefix. Idempotent: run it again after"
            + " adding a host. With auth on, CONFIG's certificate must have CN root.",
        "Example: srdma cluster rbac --cluster operator.yaml --operator operator"
            + " --hosts host-1,host-2 --enable-auth"
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {
        "0:applied (or nothing to change)",
        "1:etcd refused it (auth is on and CONFIG's certificate is not etcd's root user)",
        "2:bad cluster configuration or a bad host or user name",
        "5:etcd did not answer"
      })
  static final class Rbac implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--cluster",
        required = true,
        paramLabel = "CONFIG",
        description = "A YAML file with the deployment's 'cluster:' section (its prefix is used).")
    Path cluster;

    @Option(
        names = "--operator",
        required = true,
        paramLabel = "CN",
        description = "The CN of the operators' etcd certificate (policy push, cert/grant revoke).")
    String operator;

    @Option(
        names = "--hosts",
        required = true,
        split = ",",
        paramLabel = "HOST[=CN]",
        description =
            "The deployment's hosts (cluster.host), each with its certificate's CN"
                + " (default: the host name).")
    List<String> hosts;

    @Option(
        names = "--enable-auth",
        description = "Also create etcd's root user (role root) if missing and turn auth on.")
    boolean enableAuth;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      List<ClusterRbac.HostUser> users = new ArrayList<>();
      try {
        for (String h : hosts) {
          int eq = h.indexOf('=');
          users.add(
              eq < 0
                  ? new ClusterRbac.HostUser(h, h)
                  : new ClusterRbac.HostUser(h.substring(0, eq), h.substring(eq + 1)));
        }
      } catch (ClusterException e) {
        err.println("srdma: --hosts: " + e.getMessage());
        err.flush();
        return KeyCommands.EXIT_USAGE;
      }
      return ClusterPolicyCommands.withLink(
          cluster,
          err,
          link -> {
            ClusterRbac.Result r = ClusterRbac.apply(link, operator, users, enableAuth);
            for (String c : r.changes()) {
              out.println(c);
            }
            out.printf(
                "%s: roles of %d host(s) and the operator %s%s%n",
                link.keys().prefix(),
                users.size(),
                r.changes().isEmpty() ? "unchanged" : "applied",
                r.authEnabled() ? "; auth is on" : "");
            out.flush();
            return 0;
          });
    }
  }
}
