package io.srdma.cli;

import io.srdma.cluster.ClusterConfig;
import io.srdma.cluster.ClusterException;
import io.srdma.cluster.EtcdLink;
import io.srdma.cluster.HostPolicyState;
import io.srdma.cluster.PolicyPublisher;
import io.srdma.cluster.PolicyStatus;
import io.srdma.cluster.RevocationPublisher;
import io.srdma.keys.BoundedFileOpen;
import io.srdma.keys.DeploymentCa;
import io.srdma.policy.PolicyError;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.math.BigInteger;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The cluster side of {@code srdma policy} ({@code push}, {@code status}) and of {@code srdma cert
 * revoke --cluster}: docs/cluster.md. Kept apart from the single-host commands; those only register
 * these.
 */
final class ClusterPolicyCommands {
  /** Exit status when a compare-and-swap lost (someone else wrote first). */
  static final int EXIT_CONFLICT = 4;

  /** Exit status when etcd did not answer. */
  static final int EXIT_UNAVAILABLE = 5;

  /** The name of the threads that open the policy file to push. */
  static final String OPEN_THREAD_NAME = "srdma-policy-file-open";

  /** For tests: runs after the policy file's check and before its open. Null in production. */
  static volatile Consumer<Path> beforeOpen;

  // a link is followed (an operator may link the policy file); its target must be a regular file,
  // and a FIFO or another file swapped in after the check is refused, never waited on for ever
  private static final BoundedFileOpen OPEN =
      new BoundedFileOpen(
          OPEN_THREAD_NAME, BoundedFileOpen.Refusals.worded(), () -> beforeOpen, () -> null);

  private ClusterPolicyCommands() {}

  /** {@code srdma policy push FILE --cluster CONFIG --ca DIR}. */
  @Command(
      name = "push",
      mixinStandardHelpOptions = true,
      description = {
        "Validate a policy file exactly like 'policy check', sign it with the deployment CA's"
            + " key (over the exact bytes, a serial above the one in etcd and the deployment's"
            + " prefix), then write it to the deployment's etcd with a compare-and-swap on the"
            + " revision read: every host checks the signature against the CA it trusts, applies"
            + " it (atomically, audited) and reports the hash it runs (see 'policy status')."
            + " Hosts refuse an unsigned, badly signed, other deployment's or older policy and keep"
            + " the one in force.",
        "Example: srdma policy push policy.yaml --cluster serve.yaml --ca ca"
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {
        "0:pushed (or etcd already held this exact file, validly signed)",
        "1:the file has errors (nothing was sent) or could not be read, no CA in --ca DIR, or the"
            + " CA key could not be used; or etcd refused the write (RBAC: CONFIG's certificate is"
            + " not the operators')",
        "2:bad cluster configuration",
        "4:another push won (or --if-revision did not match); nothing was written",
        "5:etcd did not answer"
      })
  static final class Push implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "FILE", description = "The policy file (YAML).")
    Path file;

    @Option(
        names = "--cluster",
        required = true,
        paramLabel = "CONFIG",
        description = "A YAML file with the deployment's 'cluster:' section (e.g. serve.yaml).")
    Path cluster;

    @Option(
        names = "--if-revision",
        paramLabel = "N",
        description =
            "Push only if the deployment's policy is at this etcd revision now (0: none yet), as"
                + " 'policy status' showed it.")
    Long ifRevision;

    @Option(
        names = "--ca",
        required = true,
        paramLabel = "DIR",
        description = "The deployment CA's directory; its key signs the policy.")
    Path ca;

