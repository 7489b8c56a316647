package io.srdma.examples.kvcache;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.ClientOptions;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A trainer of tenant {@code acme} pushing KV-cache shards into the host's {@code kvcache} region
 * through the tenant SDK, the way an application outside this repository uses it.
 *
 * <p>It connects with its own certificate to the one host it means (pinned by name), asks for a
 * WRITE grant covering the shards, writes them sealed (asynchronously, then waits for every write
 * with a bound), asks for a READ grant on the first shard and reads it back, releases both grants
 * and closes. The host opens every record it is told of; a record that did not open would be
 * audited as an access violation (examples/run.sh checks the audit log for that).
 *
 * <p>Reading back: a READ grant opens only <em>owner records</em>, which the host seals for
 * readers ({@code HostedRegion.seal}); a record a peer wrote is sealed with that peer's session
 * key and never opens as the host's. {@code srdma serve} seals nothing for readers today, so the
 * read of the first shard must be refused with {@code RECORD_REJECTED}: that is what this example
 * checks, and any other outcome (data, or another error) is a failure.
 *
 * <p>Usage: {@code KvCacheTrainer --host HOST:PORT --host-name NAME --cert FILE --key FILE
 * --ca-cert FILE --crl FILE [--shards N] [--shard-bytes N]}. Exit status 0 when every step did what
 * it should, 1 when one failed (the reason on standard error), 2 for bad arguments.
 */
public final class KvCacheTrainer {
  private static final String REGION = "kvcache";
  private static final Duration TTL = Duration.ofMinutes(2);
  private static final long WAIT_SECONDS = 30;

  private KvCacheTrainer() {}

  public static void main(String[] args) {
    Map<String, String> opts;
    try {
      opts = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("kv-cache: " + e.getMessage());
      System.exit(2);
      return;
    }
    try {
      run(opts);
      System.exit(0);
    } catch (ChannelException e) {
      System.err.println(
          "kv-cache: FAILED: "
              + e.reason()
              + (e.detail() == null ? "" : " (" + e.detail() + ")")
              + ": "
              + e.getMessage());
    } catch (RuntimeException | InterruptedException | ExecutionException | TimeoutException e) {
      System.err.println("kv-cache: FAILED: " + e);
    }
    System.exit(1);
  }

  private static void run(Map<String, String> o)
      throws InterruptedException, ExecutionException, TimeoutException {
    int shards = Integer.parseInt(o.getOrDefault("shards", "8"));
    int shardBytes = Integer.parseInt(o.getOrDefault("shard-bytes", "262144"));
    if (shards < 1 || shards > 64 || shardBytes < 1 || shardBytes > (1 << 20)) {
      throw new IllegalArgumentException("--shards 1..64 and --shard-bytes 1..1048576");
    }
    ClientOptions options =
        new ClientOptions()
            .credential(Credential.load(Path.of(o.get("cert")), Path.of(o.get("key")), null))
            .trust(DeploymentTrust.load(Path.of(o.get("ca-cert")), Path.of(o.get("crl"))))
            .host(address(o.get("host")))
            .hostName(o.get("host-name"));

    // Each shard is sealed into records of at most 64 KiB; its place in the region is the sealed
    // length, so the shards sit one after the other without overlapping.
    long stride = SealedLayout.sealedLength(shardBytes, SealedLayout.DEFAULT_MAX_RECORD_PAYLOAD);
    long total = stride * shards;

    try (SecureRdmaClient client = SecureRdmaClient.connect(options)) {
      client.onSessionLost(e -> System.err.println("kv-cache: session lost: " + e.getMessage()));
      System.out.println("kv-cache: connected as " + client.identity() + " to " + o.get("host"));

      RemoteGrant write = client.grant(REGION, EnumSet.of(Access.WRITE), 0, total, TTL);
      long started = System.nanoTime();
      List<CompletionStage<Void>> inFlight = new ArrayList<>(shards);
      for (int i = 0; i < shards; i++) {
        inFlight.add(write.write(i * stride, ByteBuffer.wrap(shard(i, shardBytes))));
      }
      for (CompletionStage<Void> w : inFlight) {
        w.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
      }
      long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - started);
      System.out.printf(
          "kv-cache: wrote %d shards of %d bytes (%d sealed bytes, grant %d) in %.1f ms%n",
          shards, shardBytes, total, write.id(), micros / 1000.0);

      RemoteGrant read = client.grant(REGION, EnumSet.of(Access.READ), 0, stride, TTL);
      int span = (int) Math.min(stride, SealedLayout.ownerSealedLength(4096, 64 * 1024));
      try {
        ByteBuffer got = read.readBlocking(0, span);
        throw new IllegalStateException(
            "the read opened "
                + got.remaining()
                + " bytes of a record this peer wrote as the host's: that must never happen");
      } catch (ChannelException e) {
        if (e.reason() != ChannelException.Reason.RECORD_REJECTED) {
          throw e;
        }
        System.out.println(
            "kv-cache: read-back refused RECORD_REJECTED, as it must be: a peer's records never"
                + " open as the host's, and srdma serve seals no data for readers");
      }

      read.release().toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
      write.release().toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
      System.out.println("kv-cache: OK");
    }
  }

  /** Deterministic contents, so that a run can be compared with another. */
  private static byte[] shard(int index, int bytes) {
    byte[] b = new byte[bytes];
    new SplittableRandom(0x5eed + index).nextBytes(b);
    return b;
  }

  private static InetSocketAddress address(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon < 1) {
      throw new IllegalArgumentException("--host must be HOST:PORT, got " + hostPort);
    }
    String host = hostPort.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new InetSocketAddress(host, Integer.parseInt(hostPort.substring(colon + 1)));
  }

  private static Map<String, String> parse(String[] args) {
    List<String> required = List.of("host", "host-name", "cert", "key", "ca-cert", "crl");
    List<String> known = new ArrayList<>(required);
    known.add("shards");
    known.add("shard-bytes");
    Map<String, String> o = new HashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      String name = args[i].startsWith("--") ? args[i].substring(2) : "";
      if (!known.contains(name) || i + 1 >= args.length) {
        throw new IllegalArgumentException("unknown or incomplete option " + args[i] + usage());
      }
      o.put(name, args[i + 1]);
    }
    for (String r : required) {
      if (!o.containsKey(r)) {
        throw new IllegalArgumentException("missing --" + r + usage());
      }
    }
    return o;
  }

  private static String usage() {
    return "\nusage: KvCacheTrainer --host HOST:PORT --host-name NAME --cert FILE --key FILE"
        + " --ca-cert FILE --crl FILE [--shards N] [--shard-bytes N]";
  }
}
