package io.srdma.cli;

import io.srdma.host.RegionHost;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.Pem;
import io.srdma.policy.AuditCheckpointTrust;
import io.srdma.policy.AuditKey;
import io.srdma.policy.AuditVerification;
import io.srdma.policy.AuditVerifier;
import io.srdma.policy.PolicyException;
import io.srdma.server.Addresses;
import java.nio.file.Path;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code srdma audit}: check audit logs. */
@Command(
    name = "audit",
    mixinStandardHelpOptions = true,
    description = "Check keyed, checkpointed audit logs (docs/audit.md).",
    subcommands = {AuditCommand.Verify.class})
public final class AuditCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /** {@code srdma audit verify FILE...}: see the exit codes in the help. */
  @Command(
      name = "verify",
      mixinStandardHelpOptions = true,
      description = {
        "Verify audit log files (the active file and its rotated files, any order): every line a"
            + " record, every file starting with its genesis line, sequence and chain links"
            + " unbroken; with --key each line's HMAC; with --ca each checkpoint's signature,"
            + " signer and the lines it covers.",
        "Without --key and --ca only the structure is checked: anyone who can write the files"
            + " can rebuild it.",
        "--head and --cluster need --key: without it the recorded head is compared with text"
            + " anyone who can write the files can copy. With --ca instead of --key they are"
            + " accepted only if checkpoints signed by a host of the CA cover every line through"
            + " the head's line; otherwise exit 2."
      },
      exitCodeListHeading = "Exit codes:%n",
      exitCodeList = {
        "0:intact (the summary says what was checked)",
        "1:a problem was found: FILE:LINE: <finding>: <what>, where <finding> is edited,"
            + " deleted, reordered, truncated, head removed, not a record, wrong key,"
            + " bad checkpoint or empty",
        "2:usage error (e.g. a malformed --head, or --head/--cluster without --key whose head"
            + " no checkpoint verified under --ca covers)",
        "3:could not check: a log, key, CA or CRL file unreadable or malformed, or a log file"
            + " that is not a regular file (a FIFO, a device)"
      })
  static final class Verify implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "FILE", arity = "1..*", description = "Audit log files.")
    List<Path> files;

    @Option(
        names = "--key",
        paramLabel = "FILE",
        description = "The audit key file (audit.key beside audit.log): checks every line's MAC.")
    Path key;

    @Option(
        names = "--ca",
        paramLabel = "FILE",
        description = "The deployment CA certificate: checks the checkpoints' signers.")
    Path ca;

    @Option(
        names = "--crl",
        paramLabel = "FILE",
        description = "The CA's revocation list (with --ca): refuses checkpoints of revoked hosts.")
    Path crl;

    @Option(
        names = "--head",
        paramLabel = "[SEQ:]MAC",
        description =
            "A head recorded elsewhere (the 'head' of an earlier verify, or AuditLog.head()): it"
                + " must be in the chain. Detects lines cut from the end and a replaced log; a log"
                + " that grew since is fine. Needs --key (or --ca with checkpoints covering the"
                + " head's line).")
    String head;

    @Option(
        names = "--cluster",
        paramLabel = "CONFIG",
        description =
            "Take the head from the deployment's etcd (a YAML file with its 'cluster:' section,"
                + " docs/cluster.md): the audit head --cluster-host anchored there last. Needs"
                + " --key, as --head does.")
    Path cluster;

    @Option(
        names = "--cluster-host",
        paramLabel = "HOST",
        description = "With --cluster: the host whose log this is (its name in the cluster).")
    String clusterHost;

    @Option(
        names = "--closed",
        description =
            "The writer has stopped: the log must end with its close checkpoint (detects a cut"
                + " tail without --head).")
    boolean closed;

    @Override
    public Integer call() {
      CommandLine cmd = spec.commandLine();
      AuditVerifier.Head expected;
      try {
        expected = head == null ? null : AuditVerifier.Head.parse(head);
      } catch (PolicyException e) {
        throw new CommandLine.ParameterException(cmd, "--head: " + Addresses.explain(e));
      }
      if ((cluster == null) != (clusterHost == null)) {
        throw new CommandLine.ParameterException(cmd, "--cluster and --cluster-host go together");
      }
      if ((head != null || cluster != null) && key == null && ca == null) {
        throw new CommandLine.ParameterException(
            cmd,
            (cluster != null ? "--cluster" : "--head")
                + " needs --key (the audit key file): without it the recorded head is compared with"
                + " a MAC that anyone who can write the files can copy onto a forged chain, so a"
                + " match shows nothing (or --ca, if checkpoints signed by a host of the CA cover"
                + " the head's line)");
      }
      if (cluster != null) {
        if (head != null) {
          throw new CommandLine.ParameterException(cmd, "--head or --cluster, not both");
        }
        String[] anchored = new String[1];
        int status =
            ClusterPolicyCommands.withLink(
                cluster,
                cmd.getErr(),
                link -> {
                  io.srdma.cluster.AuditAnchor a =
                      io.srdma.cluster.AuditAnchor.read(link, clusterHost);
                  if (a == null) {
                    cmd.getErr()
                        .println("no audit head of host " + clusterHost + " in the cluster");
                    cmd.getErr().flush();
                    return 3;
                  }
                  anchored[0] = a.head();
                  return 0;
                });
        if (status != 0) {
          return status == KeyCommands.EXIT_USAGE ? 2 : 3;
        }
        expected = AuditVerifier.Head.parse(anchored[0]);
      }
      if (crl != null && ca == null) {
        throw new CommandLine.ParameterException(cmd, "--crl needs --ca");
      }
      AuditCheckpointTrust trust;
      try {
        trust = trust();
      } catch (KeyExchangeException | PolicyException e) {
        return fail(cmd, "srdma audit verify: " + Addresses.explain(e), 3);
      }
      AuditVerification v;
      try (AuditKey k = key == null ? null : AuditKey.load(key)) {
        v = new AuditVerifier(k, trust).verify(files, expected, closed);
      } catch (AuditVerifier.UnprovenHead e) {
        throw new CommandLine.ParameterException(
            cmd,
            (cluster != null ? "--cluster" : "--head")
                + " needs --key here: "
                + e.getMessage()
                + " (give --key, the audit key file)");
      } catch (PolicyException e) {
        return fail(cmd, "srdma audit verify: " + Addresses.explain(e), 3);
      }
      if (v.intact()) {
        cmd.getOut().println(v.summary());
        cmd.getOut().flush();
        return 0;
      }
      return fail(cmd, v.summary(), 1);
    }

    private AuditCheckpointTrust trust() {
      if (ca == null) {
        return null;
      }
      X509Certificate caCert = Pem.readCertificate(ca);
      X509CRL list = crl == null ? null : Pem.readCrl(crl);
      return AuditCheckpointTrust.issuedBy(caCert, list, "srdma://" + RegionHost.HOST_TENANT + "/");
    }

    /** Prints {@code message} (a summary is escaped already; escaping again changes nothing). */
    private static int fail(CommandLine cmd, String message, int code) {
      // file names and CA subjects in it are chosen by whoever wrote the files
      cmd.getErr().println(io.srdma.policy.Printable.escape(message));
      cmd.getErr().flush();
      return code;
    }
  }
}