    @Option(
        names = "--ca-passphrase-file",
        paramLabel = "FILE",
        description = "The passphrase of ca.key, first line of FILE.")
    Path caPassphraseFile;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      byte[] text;
      // at most one byte over the loader's limit: the loader then refuses it by its size, and a
      // file that grows (or never ends) is never read whole
      try (FileChannel ch = OPEN.read(file, BoundedFileOpen.Links.FOLLOW, null);
          InputStream in = Channels.newInputStream(ch)) {
        text = in.readNBytes((int) PolicyLoader.DEFAULT_MAX_FILE_BYTES + 1);
      } catch (BoundedFileOpen.Refused e) {
        err.println(file + ": " + e.getMessage() + "; nothing was sent");
        err.flush();
        return 1;
      } catch (IOException e) {
        err.println(file + ": cannot read: " + e.getMessage());
        err.flush();
        return 1;
      }
      return KeyCommands.run(spec, () -> push(text, out, err));
    }

    private int push(byte[] text, PrintWriter out, PrintWriter err) {
      char[] caPass = KeyCommands.readPassphrase(caPassphraseFile);
      DeploymentCa authority;
      try {
        authority = DeploymentCa.open(ca, caPass);
      } finally {
        KeyCommands.wipe(caPass);
      }
      return withLink(
          cluster,
          err,
          link -> {
            try {
              PolicyPublisher.Pushed p =
                  PolicyPublisher.push(
                      link,
                      file.toString(),
                      text,
                      new PolicyLoader(),
                      ifRevision == null ? OptionalLong.empty() : OptionalLong.of(ifRevision),
                      authority);
              if (p.changed()) {
                out.printf(
                    "%s: pushed, signed serial %d, sha256 %s, revision %d (was %d)%n",
                    file, p.serial(), p.sha256(), p.revision(), p.previousRevision());
              } else {
                out.printf(
                    "%s: unchanged, sha256 %s, revision %d%n", file, p.sha256(), p.revision());
              }
              out.flush();
              return 0;
            } catch (PolicyRejectedException e) {
              for (PolicyError error : e.errors()) {
                err.println(error);
              }
              err.printf("%s: %d error(s); nothing was pushed%n", file, e.errors().size());
              err.flush();
              return 1;
            } catch (PolicyException e) {
              err.println(file + ": " + e.getMessage());
              err.flush();
              return 1;
            }
          });
    }
  }

  /** {@code srdma policy status --cluster CONFIG}. */
  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description = {
        "Show the deployment's pushed policy and, for each host, the policy hash it runs and when"
            + " it applied it."
      })
  static final class Status implements Callable<Integer> {
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
      return withLink(
          cluster,
          spec.commandLine().getErr(),
          link -> {
            PolicyStatus.View v = PolicyStatus.read(link);
            if (v.sha256() == null) {
              out.println("deployment policy: none pushed yet (hosts run their local file)");
            } else {
              out.printf("deployment policy: sha256 %s, revision %d%n", v.sha256(), v.revision());
            }
            out.printf(
                "%-24s %-12s %-9s %-24s %-8s %s%n",
                "HOST", "SHA256", "REVISION", "APPLIED", "REFUSED", "");
            for (HostPolicyState h : v.hosts()) {
              String note =
                  h.degraded()
                      ? "etcd unreachable at last report"
                      : v.sha256() != null && !v.sha256().equals(h.sha256())
                          ? "DIFFERS from the deployment policy"
                          : "";
              if (h.lastRefusal() != null) {
                // a refused push (unsigned, foreign deployment, other CA, rollback) is an alarm
                note =
                    (note.isEmpty() ? "" : note + "; ")
                        + "last refused: "
                        + h.lastRefusal().reason().label()
                        + " serial "
                        + h.lastRefusal().serial()
                        + " at "
                        + h.lastRefusal().at();
              }
              out.printf(
                  "%-24s %-12s %-9d %-24s %-8d %s%n",
                  h.host(),
                  h.sha256().substring(0, 12),
                  h.revision(),
                  h.applied(),
                  h.refusals(),
                  note);
            }
            out.flush();
            return 0;
          });
    }
  }

  /**
   * Publishes the CA's revocation list to the deployment's etcd ({@code cert revoke --cluster}).
   *
   * @return the exit status
   */
  static int publishRevocation(
      Path cluster,
      X509CRL crl,
      X509Certificate ca,
      List<BigInteger> revoked,
      PrintWriter out,
      PrintWriter err) {
    return withLink(
        cluster,
        err,
        link -> {
          RevocationPublisher.Published p = RevocationPublisher.publish(link, crl, revoked, ca);
          out.printf(
              p.changed()
                  ? "published revocation list number %s to the cluster (revision %d): every host"
                      + " refuses the serial and ends its sessions within 1 s%n"
                  : "the cluster already holds revocation list number %s (revision %d)%n",
              p.number(),
              p.revision());
          out.flush();
          return 0;
        });
  }

  interface LinkBody {
    int run(EtcdLink link);
  }

  static int withLink(Path configFile, PrintWriter err, LinkBody body) {
    ClusterConfig config;
    try {
      config = ClusterConfig.read(configFile);
    } catch (ClusterException e) {
      for (String line : ClusterConfig.errors(e)) {
        err.println(line);
      }
      err.flush();
      return KeyCommands.EXIT_USAGE;
    }
    try (EtcdLink link = EtcdLink.open(config)) {
      return body.run(link);
    } catch (ClusterException e) {
      err.println("srdma: " + e.getMessage());
      err.flush();
      return switch (e.reason()) {
        case CONFLICT -> EXIT_CONFLICT;
        case UNAVAILABLE, INTERRUPTED -> EXIT_UNAVAILABLE;
        case BAD_CONFIG -> KeyCommands.EXIT_USAGE;
        default -> KeyCommands.EXIT_FAILED;
      };
    }
  }
}
