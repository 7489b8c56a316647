package io.srdma.cli;

import io.srdma.policy.Decision;
import io.srdma.policy.GrantAuthority;
import io.srdma.policy.Operation;
import io.srdma.policy.PeerEntry;
import io.srdma.policy.PeerIdentity;
import io.srdma.policy.Policy;
import io.srdma.policy.PolicyError;
import io.srdma.policy.PolicyException;
import io.srdma.policy.PolicyLoader;
import io.srdma.policy.PolicyRejectedException;
import io.srdma.policy.Role;
import io.srdma.policy.Tenant;
import io.srdma.policy.Units;
import io.srdma.server.Addresses;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code srdma policy}: validate policy files and explain grant decisions. */
@Command(
    name = "policy",
    mixinStandardHelpOptions = true,
    description = "Validate access policy files and explain grant decisions.",
    subcommands = {
      PolicyCommand.Check.class,
      PolicyCommand.Explain.class,
      PolicyCommand.HashPassword.class,
      // clustered deployments (docs/cluster.md)
      ClusterPolicyCommands.Push.class,
      ClusterPolicyCommands.Status.class
    })
public final class PolicyCommand implements Runnable {
  /** Exit status of {@code explain} when the request is denied. */
  public static final int EXIT_DENIED = 3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand");
  }

  /** Loads a policy, printing every error; null if it is invalid or unreadable. */
  static Policy load(Path file, CommandLine cmd) {
    PrintWriter err = cmd.getErr();
    try {
      return new PolicyLoader().load(file);
    } catch (PolicyRejectedException e) {
      for (PolicyError error : e.errors()) {
        err.println(error);
      }
      err.println(
          e.errors().size() + (e.errors().size() == 1 ? " error" : " errors") + " in " + file);
    } catch (PolicyException e) {
      // e.g. "cannot read policy file x.yaml: no such file or directory", no Java class names
      err.println(cmd.getCommandSpec().qualifiedName(" ") + ": " + Addresses.explain(e));
    }
    err.flush();
    return null;
  }

  /** {@code srdma policy check FILE}: exit 0 if valid, 1 listing every error. */
  @Command(
      name = "check",
      mixinStandardHelpOptions = true,
      description = {
        "Validate a policy file. Exit 0 if valid; 1 with every error as FILE:LINE:COLUMN: reason."
      })
  static final class Check implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "FILE", description = "The policy file (YAML).")
    Path file;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      Policy p = load(file, spec.commandLine());
      if (p == null) {
        return 1;
      }
      int roles = p.tenants().values().stream().mapToInt(t -> t.roles().size()).sum();
      int peers = p.tenants().values().stream().mapToInt(t -> t.peers().size()).sum();
      out.printf(
          "%s: OK, %d tenants, %d roles, %d peer entries, %d console users, sha256 %s%n",
          file, p.tenants().size(), roles, peers, p.consoleUsers().size(), p.sha256());
      out.flush();
      return 0;
    }
  }

  /** {@code srdma policy explain}: the decision and the role and permission behind it. */
  @Command(
      name = "explain",
      mixinStandardHelpOptions = true,
      description = {
        "Show how a policy decides a grant request, and which role and permission decide it.",
        "Exit 0 if allowed, " + EXIT_DENIED + " if denied, 1 if the file is invalid."
      })
  static final class Explain implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "FILE", description = "The policy file (YAML).")
    Path file;

    @Option(
        names = "--peer",
        required = true,
        paramLabel = "URI",
        description = "Peer identity, e.g. srdma://acme/trainer-1.")
    String peer;

    @Option(names = "--region", required = true, paramLabel = "NAME", description = "Region.")
    String region;

    @Option(
        names = "--op",
        required = true,
        split = ",",
        paramLabel = "OP",
        description = "Operations: read, write (comma-separated or repeated).")
    List<Operation> ops;

    @Option(
        names = "--bytes",
        defaultValue = "1",
        paramLabel = "SIZE",
        description =
            "Length wanted, e.g. 4096, 16MiB or 10MB; see docs/units.md (default:"
                + " ${DEFAULT-VALUE}).")
    String bytes;

    @Option(
        names = "--offset",
        defaultValue = "0",
        paramLabel = "N",
        description = "First byte (default: ${DEFAULT-VALUE}).")
    long offset;

    @Option(
        names = "--ttl",
        defaultValue = "1m",
        paramLabel = "DURATION",
        description = "Lifetime wanted, e.g. 30s, 10m (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(
        names = "--tenant",
        paramLabel = "NAME",
        description = "Tenant whose region is asked for (default: the peer's own tenant).")
    String tenant;

    @Override
    public Integer call() {
      CommandLine cmd = spec.commandLine();
      OptionalLong length = Units.parseSize(bytes);
      if (length.isEmpty()) {
        throw new CommandLine.ParameterException(cmd, "--bytes: " + Units.sizeProblem(bytes));
      }
      Duration lifetime = Units.parseDuration(ttl);
      if (lifetime == null) {
        throw new CommandLine.ParameterException(
            cmd, "--ttl: not a duration (1ms to 36500d, e.g. 10m): " + ttl);
      }
      String t = tenant != null ? tenant : PeerIdentity.tenantOf(peer);
      if (t == null) {
        throw new CommandLine.ParameterException(
            cmd, "--peer: not srdma://<tenant>/<peer>: " + peer);
      }
      Policy p = load(file, cmd);
      if (p == null) {
        return 1;
      }
      Decision d =
          new GrantAuthority(p)
              .decide(peer, t, region, EnumSet.copyOf(ops), offset, length.getAsLong(), lifetime);
      PrintWriter out = cmd.getOut();
      out.println("decision:   " + (d.allowed() ? "ALLOW" : "DENY " + d.reason()));
      out.printf(
          "request:    %s %s on %s/%s [%d, +%d) ttl %s%n",
          peer, opNames(d), t, region, offset, length.getAsLong(), lifetime);
      Tenant tenantOf = p.tenants().get(t);
      PeerEntry entry =
          tenantOf == null || !PeerIdentity.belongsTo(peer, t) ? null : tenantOf.peerFor(peer);
      if (entry != null) {
        out.println(
            "peer entry: "
                + entry.pattern()
                + " -> roles "
                + entry.roles().stream().map(Role::name).collect(Collectors.joining(", ")));
      }
      if (d.role() != null) {
        out.println("role:       " + t + "/" + d.role());
      }
      if (d.permission() != null) {
        out.println("permission: " + d.permission());
      }
      if (d.effectiveTtl() != null) {
        out.println("ttl:        " + d.effectiveTtl() + " (effective)");
      }
      out.println("why:        " + d.detail());
      out.flush();
      return d.allowed() ? 0 : EXIT_DENIED;
    }

    private static String opNames(Decision d) {
      return d.operations().stream()
          .sorted()
          .map(Operation::token)
          .collect(Collectors.joining(","));
    }
  }

  /** {@code srdma policy hash-password}: a {@code password-hash} for a console user. */
  @Command(
      name = "hash-password",
      mixinStandardHelpOptions = true,
      description = {
        "Print a Shiro 2 hash (Argon2id, or bcrypt) of a password for a console user's"
            + " password-hash.",
        "Reads the password from the terminal without echo, else one line from standard input."
      })
  static final class HashPassword implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--bcrypt", description = "bcrypt ($shiro2$2y$) instead of Argon2id.")
    boolean bcrypt;

    /**
     * The console when it is an interactive terminal, else null (read the password from stdin).
     * From JDK 22 on, {@code System.console()} is not null when the streams are redirected; there
     * {@code Console.isTerminal()} (JDK 22+, hence reflection on a release-17 build) tells.
     */
    // the null check is the pre-22 answer; from 22 on isTerminal() decides, as the check asks
    @SuppressWarnings("SystemConsoleNull")
    static java.io.Console terminal() {
      java.io.Console console = System.console();
      if (console == null) {
        return null;
      }
      try {
        Object terminal = java.io.Console.class.getMethod("isTerminal").invoke(console);
        return Boolean.TRUE.equals(terminal) ? console : null;
      } catch (NoSuchMethodException e) {
        return console; // before JDK 22 a console exists only for a terminal
      } catch (ReflectiveOperationException e) {
        return null;
      }
    }

    @Override
    public Integer call() throws java.io.IOException {
      char[] password;
      java.io.Console console = terminal();
      if (console != null) {
        password = console.readPassword("password: ");
        char[] again = console.readPassword("again: ");
        boolean same = password != null && java.util.Arrays.equals(password, again);
        if (again != null) {
          java.util.Arrays.fill(again, '\0');
        }
        if (!same) {
          spec.commandLine().getErr().println("passwords differ");
          return 1;
        }
      } else {
        var in =
            new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
        String line = in.readLine();
        password = line == null ? null : line.toCharArray();
      }
      if (password == null || password.length == 0) {
        spec.commandLine().getErr().println("empty password");
        return 1;
      }
      spec.commandLine()
          .getOut()
          .println(io.srdma.policy.ConsoleUsers.hashPassword(password, bcrypt));
      spec.commandLine().getOut().flush();
      return 0;
    }
  }
}
