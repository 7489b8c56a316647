package io.srdma.cli.bench;

import io.srdma.bench.transport.LoadConfig;
import io.srdma.bench.transport.Payload;
import io.srdma.bench.transport.Progress;
import io.srdma.bench.transport.Transports;
import io.srdma.channel.record.AeadException;
import io.srdma.channel.record.AeadSelection;
import io.srdma.cli.SizeConverter;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code srdma bench}: the end-to-end benchmark. Moves messages between two endpoints in this JVM
 * over loopback with every selected transport and prints, per message size, delivered throughput,
 * sender write-completion throughput, one-way latency percentiles, CPU per GB and context switches
 * per message, with ratios against the {@code tls-jdk} and {@code plain-write} baselines.
 *
 * <p>This class is the command line: its options (those of {@code --load} in {@link LoadOptions})
 * and which mode runs. {@link Comparison} checks the comparison's options, {@link BenchRounds} runs
 * it, {@link BenchHeadline} and {@link BenchJson} describe a run, {@link LoadBench} runs {@code
 * --load}.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    description = {
      "End-to-end benchmark: secure RDMA against TLS and plain RDMA, on loopback in one JVM.",
      "",
      "For each message size and transport: a warm-up, a throughput run (messages stream from a"
          + " sender to a receiver; a message counts when the receiver has all of it, decrypted),"
          + " then a latency run (one message at a time; one-way time from send start to the"
          + " receiver having it, the receiver's ack only paces the run).",
      "Transports: tls-jdk (JDK SSLSocket, TLS 1.3, mutual auth), tls-netty (Netty + BoringSSL),"
          + " plain-write (plaintext RDMA WRITE_WITH_IMM on --provider).",
      "Tables go to stdout (Markdown), progress to stderr. See docs/bench.md.",
      "",
      "--load runs a bounded load test of the sealed channel instead: --sessions clients over"
          + " --tenants tenants holding --grants live grants write for --duration (default 60s,"
          + " after --warmup, default 5s) while grants are revoked and clients rekey; prints"
          + " throughput, write latency, memory, descriptors, threads and errors by kind, and per"
          + " side (host, clients) threads, descriptors and memory per session and the set-up rate"
          + " against bare mutual TLS 1.3 handshakes, with a verdict per issue 17 target;"
          + " --host-process runs the host in a child JVM, each side measured in its own process.",
      ""
    },
    footer = {
      "",
      "Exit status: 0 measured (transports unavailable here are listed with the reason),"
          + " 1 a run failed, 2 bad options, 3 every selected transport unavailable.",
      "With --load: 0 passed, 1 an unintended error or memory/descriptor/thread growth after"
          + " the warm-up beyond the documented thresholds, 2 bad options.",
      "Example: srdma bench --quick --sizes 64,4KiB --transports tls-jdk,plain-write --json r.json",
      "Example: srdma bench --load --sessions 500 --tenants 20 --grants 10500 --duration 60s"
    })
public final class BenchCommand implements Callable<Integer> {
  static final String DEFAULT_SIZES = "64,4096,65536,1048576";
  static final int MIN_SIZE = Payload.MIN_SIZE;

