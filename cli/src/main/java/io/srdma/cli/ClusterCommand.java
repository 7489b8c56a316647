package io.srdma.cli;

import io.srdma.cluster.AuditAnchor;
import io.srdma.cluster.ClusterException;
import io.srdma.cluster.ClusterRbac;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
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
    description =
        "Set up etcd access control for a clustered deployment, or drop a host's audit anchor"
            + " after a human decision (docs/cluster.md).",
    subcommands = {ClusterCommand.Rbac.class, ClusterCommand.AuditReset.class})
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

  /** {@code srdma cluster audit-reset --cluster CONFIG --host HOST --seq N --reason TEXT}. */
  @Command(
      name = "audit-reset",
      mixinStandardHelpOptions = true,
      description = {
        "Drop a host's audit anchor after a human decision. A host whose audit log no longer"
            + " holds the line anchored in etcd (cut or replaced while it was down) keeps that"
            + " anchor, reports DEGRADED and anchors nothing; once you have kept the evidence"
            + " ('srdma audit verify --cluster' reports the cut) and decided to go on with the"
            + " log as it is, this moves the anchor to PREFIX/hosts/HOST/audit-reset with the time"
            + " and your reason (only if it is still the anchor at --seq). The host then records"
            + " the reset in its audit log and anchors its current head.",
        "Example: srdma cluster audit-reset --cluster operator.yaml --host host-1 --seq 1042"
            + " --reason 'INC-17: log restored from backup'"
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {
        "0:the anchor was dropped",
        "1:no anchor, not at --seq, a bad reason, or etcd refused it",
        "2:bad cluster configuration",
        "4:the anchor changed meanwhile: nothing was reset",
        "5:etcd did not answer"
      })
  static final class AuditReset implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--cluster",
        required = true,
        paramLabel = "CONFIG",
        description = "A YAML file with the deployment's 'cluster:' section (the operator's).")
    Path cluster;

    @Option(
        names = "--host",
        required = true,
        paramLabel = "HOST",
        description = "The host whose anchor is dropped (its name in the cluster).")
    String host;

    @Option(
        names = "--seq",
        required = true,
        paramLabel = "N",
        description =
            "The sequence number of the anchor being dropped, as the host's error or 'srdma audit"
                + " verify --cluster' reported it.")
    long seq;

    @Option(
        names = "--reason",
        required = true,
        paramLabel = "TEXT",
        description =
            "Why (kept in etcd and in the host's audit log): printable ASCII, no quotes or"
                + " backslashes, at most 200 characters.")
    String reason;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      return ClusterPolicyCommands.withLink(
          cluster,
          err,
          link -> {
            AuditAnchor a = AuditAnchor.reset(link, host, seq, reason, Instant.now());
            out.printf(
                "%s: audit anchor of %s (seq %d, head %s, anchored %s) dropped; the host records"
                    + " the reset in its audit log and anchors its current head%n",
                link.keys().prefix(), host, a.seq(), a.head(), a.at());
            out.flush();
            return 0;
          });
    }
  }
}
