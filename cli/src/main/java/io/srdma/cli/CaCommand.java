package io.srdma.cli;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeyExchangeException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code srdma ca}: create and maintain the deployment's certificate authority. */
@Command(
    name = "ca",
    mixinStandardHelpOptions = true,
    description = "Create and maintain the deployment certificate authority (ECDSA P-256).",
    subcommands = {CaCommand.Init.class, CaCommand.Renew.class, CaCommand.Crl.class})
public final class CaCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /** {@code srdma ca init --dir DIR}. */
  @Command(
      name = "init",
      mixinStandardHelpOptions = true,
      description = {
        "Create a deployment CA in DIR: ca.crt (give to every peer), ca.key (owner-only),"
            + " crl.pem (give to every peer) and issued.txt.",
        "Refuses to touch a directory that already holds a CA."
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {"0:created", "1:failed (message on stderr)", "2:bad arguments"})
  static final class Init implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "CA directory.")
    Path dir;

    @Option(
        names = "--passphrase-file",
        paramLabel = "FILE",
        description = "Encrypt ca.key with the passphrase in the first line of FILE.")
    Path passphraseFile;

    @Override
    public Integer call() {
      return KeyCommands.run(
          spec,
          () -> {
            char[] pass = KeyCommands.readPassphrase(passphraseFile);
            try {
              DeploymentCa ca = DeploymentCa.init(dir, pass);
              PrintWriter out = spec.commandLine().getOut();
              out.printf(
                  "created deployment CA '%s' in %s%n",
                  ca.certificate().getSubjectX500Principal().getName(), dir);
              out.printf("  %s  give to every peer%n", dir.resolve(DeploymentCa.CA_CERTIFICATE));
              out.printf(
                  "  %s  keep secret (owner-only%s)%n",
                  dir.resolve(DeploymentCa.CA_KEY), pass == null ? "" : ", encrypted");
              out.printf("  %s  give to every peer%n", dir.resolve(DeploymentCa.CRL));
              out.printf(
                  "  sha256 %s%n",
                  HexFormat.ofDelimiter(":")
                      .withUpperCase()
                      .formatHex(KeyCommands.sha256(ca.certificate())));
              out.flush();
              return 0;
            } finally {
              KeyCommands.wipe(pass);
            }
          });
    }
  }

  /**
   * {@code srdma ca renew --dir DIR [--days N]}: the CA certificate again, same key and subject,
   * new validity; every certificate issued since renewal existed keeps verifying (docs/keys.md).
   */
  @Command(
      name = "renew",
      mixinStandardHelpOptions = true,
      description = {
        "Renew the CA certificate before it ends (srdma serve warns 30 days ahead): the same key"
            + " and subject, a new serial and a validity of N days from now. Certificates and"
            + " CRLs the CA made since srdma ca renew exists keep verifying; older ones name the"
            + " old serial and must be re-issued first (docs/keys.md).",
        "Replaces DIR/ca.crt atomically (never half-written); ca.key, crl.pem and issued.txt are"
            + " not touched. Refuses if ca.key is not the key of ca.crt. An expired CA can be"
            + " renewed too.",
        "Then give the new ca.crt to every peer and restart the hosts (ca.crt is read at"
            + " start): a peer holding the old one refuses everyone once the old one ends."
      },
      exitCodeListHeading = "%nExit status:%n",
      exitCodeList = {"0:renewed", "1:failed (message on stderr)", "2:bad arguments"})
  static final class Renew implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "CA directory.")
    Path dir;

    @Option(
        names = "--days",
        defaultValue = "3650",
        paramLabel = "N",
        description =
            "Validity of the renewed CA certificate in days, 1 to 3650 (default"
                + " ${DEFAULT-VALUE}).")
    int days;

    @Option(
        names = "--passphrase-file",
        paramLabel = "FILE",
        description = "The passphrase of ca.key, first line of FILE.")
    Path passphraseFile;

    @Override
    public Integer call() {
      return KeyCommands.run(
          spec,
          () -> {
            if (days < 1 || days > DeploymentCa.CA_VALIDITY.toDays()) {
              throw new KeyExchangeException(
                  KeyExchangeException.Reason.BAD_ARGUMENT,
                  "--days must be 1 to " + DeploymentCa.CA_VALIDITY.toDays());
            }
            char[] pass = KeyCommands.readPassphrase(passphraseFile);
            try {
              DeploymentCa ca = DeploymentCa.open(dir, pass);
              java.time.Instant wasUntil = ca.certificate().getNotAfter().toInstant();
              DeploymentCa renewed = ca.renew(java.time.Duration.ofDays(days));
              PrintWriter out = spec.commandLine().getOut();
              out.printf(
                  "renewed deployment CA '%s' in %s: serial %s, valid until %s (was %s)%n",
                  renewed.certificate().getSubjectX500Principal().getName(),
                  dir,
                  renewed.certificate().getSerialNumber().toString(16),
                  renewed.certificate().getNotAfter().toInstant(),
                  wasUntil);
              out.printf(
                  "  %s  give to every peer again, then restart the hosts%n",
                  dir.resolve(DeploymentCa.CA_CERTIFICATE));
              out.printf(
                  "  sha256 %s%n",
                  HexFormat.ofDelimiter(":")
                      .withUpperCase()
                      .formatHex(KeyCommands.sha256(renewed.certificate())));
              out.flush();
              return 0;
            } finally {
              KeyCommands.wipe(pass);
            }
          });
    }
  }

  /** {@code srdma ca crl --dir DIR}: publish the revocation list again before it expires. */
  @Command(
      name = "crl",
      mixinStandardHelpOptions = true,
      description =
          "Publish the revocation list again with a fresh validity (a list is valid for "
              + "365 days; peers refuse all certificates once it expires).")
  static final class Crl implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--dir", required = true, paramLabel = "DIR", description = "CA directory.")
    Path dir;

    @Option(
        names = "--passphrase-file",
        paramLabel = "FILE",
        description = "The passphrase of ca.key, first line of FILE.")
    Path passphraseFile;

    @Override
    public Integer call() {
      return KeyCommands.run(
          spec,
          () -> {
            char[] pass = KeyCommands.readPassphrase(passphraseFile);
            try {
              DeploymentCa ca = DeploymentCa.open(dir, pass);
              ca.republishCrl();
              spec.commandLine()
                  .getOut()
                  .printf(
                      "published %s, valid until %s%n",
                      dir.resolve(DeploymentCa.CRL), ca.crl().getNextUpdate().toInstant());
              spec.commandLine().getOut().flush();
              return 0;
            } finally {
              KeyCommands.wipe(pass);
            }
          });
    }
  }
}