  @Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--sizes",
      split = ",",
      paramLabel = "SIZE",
      defaultValue = DEFAULT_SIZES,
      converter = SizeConverter.Int.class,
      description =
          "Message sizes, comma separated, like 64, 4KiB, 1MiB or 10kB: KiB/MiB are powers of"
              + " 1024, kB/MB of 1000 (docs/units.md) (default: ${DEFAULT-VALUE}). "
              + MIN_SIZE
              + " B to 64 MiB.")
  List<Integer> sizes;

  @Option(
      names = "--duration",
      paramLabel = "TIME",
      converter = DurationConverter.class,
      description =
          "Length of each measured run, per size per transport (throughput and latency each)"
              + " (default: 3s; --quick: 1s). Like 500ms, 3s, 1m.")
  Duration duration;

  @Option(
      names = "--warmup",
      paramLabel = "TIME",
      converter = DurationConverter.class,
      description =
          "Length of each warm-up run before measuring, 0 for none (default: 1s; --quick: 250ms).")
  Duration warmup;

  @Option(
      names = "--transports",
      split = ",",
      paramLabel = "NAME",
      description =
          "Transports to run, comma separated, in table order (default: all: ${COMPLETION-CANDIDATES}).",
      completionCandidates = TransportNames.class)
  List<String> transports;

  @Option(
      names = "--provider",
      paramLabel = "NAME",
      defaultValue = "soft",
      description =
          "RDMA provider for plain-write (and sealed): soft, ibv, loopback or auto (default: ${DEFAULT-VALUE}).")
  String provider;

  @Option(
      names = "--aead",
      paramLabel = "MODE",
      description =
          "AES-256-GCM of the sealed data path: auto (of the JDK's, ACCP's, OpenSSL"
              + " libcrypto's, libgcrypt's and intel-ipsec-mb's, by a known-answer test and a"
              + " rate check at"
              + " start-up, the fastest for small records and the fastest for large ones, which"
              + " may be two), jdk, accp, openssl, gcrypt or ipsec-mb (one for every record; an error"
              + " when it"
              + " is unavailable)"
              + " (default: the srdma.aead property, else SRDMA_AEAD, else auto).")
  String aead;

  @Option(
      names = "--depth",
      paramLabel = "N|auto",
      defaultValue = "auto",
      description =
          "Pipeline depth: messages outstanding (sent, not yet delivered) at once in throughput"
              + " runs of plain-write and sealed: 1 to 1024 at every size, or auto: up to 256 KiB"
              + " of messages in flight, 16 to 256 messages (256 up to 1 KiB, 64 at 4 KiB, 16 from"
              + " 16 KiB), as TLS's stream keeps its socket buffers in flight (default:"
              + " ${DEFAULT-VALUE}). Latency runs use 1.")
  String depthText;

  @Option(
      names = "--coalesce",
      paramLabel = "N",
      defaultValue = "1",
      description =
          "Throughput runs send up to N messages that follow each other as one unit, at most"
              + " 64 KiB: sealed as one record (contiguous pieces of one batch write, one AES-GCM"
              + " operation), plain-write as one WRITE, tls-jdk as one write call; tls-netty always"
              + " flushes every 16 (its own coalescing). Every message is still counted and its"
              + " sequence number checked. Latency runs send one at a time. 1 = each message on"
              + " its own (default: ${DEFAULT-VALUE}). 1 to 1024.")
  int coalesce;

  @Option(
      names = "--writer-cpus",
      paramLabel = "LIST",
      description =
          "Run the writing side on these CPUs (a Linux CPU list: 0, 0-1, 0,2): the thread that"
              + " writes and every thread it starts (client completion lanes and soft responders,"
              + " Netty's sender loop). Same for every transport. Default: unpinned.")
  String writerCpus;

  @Option(
      names = "--receiver-cpus",
      paramLabel = "LIST",
      description =
          "Run the receiving side's threads on these CPUs: for sealed the host's openers and soft"
              + " responders (HostOptions.openerCpus, DeviceOptions.responderCpus), for plain-write"
              + " the receiving device's responders and receiver thread, for tls-jdk the receiver"
              + " thread, for tls-netty the server's event loop. Default: unpinned.")
  String receiverCpus;

  @Option(
      names = "--receive-progress",
      paramLabel = "MODE",
      defaultValue = "poller",
      description =
          "Who places the receiving side's incoming requests on the soft provider: poller (the"
              + " thread that polls the completion queue: sealed's openers, plain-write's receiver"
              + " thread; the host's default, HostOptions.openerProgress) or device (the soft"
              + " device's responder threads, which wake the poller). Same for sealed and"
              + " plain-write (default: ${DEFAULT-VALUE}).")
  String receiveProgress;

  @Option(
      names = "--rounds",
      paramLabel = "N",
      defaultValue = "1",
      description =
          "Run the whole comparison N times, one round after another, and add a summary: per"
              + " transport and size the median and range over the rounds, with each ratio taken"
              + " within one round (default: ${DEFAULT-VALUE}). 1 to 100. For noisy machines.")
  int rounds;

  @Option(
      names = "--json",
      paramLabel = "FILE",
      description =
          "Also write every result, machine-readable, to FILE (with --load: the load run's"
              + " figures, per side, and issue 17's targets).")
  Path json;

  @Option(
      names = "--quick",
      description = "Short runs for a smoke test: --duration 1s --warmup 250ms.")
  boolean quick;

  @Option(
      names = "--verify",
      description =
          "Checksum (CRC32C) every message on both sides in the measured runs too; costs CPU, so"
              + " figures are lower. Sequence numbers are always checked.")
  boolean verify;

  @Option(
      names = "--progress",
      paramLabel = "MODE",
      defaultValue = "auto",
      description =
          "Progress on stderr: auto (a bar when on a terminal, else lines), bar, lines or none"
              + " (default: ${DEFAULT-VALUE}).")
  Progress.Mode progressMode;

  @Mixin LoadOptions loadOptions = new LoadOptions();

  @Override
  public Integer call() throws Exception {
    CommandLine cl = spec.commandLine();
    LoadConfig load = null;
    Comparison comparison = null;
    if (loadOptions.load) {
      load = loadOptions.config(cl, duration, warmup, provider, json);
    } else {
      if (loadOptions.hostProcess) {
        throw new ParameterException(cl, "--host-process applies to --load only");
      }
      if (loadOptions.openerThreads != 0) {
        throw new ParameterException(cl, "--opener-threads applies to --load only");
      }
      comparison = Comparison.of(this);
    }
    PrintWriter out = cl.getOut();
    PrintWriter err = cl.getErr();
    AeadSelection.Choice cipher;
    try {
      cipher = chooseAead();
    } catch (AeadException e) {
      err.println("bench: " + e.getMessage());
      return 1;
    }
    String command = String.join(" ", cl.getParseResult().originalArgs());
    return load != null
        ? LoadBench.run(load, cipher, json, command, out, err)
        : BenchRounds.run(comparison, cipher, command, out, err);
  }

  /** The process's data-path AEAD: {@code --aead}, else the property or environment, else auto. */
  private AeadSelection.Choice chooseAead() {
    if (aead == null) {
      return AeadSelection.current();
    }
    return AeadSelection.select(AeadSelection.Mode.parse(aead, "--aead"));
  }

  /** The transport names for {@code --help}. */
  static final class TransportNames extends ArrayList<String> {
    TransportNames() {
      super(Transports.REGISTRY.keySet());
    }
  }
}
